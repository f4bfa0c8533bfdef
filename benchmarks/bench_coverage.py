"""Benchmark of interval coverage studies: 100 true values x 10,000 simulated studies.

Run from the repository root::

    .venv/bin/python benchmarks/bench_coverage.py

Every case runs in a fresh Python subprocess (``python -c``) that imports
``bayescm.intervals``, times one call of :func:`bayescm.intervals.coverage`
(``time.perf_counter``; imports excluded, the first call in the process is the one
judged, a second identical call is shown as "warm") and prints one JSON line.

The grid is the one of Morais (2023, Fig. 5) and bob.measure's coverage study:
100 true proportions ``p = 0.001, 0.011, ..., 0.991``, at ``n = 50`` and ``n = 500``
trials, for the Wilson, Clopper-Pearson and flat-prior Bayesian HDI intervals.

Cases
-----
1. ``sim``: 10,000 simulated studies per true value (10^6 studies per grid).
   **Target: < 5 s per grid** on a 2-core machine.  The child also computes the
   exact coverage (untimed) and reports the largest deviation of the simulated
   coverage from it in binomial standard errors (``max |z|``; for 100 independent
   points values up to about 3.5 are expected).
2. ``exact``: the exact binomial sums (no simulation), for comparison.
3. ``direct`` (information): the intervals computed by ``binomial()`` for each of
   the 10^6 simulated counts instead of once per possible count ``k = 0..n``; this
   is what ``coverage`` avoids, and shows why.

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
TARGET_S = 5.0
N_SIMS = 10_000

CHILD = r"""
import json, resource, sys, time, warnings
warnings.filterwarnings("ignore")
import numpy as np
from bayescm import intervals

p = json.loads(sys.argv[1])
grid = np.arange(0.001, 1.0, 0.01)
method, n, n_sims = p["method"], p["n"], p["n_sims"]
out = {}
if p["mode"] == "direct":
    def run():
        rng = np.random.default_rng(1)
        k = rng.binomial(n, grid[:, None], size=(grid.size, n_sims))
        lo, hi = intervals.binomial(k, n, method=method)
        return ((lo <= grid[:, None]) & (grid[:, None] <= hi)).mean(-1)
else:
    sims = None if p["mode"] == "exact" else n_sims
    def run():
        return intervals.coverage(method, n, grid, n_sims=sims, random_seed=1)["coverage"]
t0 = time.perf_counter()
cov = np.asarray(run())
out["wall_s"] = time.perf_counter() - t0
t0 = time.perf_counter()
run()
out["warm_s"] = time.perf_counter() - t0
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
out["grid"] = int(grid.size)
out["mean_cov"] = float(cov.mean())
out["mid_cov"] = float(cov[(grid >= 0.35) & (grid <= 0.65)].mean())
out["min_cov"] = float(cov.min())
if p["mode"] != "exact":
    exact = intervals.coverage(method, n, grid)["coverage"].to_numpy()
    se = np.sqrt(exact * (1 - exact) / n_sims)
    ok = se > 0
    out["max_z"] = float(np.max(np.abs(cov - exact)[ok] / se[ok]))
print("BENCH_JSON " + json.dumps(out))
"""

METHODS = ("wilson", "clopper_pearson", "bayes_hdi")
CASES = ([("sim", m, n, True) for n in (50, 500) for m in METHODS]
         + [("exact", m, n, False) for n in (50, 500) for m in METHODS]
         + [("direct", m, 50, False) for m in METHODS])


def run(params: dict) -> dict:
    params = {"n_sims": N_SIMS, **params}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(params)], cwd=REPO,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    raise RuntimeError(f"benchmark child failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def main() -> int:
    print(f"bayescm coverage benchmark - Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}")
    print(f"grid: 100 true values p = 0.001..0.991; simulated cases: {N_SIMS:,} studies per "
          f"value; target < {TARGET_S:g} s per simulated grid (first call, fresh process)\n")
    print(f"{'mode':7s} {'method':16s} {'n':>4s} {'wall s':>8s} {'warm s':>8s} {'peak MB':>8s}"
          f" {'mean cov':>9s} {'cov .35-.65':>11s} {'min cov':>8s} {'max |z|':>8s}  verdict")
    all_ok = True
    for mode, method, n, is_target in CASES:
        r = run({"mode": mode, "method": method, "n": n})
        ok = r["wall_s"] < TARGET_S
        verdict = ("PASS" if ok else "MISS") + ("" if is_target else " (info)")
        all_ok &= ok or not is_target
        z = f"{r['max_z']:8.2f}" if "max_z" in r else f"{'-':>8s}"
        print(f"{mode:7s} {method:16s} {n:4d} {r['wall_s']:8.3f} {r['warm_s']:8.3f} "
              f"{r['peak_mb']:8.0f} {r['mean_cov']:9.4f} {r['mid_cov']:11.4f} "
              f"{r['min_cov']:8.4f} {z}  {verdict}")
    print(f"\noverall: {'PASS' if all_ok else 'MISS'} (each 100 x {N_SIMS:,} simulated grid "
          f"in < {TARGET_S:g} s)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
