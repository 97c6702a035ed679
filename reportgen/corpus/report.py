"""The corpus's human report (docs/calibration.md) and its NOTICE, written from the curves and the cells alone, so
that they are regenerated with the table and never edited by hand (docs/methods.md#the-calibration-corpus)."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Sequence
from statistics import median

from reportgen.analysis.measured.conformal import BUCKET_WORDS, Cell
from reportgen.corpus.cases import CaseRow
from reportgen.corpus.curve import Curve
from reportgen.corpus.table import Corpus

RECIPE = """\
## Adding a curve

1. Write one file, `reportgen/corpus/curves/<id>.yaml`, with the curve's source (repository, commit and paths, or
   the paper and its table), licence, hardware, workload, unit and every measured repeat at each scale
   ([the corpus](methods.md#the-calibration-corpus) says what qualifies and how values are read).
2. Run `make corpus`. It checks every curve (all problems at once, each with its file, line, column and field),
   holds each curve out in turn, and rewrites `calibration.json`, `cases.csv`, `NOTICE` and this page.
3. Commit the curve with the regenerated files. `make test` runs `reportgen calibrate --check`, which fails when
   they no longer match the curves or the predictors.

That is the whole recipe: nothing else names a curve.
"""


def calibration_markdown(corpus: Corpus, cells: dict[str, Cell], rows: Sequence[CaseRow]) -> str:
    """docs/calibration.md: each cell's counts and status, the cases by source and by kind, each curve's source."""
    lines = ["# How accurate each prediction is: the corpus", "",
             "<!-- Written by `reportgen calibrate` (make corpus); do not edit by hand. -->", "",
             f"{len(corpus.curves)} published curves. Each is held out in turn: its largest one or two scales are "
             "hidden and predicted from the rest by the functions a build calls, and each kind of prediction is "
             "graded per extrapolation bucket ([how](methods.md#how-accurate-each-prediction-is)).", "",
             f"Corpus SHA-256: `{corpus.sha256}`", "", "## Cells", "",
             "| cell | cases | covered (raw) | covered (calibrated) | factor | median error | bias | status |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for key, cell in cells.items():
        factor = "—" if cell.factor is None else f"{cell.factor:.3g}"
        lines.append(f"| `{key}` ({_bucket_words(key)}) | {cell.cases} | {cell.covered_raw} | {cell.covered} | "
                     f"{factor} | {_percent(cell.median_abs_rel_error)} | {_percent(cell.bias, signed=True)} | "
                     f"{cell.status} |")
    lines += ["", "Covered (raw): the measurement inside the prediction's own interval (a point prediction: within "
              "25 %). Covered (calibrated): inside the calibrated interval computed without that curve.", "",
              "## By source and by kind (reported only)", "", "| group | cases | within 25 % | median error |",
              "|---|---:|---:|---:|"]
    groups: dict[str, list[float]] = defaultdict(list)
    by_id = corpus.by_id
    for row in rows:
        if row.used and row.rel_error is not None:
            curve = by_id[row.curve]
            error = abs(row.rel_error)
            groups[f"source: {curve.source.name}"].append(error)
            groups[f"kind: {curve.workload.kind}"].append(error)
    for group, errors in sorted(groups.items()):
        within = sum(1 for error in errors if error <= 0.25)
        lines.append(f"| {group} | {len(errors)} | {within} | {_percent(median(errors))} |")
    lines += ["", "## Curves", "", "| curve | source | licence | system | workload | scales | read |",
              "|---|---|---|---|---|---|---|"]
    for loaded in corpus.curves:
        curve = loaded.curve
        scales = ", ".join(f"{nodes:g}" for nodes in curve.scales())
        assumed = " (a value assumed)" if loaded.assumed else ""
        lines.append(f"| `{curve.id}` | {_citation(curve)} | {curve.source.licence} | {curve.hardware.name} | "
                     f"{curve.workload.name}{assumed} | {scales} | {curve.source.read} |")
    return "\n".join([*lines, "", RECIPE])


def notice(corpus: Corpus) -> str:
    """NOTICE: every source with its licence; the curves hold only numbers and citations from them (each curve
    file names the files it read)."""
    sources: dict[str, set[str]] = defaultdict(set)
    for loaded in corpus.curves:
        curve = loaded.curve
        source = curve.source
        where = f"{source.repo} @ {(source.commit or '')[:8]}" if source.paper is None else _citation(curve)
        sources[f"{where} — licence: {source.licence}"].add(curve.id)
    lines = ["The calibration corpus (reportgen/corpus/curves/) holds measured numbers read from the public sources",
             "below, each cited in its curve file. Only numbers and citations are kept: no text, log, table or image",
             "of a source is copied. A source marked none-stated publishes no licence; its numbers are cited facts.",
             ""]
    for cited, ids in sorted(sources.items()):
        lines.append(f"- {cited}\n  curves: {', '.join(sorted(ids))}")
    return "\n".join(lines) + "\n"


def _percent(share: float, *, signed: bool = False) -> str:
    """A share as the report writes one: "4.6 %", "−2.5 %"."""
    sign = "−" if share < 0 else "+" if signed else ""
    return f"{sign}{abs(share) * 100:.1f} %"


def _citation(curve: Curve) -> str:
    source = curve.source
    if source.paper is not None:
        paper = source.paper
        where = paper.doi or paper.arxiv or paper.url or ""
        return f"{paper.authors}, \"{paper.title}\" ({paper.year}) {where}, {paper.locator}"
    commit = (source.commit or "")[:8]
    paths = source.paths or ()
    if len(paths) <= 2:
        return f"{source.repo} @ {commit}: {', '.join(paths)}"
    folder = posixpath.commonpath(paths)  # a run's many result files: their folder, and how many (the curve lists each)
    return f"{source.repo} @ {commit}: {folder}/ ({len(paths)} files)"


def _bucket_words(key: str) -> str:
    bucket = key.split("/")[1]
    words = str(BUCKET_WORDS.get(bucket, bucket))  # type: ignore[call-overload]
    return words + (", batch changes" if key.endswith("/batch-changes") else "")
