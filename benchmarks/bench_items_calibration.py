"""Calibration of benchmark accuracy intervals: bayescm vs CLT vs clustered SE; the null.

    .venv/bin/python benchmarks/bench_items_calibration.py [--reps 100] [--sizes 10,30,...]
        [--iccs 0,0.1,0.3] [--runs 1,3] [--null-reps 200] [--seed 2026]

Grid: N in {10, 30, 100, 300, 1000, 3000} items, independent items and clusters of 5
with intra-cluster correlation 0.1 and 0.3, 1 and 3 runs; one model of true accuracy
0.7 (its expected score on a new item of a new cluster, exact by construction:
:func:`bayescm.analysis.simulate_items`, logit-normal items with a model-specific
term).  For each cell: the coverage of the 95% intervals (bayescm's of ``accuracy``,
exact Beta where it applies, else NUTS 2 x 500; mean ± 1.96 SE; mean ± 1.96
clustered SE, Miller 2024) with the binomial MC error sqrt(p(1-p)/reps).

Null: two models of equal accuracy 0.7 on the same items (item spread 1.5, model
term 0.5, clusters of 5 at ICC 0.1): the share of replications with
P(A better) > 0.95 from compare_paired on the joint fit; at most 6% is the target.

bayescm's interval is the one :func:`bayescm.analysis.benchmark_intervals` reports
(equal-tailed, ``ETI``); the HDI of the same draws is printed beside it.

Control variate.  With 100-300 replications a cell's coverage has an MC sd of
0.013-0.022, too coarse to tell 0.93 from 0.95.  Every replication also computes the
t interval on the cluster means (mean of cluster means ± t_{C-1} · their SE; each
item its own cluster without clusters), whose coverage ``E_t`` in the same design is
known closely from 40,000 simulated data sets (no fitting: :func:`t_coverage`).  Its
hits are strongly correlated with bayescm's (0.7-0.9 at 20 clusters), so the
regression estimator (Rubinstein & Marcus 1985; Owen, "Monte Carlo theory, methods and
examples", 2013, ch. 8)

    cov_adj = mean(hit) - beta * (mean(hit_t) - E_t),  beta = cov(hit, hit_t) / var(hit_t)

has the same expectation as the raw share and a smaller MC sd, printed as ``±``:
sd(hit - beta * hit_t) / sqrt(reps) and E_t's own MC error, in quadrature.  With very
few misses (a handful in a cell) the sd is itself rough.
"""

from __future__ import annotations

import argparse
import inspect
import warnings

import numpy as np
from scipy import stats
from scipy.special import expit

import bayescm as bcm
from bayescm.analysis.items_simulate import cluster_scale, simulate_items
from bayescm.models.items.quadrature import alpha_of

TRUE = 0.7
_DEFAULTS = inspect.signature(simulate_items).parameters  # the design one_cell simulates
ITEM_SPREAD, INTERACTION, CLUSTER_SIZE = (
    _DEFAULTS[k].default for k in ("item_spread", "interaction", "cluster_size"))


def _t_hit(scores: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """Whether mean ± t_{C-1} SE of the cluster means covers TRUE (rows: data sets)."""
    c_ = int(cluster.max()) + 1
    sums = np.zeros((scores.shape[0], c_))
    np.add.at(sums.T, cluster, scores.T)
    means = sums / np.bincount(cluster)
    centre = means.mean(1)
    se = means.std(1, ddof=1) / np.sqrt(c_)
    return np.abs(centre - TRUE) <= stats.t.ppf(0.975, c_ - 1) * se


def t_coverage(n: int, icc: float, runs: int, reps: int = 40_000, seed: int = 7) -> float:
    """Coverage of the cluster-means t interval in a cell's design, by simulation alone.

    One model's logit is a + sigma_c Z_c + rest Z (rest² = item spread² + interaction²):
    the same law as :func:`simulate_items` draws for one model.
    """
    rng = np.random.default_rng(seed)
    rest = float(np.hypot(ITEM_SPREAD, INTERACTION))
    sigma_c = cluster_scale(TRUE, icc, rest)
    a = float(alpha_of(np.array(TRUE), np.array(np.hypot(sigma_c, rest))))
    cluster = (np.arange(n) // CLUSTER_SIZE) if icc > 0 else np.arange(n)
    block, hits = max(1, 2_000_000 // n), 0
    for start in range(0, reps, block):
        r = min(block, reps - start)
        z_c = rng.standard_normal((r, int(cluster.max()) + 1))
        p = expit(a + sigma_c * z_c[:, cluster] + rest * rng.standard_normal((r, n)))
        hits += int(_t_hit(rng.binomial(runs, p) / runs, cluster).sum())
    return hits / reps


def _fit(res: bcm.ItemResults, rng: np.random.Generator):
    exact = res.n_models == 1 and res.clusters is None and res.one_run
    options = ({"sampler": "exact", "draws": 20_000} if exact
               else {"draws": 500, "chains": 2})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bcm.fit(bcm.models.items(res), prior=False, predictive=False,
                       random_seed=int(rng.integers(1 << 30)), **options)


def one_cell(n: int, icc: float, runs: int, reps: int, rng: np.random.Generator) -> dict:
    """Per interval the replications' hits (0/1 arrays)."""
    keys = ("bayescm", "hdi", "clt", "clustered", "t")
    hits: dict[str, list[bool]] = {k: [] for k in keys}
    for _ in range(reps):
        df = simulate_items(n, TRUE, icc=icc, runs=runs, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster" if icc else None)
        idata = _fit(res, rng)
        row = bcm.analysis.benchmark_intervals(res, idata).iloc[0]
        hdi_row = bcm.analysis.benchmark_intervals(res, idata, kind="hdi").iloc[0]
        hits["bayescm"].append(row["bayes_lower"] <= TRUE <= row["bayes_upper"])
        hits["hdi"].append(hdi_row["bayes_lower"] <= TRUE <= hdi_row["bayes_upper"])
        hits["clt"].append(row["clt_lower"] <= TRUE <= row["clt_upper"])
        hits["clustered"].append(row["clustered_lower"] <= TRUE <= row["clustered_upper"])
        scores = df.groupby("item")["correct"].mean().to_numpy()
        cluster = (np.arange(n) // CLUSTER_SIZE) if icc > 0 else np.arange(n)
        hits["t"].append(bool(_t_hit(scores[None, :], cluster)[0]))
    return {k: np.asarray(v, dtype=float) for k, v in hits.items()}


def adjusted(hit: np.ndarray, hit_t: np.ndarray, e_t: float, e_reps: int = 40_000
             ) -> tuple[float, float]:
    """The regression (control-variate) estimate of a coverage and its MC sd (the
    residual's, and that of ``e_t`` from ``e_reps`` data sets, in quadrature)."""
    if hit_t.var() == 0 or hit.var() == 0:
        return float(hit.mean()), float(hit.std(ddof=1) / np.sqrt(hit.size))
    beta = np.cov(hit, hit_t)[0, 1] / hit_t.var(ddof=1)
    resid = hit - beta * hit_t
    var = resid.var(ddof=1) / hit.size + beta**2 * e_t * (1 - e_t) / e_reps
    return float(hit.mean() - beta * (hit_t.mean() - e_t)), float(np.sqrt(var))


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
    p.add_argument("--seed", type=int, default=2026,
                   help="seed of the simulated benchmarks (another seed: other data sets)")
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    mc = np.sqrt(0.95 * 0.05 / a.reps)
    print(f"coverage of 95% intervals, {a.reps} replications each (raw MC sd {mc:.3f}); "
          "ETI, HDI: bayescm's equal-tailed interval and HDI, raw and adjusted by the "
          "cluster-t control variate (± its MC sd); E_t: the t interval's coverage "
          "(40,000 simulated data sets)")
    print(f"{'N':>6} {'ICC':>5} {'runs':>4} {'ETI':>6} {'ETI adj':>13} {'HDI':>6} "
          f"{'HDI adj':>13} {'CLT':>6} {'clust':>6} {'t':>6} {'E_t':>6}")
    for n in map(int, a.sizes.split(",")):
        for icc in map(float, a.iccs.split(",")):
            for runs in map(int, a.runs.split(",")):
                c = one_cell(n, icc, runs, a.reps, rng)
                e_t = t_coverage(n, icc, runs)
                eti, hdi_ = (adjusted(c[k], c["t"], e_t) for k in ("bayescm", "hdi"))
                print(f"{n:>6} {icc:>5} {runs:>4} {c['bayescm'].mean():>6.3f} "
                      f"{eti[0]:>6.3f} ±{eti[1]:.3f} {c['hdi'].mean():>6.3f} "
                      f"{hdi_[0]:>6.3f} ±{hdi_[1]:.3f} {c['clt'].mean():>6.3f} "
                      f"{c['clustered'].mean():>6.3f} {c['t'].mean():>6.3f} {e_t:>6.3f}",
                      flush=True)
    if not a.null_reps:  # --null-reps 0: the coverage grid only
        return
    print(f"\nnull (equal accuracy, correlated items, ICC 0.1): share of P(A better) > 0.95, "
          f"{a.null_reps} replications (MC sd {np.sqrt(0.05 * 0.95 / a.null_reps):.3f})")
    for n in map(int, a.null_sizes.split(",")):
        print(f"{n:>6} {null_rate(n, a.null_reps, rng):.3f}", flush=True)


if __name__ == "__main__":
    main()
