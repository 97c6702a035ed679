"""WeasyPrint imported without the compiler and linker runs of ctypes.util.find_library, and with them when a
library is only found that way (reportgen.render.weasyprint_import). Each case is a fresh interpreter: WeasyPrint
is imported once per process."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = [
    pytest.mark.slow,  # two fresh imports of WeasyPrint: see docs/testing.md
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fast lookup is Linux's"),
]

_COUNT_LOOKUPS = """
import ctypes.util
lookups = []
original = ctypes.util.find_library
ctypes.util.find_library = lambda name: lookups.append(name) or original(name)
"""


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)


def test_weasyprint_is_imported_without_looking_a_library_up() -> None:
    done = _run(_COUNT_LOOKUPS + """
from reportgen.render.weasyprint_import import import_weasyprint
weasyprint = import_weasyprint()
assert weasyprint.HTML(string="<p>x</p>").write_pdf().startswith(b"%PDF")
import ctypes.util
assert ctypes.util.find_library is not None and ctypes.util.find_library.__name__ == "<lambda>", "restored"
print(len(lookups))
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "0\n", "not one library looked up (each lookup runs ldconfig, gcc and ld)"


def test_a_library_only_the_full_lookup_finds_is_found_and_nothing_is_printed() -> None:
    """Pango installed under a soname WeasyPrint does not list: only find_library("pango-1.0") finds it."""
    done = _run(_COUNT_LOOKUPS + """
import cffi.api
load = cffi.api._load_backend_lib
def pango_elsewhere(backend, name, flags):
    if name == "libpango-1.0.so.0":
        raise OSError(f"cannot open shared object file: {name}")
    return load(backend, name, flags)
cffi.api._load_backend_lib = pango_elsewhere
from reportgen.render.weasyprint_import import import_weasyprint
weasyprint = import_weasyprint()
assert weasyprint.HTML(string="<p>x</p>").write_pdf().startswith(b"%PDF")
assert "pango-1.0" in lookups, "the full lookup ran"
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", "WeasyPrint's installation help is not printed when the full lookup finds the library"
