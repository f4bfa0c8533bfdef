"""Latent-class evaluation on incomplete data, over repeated simulated studies.

Two studies, each printing its figures measured in this one run:

* ``missing``: three classifiers in two populations, 30 % of the results removed
  completely at random.  For each study the Hui–Walter model is fitted to the
  incomplete table and to the complete one; printed are the coverage of the 90 %
  equal-tailed intervals of every Se, Sp and prevalence (with its binomial Monte
  Carlo error) and the ratio of posterior sds, incomplete over complete.
* ``verification``: two classifiers on one unlabelled population, every case that
  either classifier calls positive verified and 10 % of the rest (the design of Begg
  & Greenes, "Assessment of diagnostic tests when disease verification is subject to
  selection bias", 1983).  The naive analysis of the verified cases alone (each
  classifier's Se = TP / (TP + FN) among them) is compared with the joint model of
  verified and unverified cases: bias, coverage of 90 % intervals.

Run::

    .venv/bin/python benchmarks/bench_incomplete.py --studies 100
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats

import bayescm as bcm

TRUTH_MISSING = {"se": np.array([0.85, 0.8, 0.9]), "sp": np.array([0.9, 0.85, 0.95]),
                 "prev": np.array([0.3, 0.6])}
TRUTH_VERIFIED = {"se": np.array([0.8, 0.7]), "sp": np.array([0.9, 0.95]),
                  "prev": np.array([0.2])}


def simulate_cases(rng: np.random.Generator, truth: dict, n: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cases of every population: (population index, true class, calls (case, T))."""
    pops = np.repeat(np.arange(len(truth["prev"])), n)
    d = rng.random(pops.size) < truth["prev"][pops]
    rate = np.where(d[:, None], truth["se"], 1 - truth["sp"])
    calls = rng.random(rate.shape) < rate
    return pops, d, calls


def fit(tab: bcm.AgreementTable, seed: int, **kwargs) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # identifiability / convergence notes are counted
        model = bcm.models.hui_walter(tab, **kwargs)
        return bcm.fit(model, draws=1000, chains=2, random_seed=seed, progressbar=False,
                       prior=False, log_likelihood=False)


def intervals(idata, prob: float = 0.90) -> dict[str, np.ndarray]:
    lo, hi = (1 - prob) / 2, (1 + prob) / 2
    out = {}
    for name, var in (("se", "sensitivity"), ("sp", "specificity"), ("prev", "prevalence")):
        x = idata.posterior[var].stack(s=("chain", "draw")).transpose(..., "s").values
        out[name] = np.stack([np.quantile(x, lo, axis=-1), np.quantile(x, hi, axis=-1),
                              x.mean(-1), x.std(-1)])
    return out


def missing_study(seed: int, *, n: int = 1000, share: float = 0.3) -> dict:
    rng = np.random.default_rng(seed)
    pops, _, calls = simulate_cases(rng, TRUTH_MISSING, n)
    preds = calls.astype(object).astype(int).astype(object)
    complete = bcm.AgreementTable.from_predictions(*preds.T, population=pops)
    preds[rng.random(preds.shape) < share] = None
    incomplete = bcm.AgreementTable.from_predictions(*preds.T, population=pops, positive=1)
    a, b = intervals(fit(incomplete, seed)), intervals(fit(complete, seed))
    covered = {k: (a[k][0] <= TRUTH_MISSING[k]) & (TRUTH_MISSING[k] <= a[k][1]) for k in a}
    ratio = {k: a[k][3] / b[k][3] for k in a}
    return {"covered": covered, "ratio": ratio}


def verification_study(seed: int, *, n: int = 2000, negatives: float = 0.1) -> dict:
    rng = np.random.default_rng(seed)
    _, d, calls = simulate_cases(rng, TRUTH_VERIFIED, n)
    verified = calls.any(axis=1) | (rng.random(n) < negatives)
    y = np.where(verified, d.astype(int), -1).astype(object)
    y[~verified] = None
    tab = bcm.AgreementTable.from_predictions(*calls.T.astype(int), y_true=y, positive=1)
    joint = intervals(fit(tab, seed))
    # naive: each classifier's Se and Sp from the verified cases alone, Beta(1, 1) prior
    naive = {}
    for key, cls, hit in (("se", d, True), ("sp", ~d, False)):
        k = np.array([np.sum(verified & cls & (calls[:, t] == hit)) for t in range(2)])
        m = np.array([np.sum(verified & cls) for t in range(2)])
        post = stats.beta(1 + k, 1 + m - k)
        naive[key] = np.stack([post.ppf(0.05), post.ppf(0.95), post.mean(), post.std()])
    out = {}
    for name, res in (("joint", joint), ("naive", naive)):
        out[name] = {k: {"mean": res[k][2], "covered": (res[k][0] <= TRUTH_VERIFIED[k])
                         & (TRUTH_VERIFIED[k] <= res[k][1])} for k in ("se", "sp")}
    return out


def _rate(hits: np.ndarray) -> str:
    p = hits.mean(axis=0)
    se = np.sqrt(np.maximum(p * (1 - p), 1e-12) / hits.shape[0])
    return ", ".join(f"{a:.3f}±{b:.3f}" for a, b in zip(np.atleast_1d(p), np.atleast_1d(se),
                                                         strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument("--only", choices=("missing", "verification"))
    args = parser.parse_args()
    if args.only in (None, "missing"):
        t0 = time.perf_counter()
        runs = [missing_study(s) for s in range(args.studies)]
        print(f"missing results (30% MCAR, T=3, P=2, n=1000 per population), "
              f"{args.studies} studies, {time.perf_counter() - t0:.0f} s")
        for k in ("se", "sp", "prev"):
            cov = np.array([r["covered"][k] for r in runs])
            ratio = np.array([r["ratio"][k] for r in runs]).mean(axis=0)
            print(f"  {k:5s} 90% coverage {_rate(cov)}   sd ratio incomplete/complete "
                  + ", ".join(f"{x:.2f}" for x in ratio))
    if args.only in (None, "verification"):
        t0 = time.perf_counter()
        runs = [verification_study(s) for s in range(args.studies)]
        print(f"verification of all test-positives and 10% of test-negatives (T=2, P=1, "
              f"n=2000), {args.studies} studies, {time.perf_counter() - t0:.0f} s")
        for k in ("se", "sp"):
            for name in ("naive", "joint"):
                mean = np.array([r[name][k]["mean"] for r in runs]).mean(axis=0)
                cov = np.array([r[name][k]["covered"] for r in runs])
                print(f"  {k} {name:5s} mean {np.round(mean, 3)} (truth "
                      f"{TRUTH_VERIFIED[k]})  90% coverage {_rate(cov)}")


if __name__ == "__main__":
    main()
