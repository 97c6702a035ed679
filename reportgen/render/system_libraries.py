"""The system libraries the PDF needs (Pango and the libraries WeasyPrint opens with it, and at least one font),
checked before any work starts, so that a machine without them gets one line that says what to install, never
WeasyPrint's banner and a worker's traceback halfway through a build (docs/methods.md#system-libraries)."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Library:
    name: str  # as a user knows it
    linux: str  # the soname dlopen opens on Linux (WeasyPrint's own choice among its names)
    darwin: str  # the library's name on macOS (Homebrew)


# The libraries WeasyPrint's text layer opens at import, in its order; the optional HarfBuzz parts are left out
LIBRARIES = (
    Library("GObject", "libgobject-2.0.so.0", "libgobject-2.0.0.dylib"),
    Library("Pango", "libpango-1.0.so.0", "libpango-1.0.dylib"),
    Library("HarfBuzz", "libharfbuzz.so.0", "libharfbuzz.0.dylib"),
    Library("Fontconfig", "libfontconfig.so.1", "libfontconfig.1.dylib"),
    Library("PangoFT2", "libpangoft2-1.0.so.0", "libpangoft2-1.0.dylib"),
)

INSTALL = ("install them with `apt install libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core` (Debian, Ubuntu), "
           "`dnf install pango dejavu-sans-fonts` (Fedora) or `brew install pango` (macOS)")


def _open(name: str) -> ctypes.CDLL:
    """dlopen, as WeasyPrint will; on macOS through ctypes' search of the usual folders (Homebrew's among them)."""
    if sys.platform == "darwin":
        found = ctypes.util.find_library(name.removeprefix("lib").split(".")[0])
        return ctypes.CDLL(found or name)
    return ctypes.CDLL(name)


def missing_for_pdf() -> str | None:
    """None when the PDF can be made here; else one line naming what is missing and how to install it."""
    if sys.platform.startswith("win"):
        return None  # not a supported platform: WeasyPrint's own message stands
    absent: list[str] = []
    opened: dict[str, ctypes.CDLL] = {}
    for library in LIBRARIES:
        name = library.darwin if sys.platform == "darwin" else library.linux
        try:
            opened[library.name] = _open(name)
        except OSError:
            absent.append(f"{library.name} ({name})")
    if absent:
        return (f"the PDF needs {', '.join(absent)}, not found on this machine: {INSTALL}; or build without the "
                "PDF: --format html,json")
    if _font_count(opened["Fontconfig"]) == 0:
        return (f"the PDF needs at least one font, and Fontconfig finds none on this machine: {INSTALL}; or build "
                "without the PDF: --format html,json")
    return None


class _FontSet(ctypes.Structure):
    _fields_ = (("nfont", ctypes.c_int), ("sfont", ctypes.c_int), ("fonts", ctypes.c_void_p))


def _font_count(fontconfig: ctypes.CDLL) -> int:
    """The fonts Fontconfig lists (its cache makes this a few milliseconds); -1 when it cannot be asked."""
    try:
        fontconfig.FcInitLoadConfigAndFonts.restype = ctypes.c_void_p
        fontconfig.FcPatternCreate.restype = ctypes.c_void_p
        fontconfig.FcObjectSetBuild.restype = ctypes.c_void_p
        fontconfig.FcFontList.restype = ctypes.POINTER(_FontSet)
        fontconfig.FcFontList.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        fontconfig.FcFontSetDestroy.argtypes = (ctypes.POINTER(_FontSet),)
        for name in ("FcPatternDestroy", "FcObjectSetDestroy", "FcConfigDestroy"):
            getattr(fontconfig, name).argtypes = (ctypes.c_void_p,)
        config = fontconfig.FcInitLoadConfigAndFonts()
        pattern = fontconfig.FcPatternCreate()
        families = fontconfig.FcObjectSetBuild(b"family", None)
        fonts = fontconfig.FcFontList(config, pattern, families)
        count = fonts.contents.nfont if fonts else 0
        if fonts:
            fontconfig.FcFontSetDestroy(fonts)
        fontconfig.FcObjectSetDestroy(families)
        fontconfig.FcPatternDestroy(pattern)
        fontconfig.FcConfigDestroy(config)
        return int(count)
    except (AttributeError, OSError, ValueError):
        return -1  # an unusual Fontconfig: WeasyPrint will say what it finds
