"""Revisions compared: two analyses' typed results side by side (`changes.py`, `reportgen diff`) and a
history's revision records and prediction ledger (`history.py`). Above the registry, whose `Analysis` they read.
(docs/architecture.md#the-analysis-layers)
"""
