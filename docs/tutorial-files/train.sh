#!/bin/sh
# A stand-in for a profiled training job, so that the tutorial runs anywhere: it works for a moment, then leaves
# the profiler traces a DDP job over gloo writes (one per rank, in the shape torch.profiler writes them) in ./traces.
# Usage: ./train.sh RANKS (1 or 2)
sleep 1
rm -rf traces && mkdir traces && cp "$(dirname "$0")/sample-traces/$1-rank/"*.json traces/
