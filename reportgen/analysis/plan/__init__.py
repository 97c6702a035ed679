"""The plan search: every layout of the plan's devices (`plan_search.py`), the efficiency the measured runs
calibrate (`calibration.py`) and the layouts ranked by time and cost at it (`plan_ranking.py`).
(docs/architecture.md#the-analysis-layers)
"""
