"""Benchmark of the exact predictive pmfs: ``bayescm.exact.predictive_pmf`` and ``metric_pmf``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_exact_pmf.py

Each measurement runs in a fresh Python subprocess (this file re-invoked with
``--child``) that imports bayescm, then times the function on the cocaine matrix
(tp=26 fn=0 fp=2 tn=6, default Beta(1, 1) priors, beta-binomial model):

* ``predictive_pmf(cm, n, n)``: the joint pmf of (TP', TN');
* ``metric_pmf(cm, "mcc", n, n)`` and ``metric_pmf(cm, "f1", n, n)``: the metric pmfs,
  *including* the joint pmf they compute first.

Sizes: n_pos = n_neg = 999 (10^6 lattice points: the target case) and 99 (10^4 points,
for scale).  Reported: the first call in the fresh process (cold: any lazy imports and
first-touch allocations included) and the median of 5 further calls (warm), wall-clock
by ``time.perf_counter``; the child's peak resident memory above its level right after
the imports; and a correctness check (probabilities sum to one).  Verdict: PASS when
the cold call at 10^6 lattice points takes < 1 s, else MISS.  Nothing is hard-coded:
every figure comes from this run.  Run on an otherwise idle machine.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MARKER = "BENCH_JSON "
TARGET_S = 1.0
TARGET_N = 999
SCALE_N = 99
REPEATS = 5
TASKS = (("predictive_pmf", None), ("metric_pmf", "mcc"), ("metric_pmf", "f1"))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # Linux: KiB


def child(params: dict) -> None:
    """Time one function at one size in this (fresh) process; print one JSON line."""
    import warnings

    warnings.filterwarnings("ignore")
    t0 = time.perf_counter()
    import bayescm as bcm
    from bayescm.exact.pmf import metric_pmf, predictive_pmf

    t_import = time.perf_counter() - t0
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    n, func, metric = params["n"], params["func"], params["metric"]

    def call():
        if func == "predictive_pmf":
            return predictive_pmf(cm, n, n)
        return metric_pmf(cm, metric, n, n)

    baseline = _peak_mb()
    times = []
    for _ in range(1 + REPEATS):
        t0 = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - t0)
    if func == "predictive_pmf":
        total, rows = float(result.sum()), int(result.size)
    else:
        total, rows = float(result["probability"].sum()), len(result)
    print(MARKER + json.dumps({
        "import_s": t_import, "cold_s": times[0], "warm_s": statistics.median(times[1:]),
        "extra_peak_mb": _peak_mb() - baseline, "total": total, "rows": rows,
    }), flush=True)


def run_child(params: dict) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(params)],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=600, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    raise RuntimeError(f"child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


def main() -> int:
    import numpy
    import scipy

    print("bayescm exact pmf benchmark")
    print(f"  python {platform.python_version()}, numpy {numpy.__version__}, "
          f"scipy {scipy.__version__}, {platform.machine()}, {os.cpu_count()} CPUs")
    print("  input: cocaine matrix (tp=26 fn=0 fp=2 tn=6), beta-binomial model, "
          "Beta(1, 1) priors")
    print(f"  each row: a fresh subprocess; cold = first call, warm = median of {REPEATS}\n")
    header = (f"{'call':<28} {'lattice':>9} {'cold s':>8} {'warm s':>8} {'+peak MB':>9} "
              f"{'rows':>9} {'sum - 1':>9} {'import s':>9}")
    print(header)
    print("-" * len(header))
    verdicts = []
    for n in (SCALE_N, TARGET_N):
        for func, metric in TASKS:
            r = run_child({"n": n, "func": func, "metric": metric})
            label = func if metric is None else f'{func}("{metric}")'
            print(f"{label:<28} {(n + 1) ** 2:>9,} {r['cold_s']:>8.3f} {r['warm_s']:>8.3f} "
                  f"{r['extra_peak_mb']:>9.0f} {r['rows']:>9,} {r['total'] - 1:>9.1e} "
                  f"{r['import_s']:>9.2f}")
            if n == TARGET_N:
                verdicts.append((label, r["cold_s"]))
    print(f"\nTarget: each call at {(TARGET_N + 1) ** 2:,} lattice points "
          f"(n_pos = n_neg = {TARGET_N}) in < {TARGET_S:g} s, cold (metric_pmf includes "
          "the joint pmf)")
    ok = True
    for label, seconds in verdicts:
        verdict = "PASS" if seconds < TARGET_S else "MISS"
        ok &= verdict == "PASS"
        print(f"  {verdict}  {label:<28} {seconds:.3f} s  "
              f"({seconds / TARGET_S:.0%} of the budget)")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]))
    else:
        sys.exit(main())
