"""A real measured training step for the FLOP model (methods.md#flops-mfu-and-hfu): a small GPT trained on this
machine's CPU, its FLOPs counted by torch's FlopCounterMode, without and with full recomputation, and its wall time.

torch is not a dependency of reportgen: run this in a scratch environment that has it, e.g.

    python -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch numpy
    /tmp/torchenv/bin/python bench/torch_flops.py tests/data/torch-cpu-gpt

It writes `step.json` (the shape, the counted FLOPs per step, the step's wall time, the machine) and `runs.csv` (one
run in reportgen's CSV form: its wall time, tokens and counted FLOPs). tests/test_torch_flops.py holds
reportgen's FLOP model and its MFU to them. The attention is written as two matmuls, so that the counter sees
them on every torch version (the fused CPU kernel's count is not registered everywhere).
"""

from __future__ import annotations

import json
import math
import platform
import sys
import time
from pathlib import Path

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint
from torch.utils.flop_counter import FlopCounterMode

SHAPE = {"layers": 4, "hidden": 256, "heads": 8, "sequence": 256, "vocabulary": 8192, "micro_batch": 8}
STEPS = 8  # timed steps after two of warm-up


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.up, self.down = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(h // self.heads)
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)
        attention = scores.masked_fill(mask, float("-inf")).softmax(dim=-1) @ v
        x = x + self.proj(attention.transpose(1, 2).reshape(b, s, h))
        return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, sequence: int, vocabulary: int, recompute: bool) -> None:
        super().__init__()
        self.recompute = recompute
        self.embedding = nn.Embedding(vocabulary, hidden)
        self.position = nn.Embedding(sequence, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embedding(tokens) + self.position(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            # the reentrant checkpoint recomputes the whole forward of the layer, as Megatron's full recomputation
            # does; the non-reentrant one stops once the tensors backward needs are back (not the last linear)
            x = checkpoint(block, x, use_reentrant=True) if self.recompute else block(x)
        return self.ln(x) @ self.embedding.weight.T  # the output layer tied to the embedding


def step(model: GPT, optimizer: torch.optim.Optimizer, tokens: torch.Tensor) -> None:
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def measure(recompute: bool) -> dict[str, float]:
    torch.manual_seed(0)
    shape = SHAPE
    model = GPT(shape["layers"], shape["hidden"], shape["heads"], shape["sequence"], shape["vocabulary"], recompute)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, shape["vocabulary"], (shape["micro_batch"], shape["sequence"] + 1))
    counter = FlopCounterMode(display=False)
    with counter:
        step(model, optimizer, tokens)
    for _ in range(2):
        step(model, optimizer, tokens)
    start = time.perf_counter()
    for _ in range(STEPS):
        step(model, optimizer, tokens)
    wall = (time.perf_counter() - start) / STEPS
    parameters = sum(p.numel() for p in model.parameters())
    return {"flops_per_step": float(counter.get_total_flops()), "step_s": wall, "parameters": float(parameters)}


def achieved_matmul_rate() -> float:
    """FLOP/s of a large fp32 matmul on this machine: a floor under its peak."""
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    start = time.perf_counter()
    for _ in range(10):
        a @ b
    return 10 * 2 * 2048**3 / (time.perf_counter() - start)


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(torch.get_num_threads())
    plain, full = measure(recompute=False), measure(recompute=True)
    tokens = SHAPE["micro_batch"] * SHAPE["sequence"]
    record = {"shape": SHAPE, "tokens_per_step": tokens, "steps_timed": STEPS, "none": plain, "full": full,
              "matmul_flops_per_s": achieved_matmul_rate(), "torch": torch.__version__,
              "threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine(),
              "python": platform.python_version()}
    (folder / "step.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    # one run of the plain model, in reportgen's CSV form: the timed steps' wall, their tokens and counted FLOPs
    (folder / "runs.csv").write_text(
        "nodes,time [s],tokens [token],flops [FLOP]\n"
        f"1,{plain['step_s'] * STEPS:.6g},{tokens * STEPS},{plain['flops_per_step'] * STEPS:.6g}\n", encoding="utf-8")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/torch-flops"))
