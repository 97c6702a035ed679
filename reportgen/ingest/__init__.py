"""Readers of measurements behind `reportgen measure` and `reportgen ingest`: CodeCarbon runs, profiler traces,
nccl-tests tables and CodeCarbon logs, each turned into rows of a project's CSV."""
