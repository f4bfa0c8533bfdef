"""Benchmark of probabilistic leaderboards: 10,000 submissions x 4,000 draws.

Run from the repository root::

    .venv/bin/python benchmarks/bench_leaderboard.py

Every case runs in a fresh Python subprocess (``python -c``) that imports bayescm,
builds its input, times one call (``time.perf_counter``, imports and input excluded)
and prints one JSON line with the wall time and the child's peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, total and right after the imports).

Cases (accuracies uniform in 90-97 %, test-set size 15,123 as in Tötsch & Hoffmann's
Kaggle example; confusion matrices with N in 200..2,000, fixed seeds):

1. ``leaderboard_from_accuracy``, 10,000 submissions x 4,000 draws, prizes for ranks
   1-3.  **Target: < 10 s and < 4 GB peak** (GB = 10^9 bytes) on a 2-core machine.
2. The same with 1,000 submissions (the full 1,000 x 1,000 rank table), for scale.
3. ``leaderboard(ConfusionMatrix, "acc")``, 10,000 x 4,000: accuracy through the
   three-Beta posterior (three Beta draws per value), for information.

Verdicts (PASS/MISS) come from the figures measured in this run.  Timings are
wall-clock; run on an otherwise idle machine.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = "BENCH_JSON "
TARGET_S = 10.0
TARGET_GB = 4.0

CHILD = r"""
import json, resource, sys, time, warnings
warnings.filterwarnings("ignore")
import numpy as np
import bayescm as bcm
from bayescm.analysis.leaderboard import leaderboard, leaderboard_from_accuracy

def peak_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # Linux: KiB

p = json.loads(sys.argv[1])
k, draws = p["k"], p["draws"]
rng = np.random.default_rng(p["seed"])
baseline = peak_gb()
if p["kind"] == "accuracy":
    acc = rng.uniform(90, 97, size=k)
    t0 = time.perf_counter()
    board = leaderboard_from_accuracy(acc, 15123, draws=draws, random_seed=1,
                                      prizes=[10000, 2000, 1000])
else:
    n = rng.integers(200, 2001, size=k)
    counts = rng.multinomial(n, rng.dirichlet([8, 1, 1, 8], size=k))
    cms = bcm.ConfusionMatrix(*counts.T)
    t0 = time.perf_counter()
    board = leaderboard(cms, p["metric"], draws=draws, random_seed=1)
wall = time.perf_counter() - t0
print("BENCH_JSON " + json.dumps({
    "wall_s": wall, "peak_gb": peak_gb(), "baseline_gb": baseline,
    "table": list(board.rank_probabilities.shape),
    "p_best_sum": float(board.summary["p_best"].sum()),
    "top_p_best": float(board.summary["p_best"].iloc[0]),
}))
"""

CASES = [
    ("from_accuracy 10,000 x 4,000 (target)", {"kind": "accuracy", "k": 10_000}, True),
    ("from_accuracy  1,000 x 4,000", {"kind": "accuracy", "k": 1_000}, False),
    ("ConfusionMatrix acc 10,000 x 4,000", {"kind": "counts", "k": 10_000, "metric": "acc"},
     False),
]


def run(params: dict) -> dict:
    params = {"draws": 4000, "seed": 7, **params}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(params)], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    raise RuntimeError(f"benchmark child failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def main() -> int:
    print(f"bayescm leaderboard benchmark - Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}")
    print(f"targets: 10,000 submissions x 4,000 draws in < {TARGET_S:g} s and < {TARGET_GB:g} GB"
          " peak\n")
    print(f"{'case':40s} {'wall s':>7s} {'peak GB':>8s} {'after import':>13s} {'table':>13s}"
          f" {'sum p_best':>10s}  verdict")
    all_ok = True
    for label, params, is_target in CASES:
        r = run(params)
        ok = r["wall_s"] < TARGET_S and r["peak_gb"] < TARGET_GB
        verdict = ("PASS" if ok else "MISS") + ("" if is_target else " (info)")
        all_ok &= ok or not is_target
        table = "x".join(str(x) for x in r["table"])
        print(f"{label:40s} {r['wall_s']:7.2f} {r['peak_gb']:8.2f} {r['baseline_gb']:13.2f} "
              f"{table:>13s} {r['p_best_sum']:10.6f}  {verdict}")
    print(f"\noverall: {'PASS' if all_ok else 'MISS'} (time < {TARGET_S:g} s and peak < "
          f"{TARGET_GB:g} GB for the target case)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
