"""Benchmark of the multiclass exact path: K = 10, 1,000 classifiers x 4,000 draws.

Run from the repository root::

    .venv/bin/python benchmarks/bench_multiclass_exact.py           # all cases
    .venv/bin/python benchmarks/bench_multiclass_exact.py --quick   # the target case only
    .venv/bin/python benchmarks/bench_multiclass_exact.py --quick --runs 3  # medians

Every case runs in a fresh Python subprocess (``benchmarks/_worker.py`` and
``benchmarks/_worker_multiclass_exact.py``) that imports bayescm, builds its matrices,
times the call (``time.perf_counter`` and the process's CPU time: model build + draws
+ every metric + summary table; imports and input excluded) and prints one JSON line
with the times and the child's peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, total and right after the imports and
the input).

Input: 1,000 random K = 10 confusion matrices (fixed seed): N uniform in 200..2,000,
class prevalence ~ Dirichlet(5, ..., 5), each actual class's row ~ Dirichlet(8 on the
diagonal, 0.5 elsewhere), so zero cells occur.

1. ``bcm.summary_exact(multiclass_rows(mc), draws=1000, chains=4)``: every multiclass
   metric (per class, macro, weighted, micro, overall) summarised: plug-in, mean, sd,
   median, 95% HDI, MCSEs.  **Target: <= 10 s and <= 4 GB peak** (GB = 10^9 bytes) on a
   2-core machine (issue 29, item 2), in three runs:

   * *before*: the frozen path before the fused chunks (``_summary_exact_before``:
     ``bcm.metrics.compute`` then NumPy's partition/sort statistics per metric);
   * *after, cold*: the current path with an empty numba cache (it compiles the
     median/HDI/MCSE kernels of ``bayescm.inference.order_stats``, listed);
   * *after*: the current path, cache warm;
   * *after, matrix input*: ``bcm.summary_exact(mc)`` on the matrices themselves (the
     same default model, no PyMC model built), for information.

   The tables of the three must be equal bit for bit (same seed, same numbers):
   their digests are compared and the script fails when they differ.
2. (not with ``--quick``) ``multiclass_cells`` (K^2 cells, one Dirichlet) and the
   materialised path ``bcm.summary(bcm.fit(model, sampler="exact", prior=False,
   predictive=False))`` on 100 of the matrices (1,000 need about 6 GB), for information.

Verdicts (PASS/MISS) come from the figures measured in this run.  Timings are
wall-clock with the process's CPU time beside them, and the load average is printed:
on a shared machine they are upper bounds (CPU time is the steadier figure).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile

from bench_core import run_child, table

TARGET_S, TARGET_GB = 10.0, 4.0
ISSUE_BEFORE_S = 23.8  # the path before, as issue 29 measured it
K, CLASSIFIERS, DRAWS, CHAINS, SEED = 10, 1000, 1000, 4, 20261123
INFO = [
    ("summary_exact, multiclass_cells", "multiclass_cells", "stream", CLASSIFIERS),
    ("fit(exact) + summary, multiclass_rows", "multiclass_rows", "materialised", 100),
]


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _params(builder: str, n: int, **extra) -> dict:
    return {"k": K, "classifiers": n, "draws": DRAWS, "chains": CHAINS, "seed": SEED,
            "builder": builder, **extra}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the target case only")
    parser.add_argument("--classifiers", type=int, default=CLASSIFIERS,
                        help="classifiers in the target case (default 1,000)")
    parser.add_argument("--runs", type=int, default=1,
                        help="repeat 'before' and 'after' (interleaved) and report the "
                             "median of each, and the median of the paired ratios")
    args = parser.parse_args(argv)
    n = args.classifiers
    print(f"bayescm multiclass exact benchmark - Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}, load average {load()} (1/5/15 min)")
    print(f"target: K = {K}, {n:,} classifiers x {DRAWS * CHAINS:,} draws, every "
          f"metric summarised, in <= {TARGET_S:g} s and <= {TARGET_GB:g} GB peak\n")
    rows, results = [], {}
    cache = tempfile.mkdtemp(prefix="bayescm-numba-")
    runs = [("before", "before", None, "model"), ("after, cold cache", "after", cache, "model"),
            ("after", "after", cache, "model"), ("after, matrix input", "after", cache, "matrix")]
    for label, path, cache_dir, given in runs:
        print(f"  ... summary_exact {label}, {n} classifiers", file=sys.stderr, flush=True)
        r = run_child("summary_exact_path", _params("multiclass_rows", n, path=path,
                                                    input=given),
                      cache_dir=cache_dir, worker="_worker_multiclass_exact")
        results[label] = r
        ok = r["total_s"] <= TARGET_S and r["peak_mb"] / 1000 <= TARGET_GB
        rows.append([f"summary_exact, multiclass_rows, {label}", f"{n:,}",
                     f"{r['total_s']:.2f}", f"{r['cpu_s']:.2f}", f"{r['peak_mb'] / 1000:.2f}",
                     f"{r['baseline_mb'] / 1000:.2f}", f"{r['rows']:,}", r["digest"],
                     f"{r['load']:.1f}", "PASS" if ok else "MISS"])
    if not args.quick:
        for label, builder, path, m in INFO:
            print(f"  ... {label}, {m} classifiers", file=sys.stderr, flush=True)
            r = run_child("multiclass_exact", _params(builder, m, path=path))
            rows.append([label, f"{m:,}", f"{r['total_s']:.2f}", "", f"{r['peak_mb'] / 1000:.2f}",
                         f"{r['baseline_mb'] / 1000:.2f}", f"{r['rows']:,}", "", "",
                         "(info)"])
    print(table(["case", "classifiers", "wall s", "CPU s", "peak GB", "base GB", "rows",
                 "table digest", "load", "verdict"], rows))
    before, after = results["before"], results["after"]
    same = len({r["digest"] for r in results.values()}) == 1
    print(f"\nbase GB = peak RSS after imports and input; load = 1-min load average at the "
          f"end of the run; load average now {load()}")
    print(f"speed-up after/before: wall {before['total_s'] / after['total_s']:.2f}x, "
          f"CPU {before['cpu_s'] / after['cpu_s']:.2f}x")
    ratio = before["total_s"] / after["total_s"]
    if args.runs > 1:
        pairs = [(before, after)]
        for i in range(2, args.runs + 1):
            print(f"  ... run {i} of {args.runs}: before, after", file=sys.stderr, flush=True)
            pairs.append(tuple(
                run_child("summary_exact_path", _params("multiclass_rows", n, path=path,
                                                        input="model"),
                          cache_dir=cache, worker="_worker_multiclass_exact")
                for path in ("before", "after")))
        for b, a in pairs[1:]:
            same = same and b["digest"] == a["digest"] == before["digest"]
        med = statistics.median
        for what in ("total_s", "cpu_s"):
            label = "wall" if what == "total_s" else "CPU"
            print(f"{label} over {args.runs} interleaved runs: before "
                  f"{', '.join(f'{b[what]:.2f}' for b, _ in pairs)} s; after "
                  f"{', '.join(f'{a[what]:.2f}' for _, a in pairs)} s; median ratio "
                  f"{med(b[what] / a[what] for b, a in pairs):.2f}x")
        ratio = med(b["total_s"] / a["total_s"] for b, a in pairs)
        after = {**after, "total_s": med(a["total_s"] for _, a in pairs)}
        print(f"after, median wall: {after['total_s']:.2f} s")
    if n == CLASSIFIERS:  # the issue's case
        print(f"the issue timed the path before at {ISSUE_BEFORE_S:g} s on its 2-core machine: at "
              f"this run's wall ratio {ratio:.2f}x the path after takes "
              f"{ISSUE_BEFORE_S / ratio:.1f} s there ("
              f"{'PASS' if ISSUE_BEFORE_S / ratio <= TARGET_S else 'MISS'} against {TARGET_S:g} s)")
    print(f"cold run compiled (numba): {', '.join(results['after, cold cache']['compiled'])}")
    print(f"same seed, same table before and after (digests): {'yes' if same else 'NO'}")
    ok = after["total_s"] <= TARGET_S and after["peak_mb"] / 1000 <= TARGET_GB
    print(f"overall: {'PASS' if ok and same else 'MISS'} (after, warm cache: time <= "
          f"{TARGET_S:g} s and peak <= {TARGET_GB:g} GB; tables equal)")
    return 0 if ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
