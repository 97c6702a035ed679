"""`reportgen calibrate`: the calibration table recomputed from the corpus of published curves, written byte for
byte the same on any machine, or checked against the committed one (docs/methods.md#the-calibration-corpus)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from reportgen.commands import console
from reportgen.commands.argtree import Subcommands
from reportgen.errors import ExitCode, printable

PACKAGE = Path(__file__).resolve().parents[1]
CORPUS = PACKAGE / "corpus"
# The human report lives with the documentation of a source checkout (an installed package has none)
DOCS_REPORT = PACKAGE.parent / "docs" / "calibration.md"
BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
TABLE, CASES, NOTICE = "calibration.json", "cases.csv", "NOTICE"


def add_parser(commands: Subcommands) -> None:
    calibrate = commands.add_parser(
        "calibrate", help="recompute how accurate each prediction is, from the corpus of published curves",
        description="Hold out each published curve of the corpus in turn, hide its largest one or two scales, "
        "predict them from the rest with the functions a build calls, and write the calibration table a build "
        "reads (calibration.json), every case (cases.csv), the sources' NOTICE and docs/calibration.md. The bytes "
        "are the same on any machine and with any --jobs. `make corpus` runs it.")
    calibrate.add_argument("--corpus", type=Path, default=CORPUS / "curves", metavar="DIR",
                           help="the curve files (default: the package's reportgen/corpus/curves)")
    calibrate.add_argument("--out", type=Path, default=CORPUS, metavar="DIR",
                           help="where calibration.json, cases.csv and NOTICE go (default: the package's "
                           "reportgen/corpus)")
    calibrate.add_argument("--report", type=Path, default=DOCS_REPORT if DOCS_REPORT.parent.is_dir() else None,
                           metavar="FILE", help="the human report (default: docs/calibration.md of a source "
                           "checkout; none when installed)")
    calibrate.add_argument("--check", action="store_true",
                           help="recompute in memory and compare with the files; exit 1 naming the first that "
                           "differs")
    calibrate.add_argument("--jobs", type=int, default=1, metavar="N",
                           help="processes to compute the cases with (the output does not depend on it)")


def run(arguments: argparse.Namespace) -> int:
    if _from_the_command_line() and any(name not in os.environ for name in BLAS_THREADS):
        # one BLAS thread: the same sums on every machine (numpy reads these once, as it is imported)
        env = {**os.environ, **{name: os.environ.get(name, "1") for name in BLAS_THREADS}}
        os.execve(sys.executable, [sys.executable, "-m", "reportgen", *sys.argv[1:]], env)
    from reportgen.corpus.report import calibration_markdown, notice
    from reportgen.corpus.table import cases_csv, cells_of, compute_cases, dumps, load_corpus, table_document
    from reportgen.files import make_folder, replace_file

    started = time.perf_counter()
    corpus = load_corpus(arguments.corpus, display_root=Path.cwd())
    console.say(f"calibrate: {len(corpus.curves)} curves; holding each out …")
    rows = compute_cases(corpus, jobs=max(1, min(arguments.jobs, os.cpu_count() or 1, len(corpus.curves))))
    cells = cells_of(rows)
    files: dict[Path, str] = {arguments.out / TABLE: dumps(table_document(corpus, cells)),
                              arguments.out / CASES: cases_csv(rows), arguments.out / NOTICE: notice(corpus)}
    if arguments.report is not None:
        files[arguments.report] = calibration_markdown(corpus, cells, rows)
    took = time.perf_counter() - started
    if arguments.check:
        for path, text in files.items():
            written = path.read_text(encoding="utf-8") if path.is_file() else None
            if written != text:
                print(printable(f"reportgen calibrate --check: {path} differs from the corpus"
                                f"{_first_cell(written, text)}; run `make corpus` and commit the result"),
                      file=sys.stderr)
                return int(ExitCode.FAILURE)
        console.say(f"calibrate --check: {len(files)} files match {len(corpus.curves)} curves ({took:.1f} s)")
        return int(ExitCode.OK)
    for path, text in files.items():
        make_folder(path.parent)
        replace_file(path, text.encode("utf-8"))
    used = sum(1 for row in rows if row.used)
    console.say(f"calibrate: {len(corpus.curves)} curves, {used} cases in {len(cells)} cells; wrote "
                f"{', '.join(str(path) for path in files)} in {took:.1f} s")
    return int(ExitCode.OK)


def _from_the_command_line() -> bool:
    """This process is `reportgen calibrate` itself (not a caller of main(), which a new process would replace)."""
    return Path(sys.argv[0]).name in ("reportgen", "__main__.py") and "calibrate" in sys.argv[1:]


def _first_cell(written: str | None, text: str) -> str:
    """Where two versions first part: the line, and the cell it belongs to when it is the table."""
    if written is None:
        return " (missing)"
    old, new = written.splitlines(), text.splitlines()
    line = next((index for index, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    cell = next((row.strip().split('"')[1] for row in reversed(new[:line + 1]) if row.startswith('  "')
                 and row.rstrip().endswith("{")), None)
    return f" at line {line + 1}" + (f" (cell {cell})" if cell else "")
