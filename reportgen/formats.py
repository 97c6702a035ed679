"""The output formats, once: what `build` and `watch` write (and reportgen.build from Python), and what `diff`
writes. The command line, the pipeline's defaults and the Python API all read them here."""

from __future__ import annotations

FORMATS = ("html", "pdf", "json", "csv")  # a build's
DEFAULT_FORMATS = ("html", "pdf", "json")
DIFF_FORMATS = ("html", "pdf", "json", "md")  # a diff's (its default: every one)
HISTORY_FORMATS = ("html", "json", "md")  # a history's (its default: every one)
PAPERS = ("a4", "letter")  # the PDF's paper sizes (the first is the default)
SERVING_PRINTED = ("table", "json")  # what `ingest serving` prints
# the files `ingest serving` reads: per-request records (reportgen.ingest.request_records), then summaries
# (reportgen.ingest.serving_bench); --format names one, which detection then only confirms
SERVING_FILE_FORMATS = ("vllm-detailed", "guidellm", "aiperf-records", "inference-perf-records", "vllm-json",
                        "vllm-summary", "mlperf-loadgen", "aiperf-aggregate", "inference-perf-summary", "br-0.2")
