"""Calibration of per-slice TPR intervals: pooled bayescm vs fairlearn's bootstrap.

Simulates many slices of 5 to 500 cases (log-uniform sizes) whose true rates are
drawn from a known spread on the logit scale,

    logit TPR_s ~ Normal(logit 0.8, 0.5),  logit TNR_s ~ Normal(logit 0.9, 0.5),
    logit prevalence_s ~ Normal(logit 0.4, 0.5),

counts each slice's predictions, and sets three 90 % intervals of each slice's TPR
against the truth:

* ``bayescm``: ``bcm.models.groups(cm)`` (one factor with one level per slice; the
  partially pooled logit-normal model) fitted with NUTS on the compiled kernel
  (the default engine); equal-tailed 5 %/95 % posterior quantiles;
* ``fairlearn``: ``MetricFrame(metrics=recall, sensitive_features=slice,
  n_boot=..., ci_quantiles=[0.05, 0.95])``, the percentile bootstrap of the whole
  evaluation set.  ``recall`` is sklearn's ``recall_score`` with
  ``zero_division=0`` computed in numpy (the same number, but 3x faster: the
  bootstrap's cost is a pandas groupby per replicate, ~0.4 s for 200 slices);
  slices without positives get fairlearn's 0 (sklearn's convention): their
  interval [0, 0] cannot cover a TPR above 0, and they are counted as not covered;
* ``unpooled``: each slice's own Beta(1 + tp, 1 + fn) posterior (the three_beta
  family's exact closed form on the same sliced matrix), equal-tailed.  It would be
  calibrated only if the truth were drawn from its flat prior; it shows what the
  pooling adds.

Per slice-size bin: coverage with its Monte Carlo error, mean interval width,
mean absolute error of the point estimate (posterior mean; fairlearn's point
estimate) against the true TPR.

Monte Carlo error of a coverage.  Slices of one replication share the posterior of
the hyperparameters, so their coverage indicators are not independent: a
replication whose hyperposterior is off shifts all its intervals together.  The
error reported is therefore the larger of the binomial error sqrt(p (1 - p) / n)
over the n slice-intervals of the bin and the between-replication error
sd(bin coverage per replication) / sqrt(reps) (which contains that correlation);
with few replications the second is itself noisy, so the larger of the two is the
conservative choice.

Run:  python benchmarks/bench_groups_calibration.py --slices 200 --reps 3
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.inference.convergence import ConvergenceWarning

BINS = ((5, 20), (20, 50), (50, 150), (150, 501))
METHODS = ("bayescm", "fairlearn", "unpooled")
LEVEL = 0.90
TRUTH = {"tpr": (0.8, 0.5), "tnr": (0.9, 0.5), "prevalence": (0.4, 0.5)}


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def simulate(n_slices: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Counts (S, 4) in the order tp, fn, fp, tn and the true TPR per slice."""
    n = np.rint(np.exp(rng.uniform(np.log(5), np.log(500), n_slices))).astype(int)
    rate = {k: 1 / (1 + np.exp(-rng.normal(_logit(m), s, n_slices)))
            for k, (m, s) in TRUTH.items()}
    pos = rng.binomial(n, rate["prevalence"])
    tp = rng.binomial(pos, rate["tpr"])
    tn = rng.binomial(n - pos, rate["tnr"])
    return np.stack([tp, pos - tp, n - pos - tn, tn], -1), rate["tpr"]


def sliced(counts: np.ndarray) -> bcm.ConfusionMatrix:
    """One grouping factor ``unit`` with one level per slice."""
    labels = [f"s{i:04d}" for i in range(len(counts))]
    return bcm.ConfusionMatrix.from_slices(counts, pd.DataFrame({"unit": labels}, index=labels))


def cases(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-case y_true, y_pred and slice index of the counts (order is immaterial)."""
    reps = counts.ravel()
    y_true = np.repeat(np.tile([1, 1, 0, 0], len(counts)), reps)
    y_pred = np.repeat(np.tile([1, 0, 1, 0], len(counts)), reps)
    group = np.repeat(np.repeat(np.arange(len(counts)), 4), reps)
    return y_true, y_pred, group


def recall(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """sklearn's ``recall_score(..., zero_division=0)`` in numpy."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    positive = y_true == 1
    return float(y_pred[positive].mean()) if positive.any() else 0.0


def fairlearn_intervals(counts: np.ndarray, n_boot: int, seed: int) -> dict[str, np.ndarray]:
    from fairlearn.metrics import MetricFrame

    y_true, y_pred, group = cases(counts)
    frame = MetricFrame(metrics=recall, y_true=y_true, y_pred=y_pred,
                        sensitive_features=pd.Series(group, name="slice"), n_boot=n_boot,
                        ci_quantiles=[(1 - LEVEL) / 2, (1 + LEVEL) / 2], random_state=seed)
    lo, hi = frame.by_group_ci
    index = np.arange(len(counts))
    return {"lo": lo.reindex(index).to_numpy(float), "hi": hi.reindex(index).to_numpy(float),
            "point": frame.by_group.reindex(index).to_numpy(float)}


def bayescm_intervals(cm: bcm.ConfusionMatrix, seed: int, *, draws: int,
                      chains: int) -> tuple[dict[str, np.ndarray], int, float]:
    import arviz as az

    with warnings.catch_warnings():
        # a replication that misses R-hat < 1.01 is reported (max R-hat), not raised
        warnings.simplefilter("ignore", ConvergenceWarning)
        idata = bcm.fit(bcm.models.groups(cm), draws=draws, tune=draws, chains=chains,
                        random_seed=seed, progressbar=False, predictive=False, prior=False,
                        log_likelihood=False)
    rhat = float(az.rhat(idata, var_names=["mu", "tpr"]).to_array().max())
    tpr = idata.posterior["tpr"].transpose("chain", "draw", "slice").values
    tpr = tpr.reshape(-1, tpr.shape[-1])
    q = np.quantile(tpr, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    divergences = int(idata.sample_stats["diverging"].sum())
    return {"lo": q[0], "hi": q[1], "point": tpr.mean(0)}, divergences, rhat


def unpooled_intervals(cm: bcm.ConfusionMatrix) -> dict[str, np.ndarray]:
    """Each slice's Beta(1 + tp, 1 + fn) posterior: the three_beta closed form."""
    from scipy import stats

    from bayescm.family import get_family

    a, b = get_family("three_beta").closed_form(cm).conjugate.betas["tpr"]
    dist = stats.beta(a, b)  # exact quantiles, no draws
    return {"lo": dist.ppf((1 - LEVEL) / 2), "hi": dist.ppf((1 + LEVEL) / 2),
            "point": dist.mean()}


@dataclass
class Replication:
    """Per-slice results of one simulated evaluation."""

    sizes: np.ndarray
    truth: np.ndarray
    no_positives: np.ndarray
    intervals: dict[str, dict[str, np.ndarray]]
    divergences: int
    rhat: float
    seconds: dict[str, float]


def replicate(n_slices: int, seed: int, *, n_boot: int = 200, draws: int = 1000,
              chains: int = 4) -> Replication:
    rng = np.random.default_rng(seed)
    counts, truth = simulate(n_slices, rng)
    cm = sliced(counts)
    seconds, out = {}, {}
    t = time.perf_counter()
    out["bayescm"], divergences, rhat = bayescm_intervals(cm, seed, draws=draws, chains=chains)
    seconds["bayescm"] = time.perf_counter() - t
    t = time.perf_counter()
    out["fairlearn"] = fairlearn_intervals(counts, n_boot, seed)
    seconds["fairlearn"] = time.perf_counter() - t
    out["unpooled"] = unpooled_intervals(cm)
    return Replication(counts.sum(1), truth, counts[:, :2].sum(1) == 0, out, divergences,
                       rhat, seconds)


def table(reps: list[Replication]) -> pd.DataFrame:
    """Coverage (with MC error), mean width and mean absolute error per method and bin."""
    rows = []
    for method in METHODS:
        for lo_n, hi_n in BINS:
            per_rep, covered, width, error = [], [], [], []
            for r in reps:
                iv = r.intervals[method]
                inside = (r.sizes >= lo_n) & (r.sizes < hi_n)
                # NaN bounds (no interval) count as not covered
                hit = (iv["lo"] <= r.truth) & (r.truth <= iv["hi"])
                covered.append(hit[inside])
                per_rep.append(hit[inside].mean() if inside.any() else np.nan)
                width.append((iv["hi"] - iv["lo"])[inside])
                error.append(np.abs(iv["point"] - r.truth)[inside])
            hit = np.concatenate(covered)
            n, p = hit.size, hit.mean()
            binomial = np.sqrt(p * (1 - p) / n)
            per_rep = np.array(per_rep)[~np.isnan(per_rep)]
            between = per_rep.std(ddof=1) / np.sqrt(len(per_rep)) if len(per_rep) > 1 else 0.0
            rows.append({"method": method, "bin": f"{lo_n}-{hi_n - 1}", "n": n,
                         "coverage": p, "mc_error": max(binomial, between),
                         "width": np.nanmean(np.concatenate(width)),
                         "abs_error": np.nanmean(np.concatenate(error))})
    return pd.DataFrame(rows).set_index(["method", "bin"])


def run(n_slices: int, reps: int, *, seed: int = 0, **options) -> list[Replication]:
    return [replicate(n_slices, seed + 1000 * k, **options) for k in range(reps)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--boot", type=int, default=200, help="fairlearn's n_boot")
    parser.add_argument("--draws", type=int, default=1000, help="NUTS draws (and tune) per chain")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    reps = run(args.slices, args.reps, seed=args.seed, n_boot=args.boot, draws=args.draws,
               chains=args.chains)
    print(f"{args.reps} replications x {args.slices} slices; sizes log-uniform 5-500; "
          f"logit TPR ~ Normal(logit 0.8, 0.5); 90 % equal-tailed intervals; "
          f"fairlearn n_boot={args.boot}; NUTS {args.chains} chains x {args.draws}")
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 120):
        print(table(reps))
    print("NUTS divergences per replication:", [r.divergences for r in reps])
    print("max R-hat (mu, tpr) per replication:", [round(r.rhat, 3) for r in reps])
    print("slices without positives (fairlearn [0, 0], not covered):",
          [int(r.no_positives.sum()) for r in reps])
    for key in ("bayescm", "fairlearn"):
        print(f"seconds per replication, {key}:", [round(r.seconds[key], 1) for r in reps])


if __name__ == "__main__":
    main()
