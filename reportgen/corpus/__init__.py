"""The calibration corpus: published scaling measurements as YAML curves, and the readers that made them."""
