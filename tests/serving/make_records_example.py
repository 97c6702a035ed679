"""Writes inputs/chat-records.csv and its records store: the load tests of the chat-records example, made by the
stand-in server of tests/serving/simulate.py (each node one replica of 48 request slots), written as vLLM's
`bench serve --save-detailed` files and ingested with `reportgen ingest serving`, as a team would.

    python -m tests.serving.make_records_example

The numbers are ILLUSTRATIVE (the example says so): a stand-in, seeded, so that the example is the same each time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.serving.simulate import load_test

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "inputs" / "chat-records.yaml"
SLOTS_PER_NODE = 48
REQUESTS = 1500
LOADS = {2: (10.0, 20.0, 24.0, 27.0), 4: (20.0, 40.0, 50.0, 58.0)}  # request/s offered at each node count


def vllm_detailed(nodes: int, rate: float, seed: int) -> dict[str, object]:
    requests = load_test(REQUESTS, rate, slots=SLOTS_PER_NODE * nodes, seed=seed)
    ok = requests.ok
    return {"backend": "openai", "request_rate": rate, "burstiness": 1.0, "max_concurrency": None,
            "completed": int(ok.sum()), "failed": int((~ok).sum()),
            "total_output_tokens": int(requests.output_tokens[ok].sum()),
            "ttfts": requests.ttft_s.tolist(), "itls": [[] for _ in range(REQUESTS)],
            "input_lens": [256] * REQUESTS, "output_lens": [int(n) for n in requests.output_tokens],
            "errors": [""] * REQUESTS, "start_times": (5000.0 + requests.send_s).tolist(),
            "latencies": requests.e2e_s.tolist()}


def main() -> None:
    csv = PROJECT.with_suffix(".csv")
    csv.unlink(missing_ok=True)
    shutil.rmtree(PROJECT.with_suffix(".records"), ignore_errors=True)
    with tempfile.TemporaryDirectory() as folder:
        for nodes, loads in LOADS.items():
            path = Path(folder) / f"vllm-{nodes}-nodes.json"
            path.write_text("".join(json.dumps(vllm_detailed(nodes, rate, seed=100 * nodes + index)) + "\n"
                                    for index, rate in enumerate(loads)), encoding="utf-8")
            subprocess.run([sys.executable, "-m", "reportgen", "ingest", "serving", str(path), "--nodes", str(nodes),
                            "--project", str(PROJECT)], check=True, cwd=ROOT)


if __name__ == "__main__":
    main()
