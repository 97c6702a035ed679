"""The goal judged: the verdict at the plan per price regime (`goal.py`), a service's load within its
latency objective (`serving.py`, with the latency vocabulary of `objectives.py`), the values at which the verdict
flips (`levers.py`, whose records are `lever_records.py`), the verdict box's state (`verdict_state.py`), one
recommendation per deployment context (`decisions.py`), the plan past the measured peak (`peak.py`) and the design
checklist (`checklist.py`). (docs/architecture.md#the-analysis-layers)
"""
