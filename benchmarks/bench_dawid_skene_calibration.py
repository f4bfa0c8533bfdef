"""Dawid–Skene calibration against crowd-kit's EM: interval coverage and reliability.

Issue #26's "must be shown": simulated 300 items x 5 raters x K = 3 with missing
ratings.  Per replication new truth is drawn (prevalence ~ Dirichlet(5, 5, 5); rater
r's recall of every class ~ U(0.55, 0.9), the rest of each row spread as Dirichlet(1, 1); each
rating missing with probability 0.3, every item keeping at least one), bayescm's
``dawid_skene`` is fitted (defaults, 4 chains x 1,000 draws) and crowd-kit's
``DawidSkene`` EM on the same ratings.  Printed:

* coverage of the 90 % equal-tailed intervals of every rater's recall per class (the
  confusion diagonal, 15 per replication), with its binomial MC error over all
  intervals (the 15 of one replication share the data, so the MC error is a little
  optimistic);
* reliability tables: items x classes pooled over replications, binned by predicted
  probability (bayescm: ``bcm.analysis.item_classes`` means; EM: ``probas_``), with the
  observed frequency of the true class in each bin (calibrated: frequency ~ mean
  predicted), the expected calibration error (ECE: bin-weighted |frequency - mean|),
  and the share of items predicted with probability > 0.99 and their error rate;
* truth recovery: accuracy of the argmax class, both.

Run from the repository root::

    .venv/bin/python benchmarks/bench_dawid_skene_calibration.py [--reps 40]
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import bayescm as bcm

N_ITEMS, N_RATERS, K, MISSING, PROB = 300, 5, 3, 0.3, 0.90
BINS = np.array([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0 + 1e-12])


def simulate(rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Long ratings, true classes ``(I,)`` and confusion matrices ``(R, K, K)``."""
    prev = rng.dirichlet(np.full(K, 5.0))
    z = rng.choice(K, size=N_ITEMS, p=prev)
    acc = rng.uniform(0.55, 0.9, N_RATERS)
    conf = np.empty((N_RATERS, K, K))
    for r in range(N_RATERS):
        for c in range(K):
            others = np.arange(K) != c
            conf[r, c, others] = rng.dirichlet(np.ones(K - 1)) * (1 - acc[r])
            conf[r, c, c] = acc[r]
    keep = rng.random((N_ITEMS, N_RATERS)) >= MISSING
    keep[np.arange(N_ITEMS), rng.integers(0, N_RATERS, N_ITEMS)] = True
    u = rng.random((N_ITEMS, N_RATERS))
    cum = np.cumsum(conf[np.arange(N_RATERS)[None, :], z[:, None]], axis=-1)
    label = np.minimum((u[..., None] > cum).sum(-1), K - 1)
    i, r = np.nonzero(keep)
    df = pd.DataFrame({"item": i, "rater": [f"r{j}" for j in r], "rating": label[i, r]})
    return df, z, conf


@dataclass
class Results:
    """Per-interval hits, per (item, class) predictions and per-item argmax hits."""

    covered: list[np.ndarray] = field(default_factory=list)
    ours: list[np.ndarray] = field(default_factory=list)
    em: list[np.ndarray] = field(default_factory=list)
    truth: list[np.ndarray] = field(default_factory=list)
    seconds: float = 0.0


def replicate(rng: np.random.Generator, results: Results, *, em: bool = True,
              seed: int = 0) -> None:
    df, z, conf = simulate(rng)
    rt = bcm.RatingsTable.from_long(df, labels=list(range(K)),
                                    raters=[f"r{r}" for r in range(N_RATERS)])
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a rare relabelled draw is reported, not fatal
        idata = bcm.fit(bcm.models.dawid_skene(rt), random_seed=seed, predictive=False,
                        prior=False, log_likelihood=False, progressbar=False)
    results.seconds += time.perf_counter() - start
    d = idata.posterior["confusion"].transpose("chain", "draw", "rater", "actual",
                                               "predicted").values
    recall = d[..., np.arange(K), np.arange(K)].reshape(-1, N_RATERS, K)
    lo, hi = np.quantile(recall, [(1 - PROB) / 2, (1 + PROB) / 2], axis=0)
    true = conf[:, np.arange(K), np.arange(K)]
    results.covered.append(((lo <= true) & (true <= hi)).ravel())
    items = np.asarray(rt.items).astype(int)
    results.ours.append(bcm.analysis.item_classes(idata, mcse=False).mean
                        .loc[list(rt.items)].to_numpy())
    results.truth.append(z[items])
    if em:
        from crowdkit.aggregation import DawidSkene

        long = df.rename(columns={"item": "task", "rater": "worker", "rating": "label"})
        probas = DawidSkene(n_iter=100).fit(long).probas_
        probas = probas.reindex(columns=range(K), fill_value=0.0).loc[items]
        results.em.append(probas.to_numpy())


def run(reps: int, *, seed: int = 2026, em: bool = True) -> Results:
    rng = np.random.default_rng(seed)
    results = Results()
    for rep in range(reps):
        replicate(rng, results, em=em, seed=seed + rep)
    return results


def coverage(results: Results) -> tuple[float, float, int]:
    """Coverage of the intervals, its binomial MC error, and how many intervals."""
    hits = np.concatenate(results.covered)
    return float(hits.mean()), float(np.sqrt(PROB * (1 - PROB) / hits.size)), hits.size


def reliability(probs: list[np.ndarray], truth: list[np.ndarray]) -> pd.DataFrame:
    """Bins of predicted probability (every item x class) with the observed frequency
    of the true class; ``attrs["ece"]``."""
    p = np.concatenate(probs).ravel()
    hit = (np.concatenate(truth)[:, None] == np.arange(K)[None, :]).ravel()
    which = np.digitize(p, BINS) - 1
    rows = []
    for b in range(len(BINS) - 1):
        sel = which == b
        if sel.any():
            rows.append({"bin": f"[{BINS[b]:.2f}, {min(BINS[b + 1], 1):.2f})", "n": int(sel.sum()),
                         "mean predicted": p[sel].mean(), "observed": hit[sel].mean(),
                         "MC se": np.sqrt(max(p[sel].mean() * (1 - p[sel].mean()), 1e-4)
                                          / sel.sum())})
    table = pd.DataFrame(rows).set_index("bin")
    table.attrs["ece"] = float(np.sum(table["n"] * (table["observed"]
                                                     - table["mean predicted"]).abs())
                               / table["n"].sum())
    return table


def overconfident(probs: list[np.ndarray], truth: list[np.ndarray]) -> tuple[float, float]:
    """Share of items whose top class has probability > 0.99, and their error rate."""
    p, z = np.concatenate(probs), np.concatenate(truth)
    sure = p.max(axis=1) > 0.99
    wrong = p.argmax(axis=1) != z
    return float(sure.mean()), float(wrong[sure].mean()) if sure.any() else float("nan")


def accuracy(probs: list[np.ndarray], truth: list[np.ndarray]) -> float:
    return float(np.mean(np.concatenate(probs).argmax(axis=1) == np.concatenate(truth)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    try:
        import crowdkit  # noqa: F401

        em = True
    except ImportError:
        print("crowd-kit not installed: bayescm only")
        em = False
    results = run(args.reps, seed=args.seed, em=em)
    cov, se, n = coverage(results)
    print(f"{args.reps} replications of {N_ITEMS} items x {N_RATERS} raters x K = {K}, "
          f"{MISSING:.0%} missing; bayescm fits {results.seconds / args.reps:.1f} s each")
    print(f"coverage of the {PROB:.0%} intervals of every rater's recall: {cov:.3f} "
          f"(MC se {se:.3f}, {n} intervals)")
    pd.set_option("display.float_format", "{:.3f}".format)
    for name, probs in (("bayescm item_classes", results.ours), ("crowd-kit EM probas_",
                                                                  results.em)):
        if not probs:
            continue
        table = reliability(probs, results.truth)
        share, err = overconfident(probs, results.truth)
        print(f"\nreliability, {name} (ECE {table.attrs['ece']:.4f}; top class > 0.99 "
              f"for {share:.1%} of items, wrong in {err:.2%} of them; argmax accuracy "
              f"{accuracy(probs, results.truth):.4f})")
        print(table.to_string())


if __name__ == "__main__":
    main()
