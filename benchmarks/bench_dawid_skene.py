"""Dawid–Skene at scale: 10^4 items x 10 raters x K = 5, 30 % of the ratings missing.

The issue's benchmark (#26): the fit should take under 2 minutes on two cores with
R-hat < 1.01 and no divergences, and recover the true classes at least as often as
crowd-kit's EM ``DawidSkene``.  Run from the repository root::

    .venv/bin/python benchmarks/bench_dawid_skene.py [--pooling partial] [--profile-only]

It prints: the data's size (items, ratings, distinct patterns), the compiled kernel's
time per log density + gradient (CPU time, best of 5 passes of a numba loop over 200
random points: nutpie's inner loop, no Python between calls), the fit's wall time (4 chains,
the default 1,000 tuning steps and 1,000 draws), the number of gradient evaluations
(nutpie's ``n_steps`` summed) and kernel time x evaluations, max R-hat, divergences,
and the share of items whose most probable class (``bcm.analysis.item_classes``) is
the true one, next to crowd-kit EM's and the majority vote's.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

import bayescm as bcm

N_ITEMS, N_RATERS, K, MISSING = 10_000, 10, 5, 0.3


def simulate(n_items: int = N_ITEMS, n_raters: int = N_RATERS, k: int = K,
             missing: float = MISSING, seed: int = 0
             ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Long ratings, true classes ``(I,)`` and confusion matrices ``(R, K, K)``.

    Prevalence ~ Dirichlet(5); rater r's accuracy ~ U(0.55, 0.9), the rest of each row
    spread as Dirichlet(1); each (item, rater) rating missing with probability
    ``missing``.
    """
    rng = np.random.default_rng(seed)
    prev = rng.dirichlet(np.full(k, 5.0))
    z = rng.choice(k, size=n_items, p=prev)
    acc = rng.uniform(0.55, 0.9, n_raters)
    conf = rng.dirichlet(np.ones(k), size=(n_raters, k)) * (1 - acc)[:, None, None]
    conf[:, np.arange(k), np.arange(k)] += acc[:, None]
    keep = rng.random((n_items, n_raters)) >= missing
    keep[np.arange(n_items), rng.integers(0, n_raters, n_items)] = True  # >= 1 rating
    u = rng.random((n_items, n_raters))
    cum = np.cumsum(conf[np.arange(n_raters)[None, :], z[:, None]], axis=-1)
    label = np.minimum((u[..., None] > cum).sum(-1), k - 1)
    i, r = np.nonzero(keep)
    df = pd.DataFrame({"item": i, "rater": [f"r{j}" for j in r], "rating": label[i, r]})
    return df, z, conf


def kernel_time(model) -> tuple[float, int]:
    """Seconds per log density + gradient of the family's compiled kernel, and its dim."""
    import numba

    from bayescm.models import family_of, spec_of

    ker = family_of(model).kernel(model, spec_of(model))
    density = ker.module.log_density

    @numba.njit
    def loop(xs, ud, g):
        s = 0.0
        for i in range(xs.shape[0]):
            s += density(xs[i], ud, g)
        return s

    xs = np.random.default_rng(0).normal(0, 0.1, (200, ker.n_dim))
    g = np.zeros(ker.n_dim)
    loop(xs[:2], ker.user_data, g)
    best = np.inf
    for _ in range(5):  # CPU time: on a shared machine wall time counts the others' work
        start = time.process_time()
        loop(xs, ker.user_data, g)
        best = min(best, (time.process_time() - start) / len(xs))
    return best, ker.n_dim


def crowdkit_accuracy(df: pd.DataFrame, z: np.ndarray) -> float | None:
    """crowd-kit EM DawidSkene's truth recovery, or None when crowd-kit is absent."""
    try:
        from crowdkit.aggregation import DawidSkene
    except ImportError:
        return None
    long = df.rename(columns={"item": "task", "rater": "worker", "rating": "label"})
    labels = DawidSkene(n_iter=100).fit_predict(long).sort_index()
    return float(np.mean(labels.to_numpy().astype(int) == z[labels.index.to_numpy().astype(int)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pooling", default="none", choices=["none", "partial"])
    parser.add_argument("--items", type=int, default=N_ITEMS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile-only", action="store_true")
    args = parser.parse_args()
    df, z, _ = simulate(n_items=args.items)
    rt = bcm.RatingsTable.from_long(df, labels=list(range(K)))
    print(f"{rt.n_items:,} items x {rt.n_raters} raters x K = {K}: {rt.n_ratings:,} ratings, "
          f"{len(rt.patterns()):,} distinct patterns; pooling={args.pooling!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = bcm.models.dawid_skene(rt, pooling=args.pooling)
    per_eval, n_dim = kernel_time(model)
    print(f"kernel: {n_dim} parameters, {per_eval * 1e3:.3f} ms per log density + gradient")
    if args.profile_only:
        return
    start, cpu = time.perf_counter(), time.process_time()
    idata = bcm.fit(model, chains=4, random_seed=args.seed, predictive=False, prior=False,
                    log_likelihood=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    steps = int(idata.sample_stats["n_steps"].sum()) if "n_steps" in idata.sample_stats else 0
    import arviz as az

    rhat = az.rhat(idata, var_names=["prevalence", "confusion"])
    max_rhat = max(float(rhat[v].max()) for v in rhat.data_vars)
    div = int(idata.sample_stats["diverging"].sum())
    print(f"fit: {wall:.1f} s wall, {cpu:.1f} s CPU (4 chains, 1,000 tune + 1,000 draws; "
          f"engine {idata.attrs.get('engine', '?')}; load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores), max R-hat {max_rhat:.4f}, "
          f"{div} divergences")
    if steps:
        print(f"gradient evaluations: {steps:,} (x {per_eval * 1e3:.3f} ms = "
              f"{steps * per_eval:.1f} s of kernel time over all chains)")
    ours = bcm.analysis.item_classes(idata, mcse=False).most_probable
    acc = float(np.mean(ours.to_numpy().astype(int) == z[ours.index.to_numpy().astype(int)]))
    votes = rt.counts.sum(axis=1).argmax(axis=1)
    print(f"truth recovery: bayescm {acc:.4f}, majority vote "
          f"{np.mean(votes == z[list(rt.items)]):.4f}", end="")
    em = crowdkit_accuracy(df, z)
    print(f", crowd-kit EM {em:.4f}" if em is not None else "; crowd-kit not installed")


if __name__ == "__main__":
    main()
