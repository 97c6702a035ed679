"""nccl-tests output: its table read, wrong results refused, collectives appended, the size-aware α/B fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.fits import fit_alpha_bandwidth
from reportgen.commands.cli import main
from reportgen.errors import InputError
from reportgen.ingest.nccltests import read_nccl_tests
from reportgen.project.loader import load_project
from tests.conftest import DATA, make_project

# all_reduce_perf on 2 hosts × 8 H100, out-of-place times as published (the header of the file says what is derived)
PUBLISHED = DATA / "nccl" / "all_reduce_perf-2x8-h100.txt"
SIZES = (8, 1 << 20, 16 << 20, 32 << 20, 256 << 20, 1 << 30, 8 << 30)
TIMES_US = (135.8, 203.2, 977.6, 1059.9, 2360.9, 6759.0, 47535.0)


def test_the_out_of_place_time_of_every_size_is_read() -> None:
    table = read_nccl_tests(PUBLISHED)
    assert [(t.bytes, t.time_us) for t in table.timings] == list(zip(SIZES, TIMES_US, strict=True))


def test_wrong_results_are_refused_where_they_stand(tmp_path: Path) -> None:
    lines = PUBLISHED.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.strip().startswith("268435456"))
    cells = lines[row].split()
    cells[8] = "3"  # #wrong of the out-of-place run
    lines[row] = "  " + "  ".join(cells)
    (tmp_path / "bad.txt").write_text("\n".join(lines))
    with pytest.raises(InputError) as caught:
        read_nccl_tests(tmp_path / "bad.txt")
    column = lines[row].index("  3  ") + 3
    assert f"bad.txt:{row + 1}:{column}: error: #wrong = 3" in str(caught.value)
    (tmp_path / "empty.txt").write_text("# nothing here\n")
    with pytest.raises(InputError, match="no nccl-tests table"):
        read_nccl_tests(tmp_path / "empty.txt")


def test_the_size_aware_fit_by_hand() -> None:
    # 14 GB is nearest 8 GiB on a log scale; one size is not a line, so the two largest: 1 GiB and 8 GiB.
    # p = 2: t = α + n / B, so 1/B = (47,535 − 6,759) µs / (8 GiB − 1 GiB) and α = 6,759 µs − 1 GiB / B
    fit = fit_alpha_bandwidth([2] * 7, [float(s) for s in SIZES], [t * 1e-6 for t in TIMES_US], message_bytes=14e9)
    inverse = (47535 - 6759) * 1e-6 / ((8 << 30) - (1 << 30))
    assert fit.bandwidth_bytes_per_s == pytest.approx(1 / inverse)  # about 184 GB/s
    assert fit.alpha_s == pytest.approx(6759e-6 - (1 << 30) * inverse)
    assert fit.beta_s == pytest.approx(14e9 * inverse) and fit.min_bytes == 1 << 30 and fit.residual_s == 0.0
    # a floor of 32 MiB: least squares over four sizes, as numpy's line fit gives it
    floor = fit_alpha_bandwidth([2] * 7, [float(s) for s in SIZES], [t * 1e-6 for t in TIMES_US],
                                message_bytes=14e9, min_bytes=32 << 20)
    slope, intercept = np.polyfit(np.array(SIZES[3:], dtype=float), np.array(TIMES_US[3:]) * 1e-6, 1)
    assert floor.points == 4 and floor.alpha_s == pytest.approx(intercept)
    assert floor.bandwidth_bytes_per_s == pytest.approx(1 / slope) and floor.residual_s > 0


def test_collectives_land_in_the_project_and_the_prediction_uses_them(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: N}\nhardware: {network_bandwidth: 400 GB/s, network_latency: 5 us}\n"
                       "prediction: {t_comp: 26.6 s, message_bytes: 14 GB, collectives_file: collectives.csv}\n")
    assert main(["ingest", "nccl-tests", str(PUBLISHED)]) == 0  # prints, writes nothing; the header names the hosts
    out = capsys.readouterr().out
    assert "- {nodes: 2, bytes: 8589934592 B, time: 47535 us, ranks: 16}" in out
    assert "on 2 nodes, 16 ranks (from the log's header" in out
    assert not (tmp_path / "collectives.csv").exists()
    assert main(["ingest", "nccl-tests", str(PUBLISHED), "--project", str(project)]) == 0
    lines = (tmp_path / "collectives.csv").read_text().splitlines()
    assert lines[0] == "nodes,bytes [B],time [us],ranks" and lines[1].startswith("# reportgen ingest nccl-tests: ")
    assert "sha256" in lines[1] and lines[-1] == "2,8589934592,47535,16"
    assert main(["ingest", "nccl-tests", str(PUBLISHED), "--project", str(project)]) == 2
    assert main(["ingest", "nccl-tests", str(PUBLISHED), "--nodes", "2", "--project", str(project),
                 "--replace"]) == 0
    assert (tmp_path / "collectives.csv").read_text().count("# reportgen") == 1
    prediction = analyze(load_project(project).project).prediction
    assert prediction.fit.bandwidth_bytes_per_s == pytest.approx(1.843e11, rel=1e-3)


def test_sized_collectives_need_a_message_size_and_all_or_none_sized() -> None:
    with pytest.raises(InputError, match="give message_bytes"):
        make_project("project: {title: T}\nprediction: {t_comp: 1 s, alpha: 1 us, beta: 1 ms, "
                     "collectives: [{nodes: 2, bytes: 1 GB, time: 5 ms}, {nodes: 2, bytes: 2 GB, time: 9 ms}]}\n")
    with pytest.raises(InputError, match="or none"):
        make_project("project: {title: T}\nprediction: {t_comp: 1 s, message_bytes: 1 GB, "
                     "collectives: [{nodes: 2, bytes: 1 GB, time: 5 ms}, {nodes: 4, time: 9 ms}]}\n")


def test_the_collectives_file_cannot_leave_the_project_folder(tmp_path: Path) -> None:
    (tmp_path / "outside.csv").write_text("nodes,bytes [B],time [us]\n2,8,100\n")
    inner = tmp_path / "project"
    inner.mkdir()
    (inner / "p.yaml").write_text("project: {title: T}\nprediction: {t_comp: 1 s, message_bytes: 1 GB, "
                                  "collectives_file: ../outside.csv}\n")
    with pytest.raises(InputError) as caught:
        load_project(inner / "p.yaml")
    assert caught.value.problems[0].path == "prediction.collectives_file"


def test_hosts_and_ranks_come_from_the_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = read_nccl_tests(PUBLISHED)
    assert (table.ranks, table.hosts) == (16, ("node-a", "node-b"))
    assert main(["ingest", "nccl-tests", str(PUBLISHED), "--nodes", "4"]) == 2  # contradicts the header: both named
    assert "--nodes 4 contradicts all_reduce_perf-2x8-h100.txt, whose header names 2 hosts (node-a, node-b) for 16 " \
           "ranks" in capsys.readouterr().err
    headless = tmp_path / "headless.txt"
    headless.write_text("\n".join(line for line in PUBLISHED.read_text().splitlines() if "Rank" not in line))
    assert main(["ingest", "nccl-tests", str(headless)]) == 2
    assert "give the node count with --nodes" in capsys.readouterr().err
    assert main(["ingest", "nccl-tests", str(headless), "--nodes", "2"]) == 0


def test_json_prints_the_keys_appended(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["ingest", "nccl-tests", str(PUBLISHED), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["nodes"], document["ranks"], document["hosts"]) == (2, 16, ["node-a", "node-b"])
    assert document["collectives"][-1] == {"nodes": 2, "bytes": 8589934592, "time_s": 0.047535, "ranks": 16}


@pytest.mark.parametrize(("cell", "why"), [("nan", "not a time"), ("-3.5", "not a time"), ("inf", "not a time"),
                                           ("1e400", "not a time")])
def test_a_malformed_row_is_refused_where_it_stands(tmp_path: Path, cell: str, why: str) -> None:
    lines = PUBLISHED.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.strip().startswith("268435456"))
    cells = lines[row].split()
    cells[5] = cell  # the out-of-place time
    lines[row] = "  " + "  ".join(cells)
    (tmp_path / "bad.txt").write_text("\n".join(lines))
    with pytest.raises(InputError, match=f"bad.txt:{row + 1}:"):
        read_nccl_tests(tmp_path / "bad.txt")
    lines[row] = "  268435456  67108864  float"  # a row cut short: refused, never dropped
    (tmp_path / "short.txt").write_text("\n".join(lines))
    with pytest.raises(InputError, match=f"short.txt:{row + 1}:1: error: a row of 3 cells"):
        read_nccl_tests(tmp_path / "short.txt")


def test_the_fitted_bandwidth_is_also_given_as_the_logs_bus_bandwidth(tmp_path: Path) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: N}\nhardware: {network_bandwidth: 400 GB/s, network_latency: 5 us}\n"
                       "prediction: {t_comp: 26.6 s, message_bytes: 14 GB, collectives_file: collectives.csv}\n")
    assert main(["ingest", "nccl-tests", str(PUBLISHED), "--project", str(project), "-q"]) == 0
    prediction = analyze(load_project(project).project).prediction
    bandwidth = prediction.fit.bandwidth_bytes_per_s
    # 16 ranks on 2 nodes: busbw = B × (15/16) / (1/2) = 1.875 B, about 346 GB/s beside the log's 339 at 8 GiB
    [bus] = prediction.bus_bandwidths
    assert (bus.nodes, bus.ranks, bus.bytes_per_s) == (2, 16, pytest.approx(1.875 * bandwidth))
