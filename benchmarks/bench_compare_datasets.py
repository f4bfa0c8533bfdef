"""Speed of the hierarchical comparison across data sets (issue 28): 50 data sets × 10
folds, 4 chains × 1,000 draws after 1,000 tuning steps.

Prints the wall time of the first call in this process (it loads the compiled density,
``bayescm.analysis.compare_datasets_kernel``, from numba's cache on disk -- compiled on
the very first run; run with ``NUMBA_CACHE_DIR`` pointing at an empty directory to time
that) and of a second call on new data, with R-hat, divergences and the answer next
to baycomp's signed-rank test on the data sets' mean accuracies.  Target: under 30 s on two cores.

Usage: ``python benchmarks/bench_compare_datasets.py [data_sets] [folds]``.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import bayescm as bcm


def problem(seed: int, q: int, k: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    effects = rng.normal(0.01, 0.02, q)
    a, b = {}, {}
    for i in range(q):
        base = rng.uniform(0.7, 0.9)
        shift = rng.normal(0, 0.02, k)
        for out, p in ((a, base + effects[i] + shift), (b, base + shift)):
            pos = rng.binomial(100, 0.5, k)
            p = np.clip(p, 0, 1)
            tp, tn = rng.binomial(pos, p), rng.binomial(100 - pos, p)
            out[f"d{i}"] = bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=100 - pos - tn, tn=tn)
    return a, b


def main(q: int = 50, k: int = 10) -> None:
    import baycomp

    print(f"{q} data sets × {k} folds; {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}")
    for label, seed in (("first call in the process", 1), ("second call", 2)):
        a, b = problem(seed, q, k)
        start = time.perf_counter()
        res = bcm.analysis.compare_datasets(a, b, "acc", rope=0.01, random_seed=seed)
        seconds = time.perf_counter() - start
        ma = np.array([np.mean((a[d].cell("tp") + a[d].cell("tn")) / a[d].n) for d in a])
        mb = np.array([np.mean((b[d].cell("tp") + b[d].cell("tn")) / b[d].n) for d in b])
        sr = baycomp.two_on_multiple(ma, mb, rope=0.01)
        print(f"{label:32s} {seconds:6.1f} s   R-hat max {res.r_hat:.4f}   divergences "
              f"{res.divergences}")
        print(f"{'':32s} hierarchical P(a, rope, b) = ({res.p_a_better:.3f}, {res.p_rope:.3f}, "
              f"{res.p_b_better:.3f}); signed-rank = ({sr[0]:.3f}, {sr[1]:.3f}, {sr[2]:.3f})")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:3]]
    main(*args)
