"""Benchmark of the multiclass exact path: K = 10, 1,000 classifiers x 4,000 draws.

Run from the repository root::

    .venv/bin/python benchmarks/bench_multiclass_exact.py           # all cases
    .venv/bin/python benchmarks/bench_multiclass_exact.py --quick   # the target case only

Every case runs in a fresh Python subprocess (``python -c``) that imports bayescm,
builds its matrices, times the call (``time.perf_counter``: model build + draws +
every metric + summary table; imports and input excluded) and prints one JSON line
with the wall time and the child's peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, total and right after the imports).

Input: 1,000 random K = 10 confusion matrices (fixed seed): N uniform in 200..2,000,
class prevalence ~ Dirichlet(5, ..., 5), each actual class's row ~ Dirichlet(8 on the
diagonal, 0.5 elsewhere), so zero cells occur.

1. ``bcm.summary_exact(multiclass_rows(mc), draws=1000, chains=4)``: every multiclass
   metric (per class, macro, weighted, micro, overall) summarised: plug-in, mean, sd,
   median, 95% HDI.  **Target: < 10 s and < 4 GB peak** (GB = 10^9 bytes) on a 2-core
   machine (issue 12).
2. The same for ``multiclass_cells`` (K^2 cells, one Dirichlet), for information.
3. The materialised path it replaces, ``bcm.summary(bcm.fit(model, sampler="exact",
   prior=False, predictive=False))``, on 100 of the matrices (1,000 need about 6 GB), for
   information.

Verdicts (PASS/MISS) come from the figures measured in this run.  Timings are
wall-clock and the load average is printed: on a shared machine they are upper
bounds.
"""

from __future__ import annotations

import argparse
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
K, CLASSIFIERS, DRAWS, CHAINS, SEED = 10, 1000, 1000, 4, 20261123

CHILD = r"""
import json, resource, sys, time, warnings
warnings.filterwarnings("ignore")
import numpy as np
import pymc  # noqa: F401  (the builders import it: not part of the timed call)
import bayescm as bcm

def peak_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # Linux: KiB

p = json.loads(sys.argv[1])
k, m = p["k"], p["classifiers"]
rng = np.random.default_rng(p["seed"])
n = rng.integers(200, 2001, size=m)
prevalence = rng.dirichlet(np.full(k, 5.0), size=m)
g = rng.standard_gamma(np.where(np.eye(k, dtype=bool), 8.0, 0.5), size=(m, k, k))
rows = g / g.sum(axis=-1, keepdims=True)  # row a ~ Dirichlet(8 at a, 0.5 elsewhere)
sizes = np.stack([rng.multinomial(n[i], prevalence[i]) for i in range(m)])
counts = np.stack([[rng.multinomial(sizes[i, a], rows[i, a]) for a in range(k)]
                   for i in range(m)])
mc = bcm.MulticlassConfusionMatrix(counts, labels=[f"c{j}" for j in range(k)],
                                   classifier=[f"m{i:04d}" for i in range(m)])
import bayescm.summary_stream  # noqa: F401  (import cost outside the timing)
baseline = peak_gb()
build = getattr(bcm.models, p["builder"])
t0 = time.perf_counter()
model = build(mc)
if p["path"] == "stream":
    table = bcm.summary_exact(model, draws=p["draws"], chains=p["chains"], random_seed=1)
else:
    idata = bcm.fit(model, sampler="exact", draws=p["draws"], chains=p["chains"],
                    random_seed=1, prior=False, predictive=False)
    table = bcm.summary(idata)
wall = time.perf_counter() - t0
print("BENCH_JSON " + json.dumps({
    "wall_s": wall, "peak_gb": peak_gb(), "baseline_gb": baseline, "rows": len(table),
    "metrics": int(table.index.get_level_values("metric").nunique()),
    "zero_cells": int((counts == 0).sum()),
    "acc_mean": float(table.xs("acc", level="metric")["mean"].mean()),
}))
"""

CASES = [
    ("summary_exact multiclass_rows 1,000 (target)",
     {"builder": "multiclass_rows", "path": "stream", "classifiers": CLASSIFIERS}, True),
    ("summary_exact multiclass_cells 1,000",
     {"builder": "multiclass_cells", "path": "stream", "classifiers": CLASSIFIERS}, False),
    ("fit(exact) + summary, rows, 100",
     {"builder": "multiclass_rows", "path": "materialised", "classifiers": 100}, False),
]


def run(params: dict) -> dict:
    params = {"k": K, "draws": DRAWS, "chains": CHAINS, "seed": SEED, **params}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(params)], cwd=REPO,
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    raise RuntimeError(f"benchmark child failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the target case only")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"bayescm multiclass exact benchmark - Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}, load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (1/5/15 min)")
    print(f"target: K = {K}, {CLASSIFIERS:,} classifiers x {DRAWS * CHAINS:,} draws, every "
          f"metric summarised, in < {TARGET_S:g} s and < {TARGET_GB:g} GB peak\n")
    print(f"{'case':45s} {'wall s':>7s} {'peak GB':>8s} {'after import':>13s} {'rows':>8s}"
          f" {'metrics':>8s} {'s/classifier':>13s}  verdict")
    all_ok = True
    for label, params, is_target in CASES[:1] if args.quick else CASES:
        r = run(params)
        ok = r["wall_s"] < TARGET_S and r["peak_gb"] < TARGET_GB
        verdict = ("PASS" if ok else "MISS") + ("" if is_target else " (info)")
        all_ok &= ok or not is_target
        print(f"{label:45s} {r['wall_s']:7.2f} {r['peak_gb']:8.2f} {r['baseline_gb']:13.2f} "
              f"{r['rows']:8,d} {r['metrics']:8d} {r['wall_s'] / params['classifiers']:13.4f}"
              f"  {verdict}", flush=True)
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"overall: {'PASS' if all_ok else 'MISS'} (time < {TARGET_S:g} s and peak < "
          f"{TARGET_GB:g} GB for the target case)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
