"""Exact posteriors and disparity summaries for 10^4 slices, figures measured in one run.

A 100 x 100 grid of slices (two factors, 50 to 500 cases each, one slice's TPR lower),
fitted with the exact three-Beta posterior (``fit(sampler="exact")``), then:

- ``disparity(fit, "tpr")``: every slice against the rest, largest gaps, equalized
  odds and demographic parity, and their table;
- ``disparity(fit, "tpr", by="a")``: the 100 levels of one factor, the other pooled;
- ``summary(fit, metrics=["tpr", "tnr"])``: the per-slice table.

Time of each step and the process's peak resident memory.  Usage::

    .venv/bin/python benchmarks/bench_disparity.py --side 100 --draws 1000
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.slices import slice_label


def sliced(side: int, seed: int = 0) -> bcm.ConfusionMatrix:
    rng = np.random.default_rng(seed)
    levels = pd.MultiIndex.from_product([range(side), range(side)], names=["a", "b"])
    n = rng.integers(50, 501, len(levels))
    pos = rng.binomial(n, 0.3)
    tpr = np.full(len(levels), 0.85)
    tpr[0] = 0.6  # one slice clearly worse
    tp = rng.binomial(pos, tpr)
    fp = rng.binomial(n - pos, 0.1)
    counts = np.stack([tp, pos - tp, fp, n - pos - fp], axis=1)
    slices = levels.to_frame(index=False).astype(str)
    slices.index = [slice_label(row) for row in slices.to_dict("records")]
    return bcm.ConfusionMatrix.from_slices(counts, slices)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=100)
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args()
    cm = sliced(args.side)
    print(f"{len(cm)} slices, {int(cm.n.sum())} cases, {args.draws} exact draws per slice")
    steps = []
    t0 = time.perf_counter()
    # the posterior only: the prior and predictive groups would triple the memory
    fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=args.draws,
                  random_seed=1, metrics=["tpr", "tnr"], prior=False, predictive=False)
    steps.append(("exact fit (three_beta, posterior only)", time.perf_counter() - t0))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        every = bcm.analysis.disparity(fit, "tpr", threshold=0.05)
        table = every.to_frame()
    steps.append(("disparity, every slice vs the rest, with its table",
                  time.perf_counter() - t0))
    t0 = time.perf_counter()
    by_a = bcm.analysis.disparity(fit, "tpr", threshold=0.05, by="a").to_frame()
    steps.append((f"disparity by factor a ({args.side} levels)", time.perf_counter() - t0))
    t0 = time.perf_counter()
    bcm.summary(fit, metrics=["tpr", "tnr"])
    steps.append(("summary, tpr and tnr per slice", time.perf_counter() - t0))
    for name, secs in steps:
        print(f"  {name:<52} {secs:7.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak resident memory {peak:,.0f} MB")
    versus = table.xs("tpr vs rest", level="measure")
    low = versus.loc[cm.classifiers[0]]
    rank = int((versus["mean"] < low["mean"]).sum()) + 1
    print(f"  the simulated low slice {cm.classifiers[0]} (TPR 0.60 vs 0.85): "
          f"{low['mean']:+.3f} vs the rest, P(worse by > 0.05) = {low['p_worse']:.3f}, "
          f"rank {rank} of {len(versus)} by mean difference (small slices scatter widely)")
    print(f"  P(largest TPR gap > 0.05) = {every.probability('gap'):.3f}; "
          f"{len(by_a) - 4} levels of factor a compared")


if __name__ == "__main__":
    main()
