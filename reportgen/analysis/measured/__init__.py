"""The runs as measured: every measurement held against physics before anything is judged
(`reconcile.py`), the measured scaling and where each lost fold went (`scaling.py`), the resampled intervals and
the measurement planner (`confidence.py`), MFU and HFU (`utilization.py`), where each number came from
(`provenance.py`), the α–β model held against the runs (`model_check.py`) and the roofline diagnosis
(`diagnosis.py`). Reads the models below; prices nothing. (docs/architecture.md#the-analysis-layers)
"""
