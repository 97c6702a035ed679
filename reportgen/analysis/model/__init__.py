"""The design's models, before any run is measured: the communication patterns and their α–β costs
(`patterns.py`, `prediction.py`), the fits of the scaling laws (`fits.py`: Amdahl, the USL, α–β from nccl-tests),
a transformer's FLOPs and memory (`transformer.py`, `model_shape.py`), a layout's memory per device and its step
(`layout_memory.py`, `layout_search.py`, `micro_batch.py`, `columns.py`, `layout.py`), the failure model
(`reliability.py`: Young and Daly's checkpoint interval and its overhead), a service's replica (`replica.py`)
and the resource ceilings with the axis that cures each (`ceilings.py`).
Nothing here reads a measured run; everything above reads these models. (docs/architecture.md#the-analysis-layers)
"""
