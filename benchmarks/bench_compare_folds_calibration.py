"""Calibration across folds (issue 28): coverage of 95% intervals for the mean accuracy
from ``bcm.models.folds`` with prob-conf-mat's aggregators side by side, and the null
calibration of ``compare_folds``.

Folds: k in {5, 10}, 200 cases each (positives ~ Binomial(200, 0.4)); fold TPR and TNR
drawn from Betas with means 0.85 and 0.80 and between-fold sd in {0, 0.03, 0.06}; the
target is the mean accuracy 0.4 * 0.85 + 0.6 * 0.80 = 0.82 (the folds model's "mean"
unit).  Each interval is a 95% HDI; each coverage p is printed with its Monte Carlo
standard error sqrt(p (1 - p) / reps) (0.015 at 200 replicates and p = 0.95).

The folds model averages identical folds (prior probability 0.5 per rate) with a spread
tau = (kappa + 1)^(-1/2) ~ Beta(1, 1) (``bayescm.models.folds.identical`` and
``.spread``); the column "mean P(identical)" is the posterior probability of identical
folds averaged over TPR, TNR and the replicates.  Without the average (Beta(1, 1) alone)
the model covered 1.00 / 0.99 / 0.98 (5 folds) and 0.98 / 0.98 / 1.00 (10 folds) at sd
0 / 0.03 / 0.06; its first default, kappa ~ Gamma(2, 0.02), covered 0.99-1.00 at sd 0
and fell to 0.87 at sd 0.06 with 5 folds.

Usage: ``python benchmarks/bench_compare_folds_calibration.py [reps] [null_reps] [k ...]``
(``null_reps`` 0 skips the null check; ``k`` defaults to 5 and 10).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import bayescm as bcm
from bayescm.stats import hdi

PHI, TPR, TNR, N = 0.4, 0.85, 0.80, 200
TRUTH = PHI * TPR + (1 - PHI) * TNR


def simulate(rng: np.random.Generator, k: int, sd: float) -> bcm.ConfusionMatrix:
    def rates(mean: float) -> np.ndarray:
        if sd == 0:
            return np.full(k, mean)
        kappa = mean * (1 - mean) / sd**2 - 1
        return rng.beta(mean * kappa, (1 - mean) * kappa, k)

    pos = rng.binomial(N, PHI, k)
    tp, tn = rng.binomial(pos, rates(TPR)), rng.binomial(N - pos, rates(TNR))
    return bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=N - pos - tn, tn=tn,
                               classifier=[f"f{i}" for i in range(k)])


def pcm_intervals(cms: bcm.ConfusionMatrix, seed: int) -> dict[str, tuple[float, float]]:
    import prob_conf_mat as pcm

    out = {}
    for agg in ("beta", "fe_gaussian", "re_gaussian"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study = pcm.Study(seed=seed, num_samples=4000)
            for i in range(len(cms)):
                c = {x: int(cms.cell(x)[i]) for x in bcm.CELLS}
                study.add_experiment(f"cv/f{i}", confusion_matrix=np.array(
                    [[c["tp"], c["fn"]], [c["fp"], c["tn"]]]), confusion_prior=1,
                    prevalence_prior=1)
            study.add_metric("acc", aggregation=agg)
            values = np.asarray(study.get_metric_samples("acc", "cv/aggregated",
                                                         "posterior").values).ravel()
        low, high = hdi(values, 0.95)
        out[f"pcm_{agg}"] = (float(low), float(high))
    return out


def coverage(reps: int, ks: tuple[int, ...] = (5, 10)) -> None:
    print(f"95% HDI coverage of the mean accuracy {TRUTH:.3f}, {reps} replicates per row, "
          "coverage (MC standard error sqrt(p(1-p)/reps))")
    header = None
    for k in ks:
        for sd in (0.0, 0.03, 0.06):
            rng = np.random.default_rng(1000 * k + int(sd * 100))
            hits: dict[str, int] = {}
            divergent, p_identical = 0, 0.0
            start = time.perf_counter()
            for rep in range(reps):
                cms = simulate(rng, k, sd)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", bcm.ConvergenceWarning)
                    idata = bcm.fit(bcm.models.folds(cms), draws=1000, chains=4,
                                    random_seed=rep, progressbar=False, prior=False,
                                    predictive=False, metrics=["acc"])
                divergent += int(idata.sample_stats["diverging"].sum() > 0)
                p_identical += sum(idata.posterior[f"{r}_identical"].attrs["probability"]
                                   for r in ("tpr", "tnr")) / 2
                acc = idata.posterior["acc"].sel(classifier="mean").values.ravel()
                intervals = {"bayescm_folds": tuple(hdi(acc, 0.95))}
                try:
                    intervals.update(pcm_intervals(cms, rep))
                except Exception as err:  # report a peer's failure, go on
                    print(f"  prob-conf-mat failed: {err!r}")
                for name, (low, high) in intervals.items():
                    hits[name] = hits.get(name, 0) + int(low <= TRUTH <= high)
            if header is None:
                header = list(hits)
                print(f"{'k':>3} {'sd':>5} " + " ".join(f"{h:>16}" for h in header)
                      + "  fits with divergences  mean P(identical)  seconds")

            def cell(h: str, hits: dict[str, int] = hits) -> str:
                p = hits.get(h, 0) / reps
                return f"{p:.3f} ({np.sqrt(p * (1 - p) / reps):.3f})"

            print(f"{k:>3} {sd:>5.2f} " + " ".join(f"{cell(h):>16}" for h in header)
                  + f"  {divergent:>21d}  {p_identical / reps:17.2f}  "
                  f"{time.perf_counter() - start:7.1f}", flush=True)


def null_rate(reps: int) -> None:
    from bayescm.analysis import compare_folds

    print(f"\nNull (equal algorithms, fold sd 0.03, 10 folds of 200): share of {reps} data sets "
          "with P(a better) > 0.95 (should be <= 0.05)")
    for plug_in in (True, False):
        rng = np.random.default_rng(77)
        hits = 0
        for rep in range(reps):
            shift = rng.normal(0, 0.03, 10)
            mats = []
            for _ in range(2):
                pos = rng.binomial(N, 0.5, 10)
                p = np.clip(0.8 + shift, 0, 1)
                tp, tn = rng.binomial(pos, p), rng.binomial(N - pos, p)
                mats.append(bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=N - pos - tn, tn=tn))
            res = compare_folds(*mats, "acc", rope=0.01, plug_in=plug_in, draws=1000,
                                random_seed=rep)
            hits += res.p_a_better > 0.95
        print(f"  plug_in={plug_in!s:5}: {hits / reps:.3f} "
              f"(MC sd at 0.05: {np.sqrt(0.05 * 0.95 / reps):.3f})", flush=True)


if __name__ == "__main__":
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    null_reps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    ks = tuple(int(x) for x in sys.argv[3:]) or (5, 10)
    if null_reps:
        null_rate(null_reps)
    coverage(reps, ks)
