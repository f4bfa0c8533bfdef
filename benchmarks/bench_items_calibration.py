"""Calibration of benchmark accuracy intervals: bayescm vs CLT vs clustered SE; the null.

    .venv/bin/python benchmarks/bench_items_calibration.py [--reps 100] [--sizes 10,30,...]
        [--null-reps 200]

Grid: N in {10, 30, 100, 300, 1000, 3000} items, independent items and clusters of 5
with intra-cluster correlation 0.1 and 0.3, 1 and 3 runs; one model of true accuracy
0.7 (its expected score on a new item of a new cluster, exact by construction:
:func:`bayescm.analysis.simulate_items`, logit-normal items with a model-specific
term).  For each cell: the coverage of the 95% intervals (bayescm's HDI of
``accuracy``, exact Beta where it applies, else NUTS; mean ± 1.96 SE; mean ± 1.96
clustered SE, Miller 2024) with the binomial MC error sqrt(p(1-p)/reps).

Null: two models of equal accuracy 0.7 on the same items (item spread 1.5, model
term 0.5, clusters of 5 at ICC 0.1): the share of replications with
P(A better) > 0.95 from compare_paired on the joint fit; at most 6% is the target.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import bayescm as bcm
from bayescm.analysis.items_simulate import simulate_items

TRUE = 0.7


def one_cell(n: int, icc: float, runs: int, reps: int, rng: np.random.Generator) -> dict:
    hits = {"bayescm": 0, "clt": 0, "clustered": 0}
    for _ in range(reps):
        df = simulate_items(n, TRUE, icc=icc, runs=runs, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster" if icc else None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = bcm.analysis.benchmark_intervals(
                res, random_seed=int(rng.integers(1 << 30)),
                **({} if res.one_run and icc == 0 else {"draws": 500, "chains": 2}))
        row = t.iloc[0]
        hits["bayescm"] += row["bayes_lower"] <= TRUE <= row["bayes_upper"]
        hits["clt"] += row["clt_lower"] <= TRUE <= row["clt_upper"]
        hits["clustered"] += row["clustered_lower"] <= TRUE <= row["clustered_upper"]
    return {k: v / reps for k, v in hits.items()}


def null_rate(n: int, reps: int, rng: np.random.Generator) -> float:
    wins = 0
    for _ in range(reps):
        df = simulate_items(n, [TRUE, TRUE], icc=0.1, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            idata = bcm.fit(bcm.models.items(res), draws=500, chains=2, prior=False,
                            random_seed=int(rng.integers(1 << 30)))
        wins += bcm.analysis.compare_paired(idata, "model_0", "model_1", "acc").probability > 0.95
    return wins / reps


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--sizes", default="10,30,100,300,1000,3000")
    p.add_argument("--iccs", default="0,0.1,0.3")
    p.add_argument("--runs", default="1,3")
    p.add_argument("--null-reps", type=int, default=200)
    p.add_argument("--null-sizes", default="50,300,1000,3000")
    a = p.parse_args()
    rng = np.random.default_rng(2026)
    mc = np.sqrt(0.95 * 0.05 / a.reps)
    print(f"coverage of 95% intervals, {a.reps} replications each (MC sd {mc:.3f})")
    print(f"{'N':>6} {'ICC':>5} {'runs':>4} {'bayescm':>8} {'CLT':>8} {'clustered':>9}")
    for n in map(int, a.sizes.split(",")):
        for icc in map(float, a.iccs.split(",")):
            for runs in map(int, a.runs.split(",")):
                c = one_cell(n, icc, runs, a.reps, rng)
                print(f"{n:>6} {icc:>5} {runs:>4} {c['bayescm']:>8.3f} {c['clt']:>8.3f} "
                      f"{c['clustered']:>9.3f}", flush=True)
    if not a.null_reps:  # --null-reps 0: the coverage grid only
        return
    print(f"\nnull (equal accuracy, correlated items, ICC 0.1): share of P(A better) > 0.95, "
          f"{a.null_reps} replications (MC sd {np.sqrt(0.05 * 0.95 / a.null_reps):.3f})")
    for n in map(int, a.null_sizes.split(",")):
        print(f"{n:>6} {null_rate(n, a.null_reps, rng):.3f}", flush=True)


if __name__ == "__main__":
    main()
