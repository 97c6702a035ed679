"""reportgen's version, in the foundation layer: the package face (`reportgen/__init__.py`) imports the API lazily,
so a lower layer that took the version from there would point up at it."""

__version__ = "0.1.0"
