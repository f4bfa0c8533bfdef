"""Benchmark of the multiclass exact path: K = 10, 1,000 classifiers x 4,000 draws.

Run from the repository root::

    .venv/bin/python benchmarks/bench_multiclass_exact.py           # all cases
    .venv/bin/python benchmarks/bench_multiclass_exact.py --quick   # the target case only

Every case runs in a fresh Python subprocess (``benchmarks/_worker.py``, task
``multiclass_exact``) that imports bayescm, builds its matrices, times the call
(``time.perf_counter``: model build + draws + every metric + summary table; imports
and input excluded) and prints one JSON line with the wall time and the child's peak
resident memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``, total and right after
the imports and the input).

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
import os
import platform
import sys

from bench_core import run_child, table

TARGET_S, TARGET_GB = 10.0, 4.0
K, CLASSIFIERS, DRAWS, CHAINS, SEED = 10, 1000, 1000, 4, 20261123
CASES = [
    ("summary_exact, multiclass_rows (target)", "multiclass_rows", "stream", CLASSIFIERS, True),
    ("summary_exact, multiclass_cells", "multiclass_cells", "stream", CLASSIFIERS, False),
    ("fit(exact) + summary, multiclass_rows", "multiclass_rows", "materialised", 100, False),
]


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the target case only")
    args = parser.parse_args(argv)
    print(f"bayescm multiclass exact benchmark - Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}, load average {load()} (1/5/15 min)")
    print(f"target: K = {K}, {CLASSIFIERS:,} classifiers x {DRAWS * CHAINS:,} draws, every "
          f"metric summarised, in < {TARGET_S:g} s and < {TARGET_GB:g} GB peak\n")
    rows, all_ok = [], True
    for label, builder, path, n, is_target in CASES[:1] if args.quick else CASES:
        print(f"  ... {label}, {n} classifiers", file=sys.stderr, flush=True)
        r = run_child("multiclass_exact", {"k": K, "classifiers": n, "draws": DRAWS,
                                           "chains": CHAINS, "seed": SEED,
                                           "builder": builder, "path": path})
        ok = r["total_s"] < TARGET_S and r["peak_mb"] / 1000 < TARGET_GB
        all_ok &= ok or not is_target
        rows.append([label, f"{n:,}", f"{r['total_s']:.2f}", f"{r['peak_mb'] / 1000:.2f}",
                     f"{r['baseline_mb'] / 1000:.2f}", f"{r['rows']:,}", r["metrics"],
                     f"{1000 * r['total_s'] / n:.1f}",
                     ("PASS" if ok else "MISS") + ("" if is_target else " (info)")])
    print(table(["case", "classifiers", "wall s", "peak GB", "base GB", "rows", "metrics",
                 "ms/classifier", "verdict"], rows))
    print(f"\nbase GB = peak RSS after imports and input; load average at the end {load()}")
    print(f"overall: {'PASS' if all_ok else 'MISS'} (time < {TARGET_S:g} s and peak < "
          f"{TARGET_GB:g} GB for the target case)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
