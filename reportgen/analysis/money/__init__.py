"""What the measured runs cost: money per run and per regime (`cost.py`), energy and carbon (`energy.py`) and
the energy-delay product (`energy_delay.py`, an analysis declared in its own module). Reads the measured runs and the
failure model. (docs/architecture.md#the-analysis-layers)
"""
