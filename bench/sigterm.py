"""One SIGTERM at a random moment of each of many builds: `python bench/sigterm.py [--builds 50] [--seed N]`.

What a supervisor does (`timeout`, systemd, Kubernetes, a CI runner): one SIGTERM, to the build process alone or to
its whole process group as `timeout` sends it. Builds alternate between two versions of one project, so that every
build would change every output, and cycle through each output format, cold (no figure cache) and warm. After
each one this checks:

- the exit status: 143 (stopped), 0 (it finished before the signal) or death by the signal itself (it arrived
  before the command had installed its handler, during start-up; a shell shows 143 for that too);
- the outputs: each output of the build's formats is the one from before the build or the new version's, and all
  of them are one or the other together; a build that exited 0 wrote the new version;
- no temporary file anywhere under the output folder (the figure cache included);
- no process of the build left, in its process group;
- how long the command took to exit after the signal (the target: within a second).

Prints one line per build and a summary; exits 1 if any check failed. `tests/test_hostile.py` runs a few of these.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inputs" / "example.yaml"
TEMP_PREFIX = ".reportgen-"  # reportgen.files.TEMP_PREFIX: the build's temporaries
FORMATS = ("html", "pdf", "json", "csv", "html,pdf,json")
VERSIONS = ("compute: 4150", "compute: 4000")  # the two versions differ in one measured time: every output differs


@dataclass(frozen=True)
class Outcome:
    number: int
    formats: str
    warm: bool
    group: bool  # the signal went to the whole process group (as `timeout` sends it)
    delay: float
    status: int
    exit_seconds: float
    problems: tuple[str, ...]

    @property
    def stopped(self) -> bool:
        return self.status != 0

    def line(self) -> str:
        how = "group" if self.group else "pid"
        what = "finished first" if self.status == 0 else f"exit {self.status} after {self.exit_seconds:.2f} s"
        verdict = "ok" if not self.problems else "FAILED: " + "; ".join(self.problems)
        return (f"{self.number:3d}  {self.formats:<13} {'warm' if self.warm else 'cold'}  SIGTERM to {how:<5} at "
                f"{self.delay:4.2f} s: {what:<26} {verdict}")


def _command(project: Path, out: Path, formats: str, *, warm: bool) -> list[str]:
    return [sys.executable, "-m", "reportgen", "build", str(project), "-o", str(out), "--format", formats,
            *([] if warm else ["--no-cache"]), "-q"]


def _outputs(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*")) if path.is_file()} \
        if folder.is_dir() else {}


def _group_members(group: int) -> set[int]:
    """Live processes of a process group, from /proc (field 5 of /proc/PID/stat; zombies left out)."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                members.add(int(entry.name))
    return members


def references(work: Path, formats: tuple[str, ...]) -> tuple[dict[tuple[int, str], dict[str, bytes]],
                                                               dict[str, float]]:
    """The outputs of each version in each format, built without interruption, and each format's seconds (the
    slower version's)."""
    found = {}
    seconds: dict[str, float] = {}
    for version, text in enumerate(VERSIONS):
        project = work / "reference" / f"v{version}" / "project.yaml"
        project.parent.mkdir(parents=True)
        project.write_text(EXAMPLE.read_text().replace(VERSIONS[0], text))
        for chosen in formats:
            out = project.parent / chosen.replace(",", "-")
            started = time.monotonic()
            subprocess.run(_command(project, out, chosen, warm=False), cwd=ROOT, check=True)
            seconds[chosen] = max(seconds.get(chosen, 0.0), time.monotonic() - started)
            found[(version, chosen)] = _outputs(out / "project")
    return found, seconds


def one_build(number: int, formats: str, work: Path, expected: dict[tuple[int, str], dict[str, bytes]],
              generator: random.Random, *, longest: float) -> Outcome:
    """Build number `number` (its warmth and version follow from the number) in `formats`, sent SIGTERM at a
    random moment up to `longest` seconds in."""
    warm = number % 2 == 1
    group = generator.random() < 0.5
    version = number % 2
    project, out = work / "project.yaml", work / "out"
    project.write_text(EXAMPLE.read_text().replace(VERSIONS[0], VERSIONS[version]))
    if not warm:
        shutil.rmtree(out / ".cache", ignore_errors=True)
    before = _outputs(out / "project")
    delay = generator.uniform(0.0, longest)
    process = subprocess.Popen(_command(project, out, formats, warm=warm), cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(delay)
    sent = time.monotonic()
    with contextlib.suppress(ProcessLookupError):  # it finished first
        if group:
            os.killpg(process.pid, signal.SIGTERM)
        else:
            process.send_signal(signal.SIGTERM)
    _, errors = process.communicate(timeout=60)
    exit_seconds = time.monotonic() - sent
    status = process.returncode
    problems = []
    if status not in (0, 128 + signal.SIGTERM, -signal.SIGTERM):
        problems.append(f"exit status {status}")
    if b"Traceback" in errors or status not in (0, 128 + signal.SIGTERM, -signal.SIGTERM):
        said = errors.decode("utf-8", "replace").strip().splitlines()
        problems.append(f"stderr: {' | '.join(said[-12:])}")
    if status != 0 and exit_seconds > 1.0:
        problems.append(f"took {exit_seconds:.2f} s to stop")
    new = expected[(version, formats)]
    after = _outputs(out / "project")
    changed = {name for name in new if after.get(name) != before.get(name)}
    unexpected = {name for name in new if after.get(name) not in (before.get(name), new[name])}
    if unexpected:
        problems.append(f"half-written or wrong: {sorted(unexpected)}")
    elif changed and any(after.get(name) != new[name] for name in new):
        problems.append(f"a mix of old and new outputs: {sorted(changed)} new, the rest old")
    if status == 0 and any(after.get(name) != data for name, data in new.items()):
        problems.append("finished, but the outputs are not the new version's")
    temporaries = [str(p.relative_to(out)) for p in out.rglob(f"{TEMP_PREFIX}*")] if out.exists() else []
    if temporaries:
        problems.append(f"temporary files left: {temporaries}")
    deadline = time.monotonic() + 2.0
    while (left := _group_members(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if left:
        problems.append(f"processes left: {sorted(left)}")
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return Outcome(number, formats, warm, group, delay, status, exit_seconds, tuple(problems))


def run_loop(builds: int, seed: int, *, formats: tuple[str, ...] = FORMATS, longest: float | None = None,
             show: bool = False) -> list[Outcome]:
    """`builds` builds, each sent one SIGTERM at a random moment up to `longest` seconds in (by default, a little
    more than an uninterrupted cold build of the same formats takes here)."""
    generator = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="reportgen-sigterm-") as folder:
        work = Path(folder)
        expected, seconds = references(work, formats)
        outcomes = []
        for number in range(builds):
            chosen = formats[number % len(formats)]
            outcome = one_build(number, chosen, work, expected, generator,
                                longest=1.1 * seconds[chosen] if longest is None else longest)
            outcomes.append(outcome)
            if show:
                print(outcome.line(), flush=True)
        return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--longest", type=float, help="send the signal at most this many seconds into a build")
    arguments = parser.parse_args()
    outcomes = run_loop(arguments.builds, arguments.seed, longest=arguments.longest, show=True)
    failed = [o for o in outcomes if o.problems]
    stopped = [o for o in outcomes if o.stopped]
    slowest = max((o.exit_seconds for o in stopped), default=0.0)
    print(f"{len(outcomes) - len(failed)}/{len(outcomes)} passed; {len(stopped)} stopped by the signal "
          f"(slowest exit {slowest:.2f} s after it), {len(outcomes) - len(stopped)} finished first")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
