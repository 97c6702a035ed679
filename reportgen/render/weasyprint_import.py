"""Importing WeasyPrint without the forty compiler and linker runs its import costs on Linux.

WeasyPrint opens each of its C libraries (GObject, Pango, HarfBuzz and its optional parts, fontconfig, PangoFT2)
by trying a list of names, the Windows ones first. cffi looks every name that does not open up with
`ctypes.util.find_library`, which on Linux runs `ldconfig -p`, then gcc (with collect2 and ld), then ld: measured
here, 0.17 s of the import's 0.53 s and 0.13 CPU-s in some forty processes, at the start of every cold build with
a PDF, before the report can be laid out. Every list also holds the library's Linux soname, which dlopen opens
directly (searching LD_LIBRARY_PATH itself), so the first attempt answers "not found" to every lookup. Should that
miss a library the full lookup would have found (one installed under another soname), WeasyPrint is imported
again with the full lookup.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from collections.abc import Iterator
from types import ModuleType

from reportgen.stand_in import standing_in


def import_weasyprint() -> ModuleType:
    """The weasyprint module: imported the fast way first, the full way only if that misses a library (see above)."""
    if "weasyprint" not in sys.modules and sys.platform.startswith("linux"):
        # WeasyPrint prints its installation help before it gives up on a library: not yet, here
        with contextlib.suppress(OSError), _no_library_lookup(), contextlib.redirect_stdout(io.StringIO()):
            return importlib.import_module("weasyprint")
    return importlib.import_module("weasyprint")


@contextlib.contextmanager
def _no_library_lookup() -> Iterator[None]:
    """`ctypes.util.find_library` finds nothing while the block runs (reportgen looks no other library up; the
    fork server of the PDF workers imports WeasyPrint with no other thread running)."""
    import ctypes.util

    with standing_in(ctypes.util, "find_library", _found_nowhere):
        yield


def _found_nowhere(name: str) -> None:
    return None
