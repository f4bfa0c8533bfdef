"""Exact per-slice TPR posteriors of the calibration study, by quadrature (no MCMC).

The calibration study (``bench_groups_calibration.py``) fits ``groups`` with one
factor of one level per slice.  The multinomial likelihood and the priors factor by
rate, so each slice's TPR posterior depends on its (tp, tp + fn) only, through

    logit TPR_s = mu + sigma z_s,  tp_s ~ Binomial(tp_s + fn_s, TPR_s),
    mu ~ Normal(0, 1.5),  sigma ~ HalfNormal(1),

(z iid standard normal; the model's sum-to-zero z is the same model with mu's prior
widened by sigma^2 / S, immaterial for S = 200).  Here that posterior is computed
on grids: log sigma and mu (a coarse grid finds the hyperposterior's mass, a finer
one integrates it) and each slice's log-odds on a fine grid, giving each slice's
posterior CDF exactly up to grid error (~1e-3 on a quantile).

Two uses:

* ``--compare``: one replication, the exact 5 %/50 %/95 % quantiles against the
  default engine's draws (sampler error, not Monte Carlo noise, would show as a
  mean difference well outside the draws' own scatter);
* coverage of the exact 90 % intervals over many replications, at the study's
  fixed hyperparameters (``--mode fixed``: what the study would report with a
  perfect sampler) or with mu, sigma drawn from the model's prior per replication
  (``--mode prior``: coverage must then be 0.90 in expectation, a check of the
  quadrature itself).  The error printed is sd(per-replication coverage) / sqrt(reps).

Run:  python benchmarks/bench_groups_exact.py --mode fixed --reps 300 --seed 1000
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import time

import numpy as np
from scipy import stats
from scipy.special import expit

ETA = np.linspace(-7.0, 10.0, 1701)  # the slices' log-odds grid


def _calibration():
    path = pathlib.Path(__file__).with_name("bench_groups_calibration.py")
    spec = importlib.util.spec_from_file_location("bench_groups_calibration", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def _hyper_logpost(lik: np.ndarray, mus: np.ndarray, lsig: np.ndarray) -> np.ndarray:
    """log p(mu, log sigma | data) up to a constant, on the grid (Jacobian included)."""
    step = ETA[1] - ETA[0]
    out = np.empty((len(mus), len(lsig)))
    for j, ls in enumerate(lsig):
        dens = stats.norm.pdf(ETA[None, :], mus[:, None], np.exp(ls)) * step  # (M, G)
        with np.errstate(divide="ignore"):  # far grid points: marginal underflows to 0
            out[:, j] = (np.log(lik @ dens.T).sum(0) + stats.norm.logpdf(mus, 0, 1.5)
                         + stats.halfnorm.logpdf(np.exp(ls)) + ls)
    return out


def exact_cdfs(tp: np.ndarray, pos: np.ndarray, n: int = 40) -> np.ndarray:
    """Posterior CDF of each slice's logit TPR on ``ETA``, shape (S, G)."""
    loglik = (tp[:, None] * -np.logaddexp(0, -ETA)[None]
              + (pos - tp)[:, None] * -np.logaddexp(0, ETA)[None])
    lik = np.exp(loglik - loglik.max(1, keepdims=True))
    mus, lsig = np.linspace(-3, 5, 81), np.linspace(np.log(0.02), np.log(3), 81)
    coarse = _hyper_logpost(lik, mus, lsig)
    mi, si = np.nonzero(coarse > coarse.max() - 25)  # all but e^-25 of the mass
    mus = np.linspace(mus[max(mi.min() - 1, 0)], mus[min(mi.max() + 1, 80)], n)
    lsig = np.linspace(lsig[max(si.min() - 1, 0)], lsig[min(si.max() + 1, 80)], n)
    lp = _hyper_logpost(lik, mus, lsig)
    w = np.exp(lp - lp.max())
    w /= w.sum()
    mi, si = np.nonzero(w > 1e-12)
    dens = stats.norm.pdf(ETA[None, :], mus[mi][:, None], np.exp(lsig[si])[:, None])  # (H, G)
    post = lik * ((w[mi, si][None, :] / (lik @ dens.T)) @ dens)  # mixture over (mu, sigma)
    cdf = np.cumsum(post, 1)
    return cdf / cdf[:, -1:]


def quantiles(cdf: np.ndarray, probs: list[float]) -> np.ndarray:
    """TPR quantiles (len(probs), S) from the CDFs."""
    return np.stack([expit([np.interp(p, c, ETA) for c in cdf]) for p in probs])


def simulate(cal, n_slices: int, seed: int, mode: str):
    rng = np.random.default_rng(seed)
    if mode == "fixed":
        return cal.simulate(n_slices, rng)
    hyper = np.random.default_rng([seed, 7])
    mu, sigma = hyper.normal(0, 1.5), abs(hyper.normal(0, 1.0))
    saved = dict(cal.TRUTH)
    cal.TRUTH["tpr"] = (float(expit(mu)), sigma)
    try:
        return cal.simulate(n_slices, rng)
    finally:
        cal.TRUTH.update(saved)


def coverage(n_slices: int, reps: int, seed: int, mode: str) -> None:
    cal = _calibration()
    per_rep, by_bin = [], {b: [] for b in cal.BINS}
    start = time.perf_counter()
    for k in range(reps):
        counts, truth = simulate(cal, n_slices, seed + 1000 * k, mode)
        q = quantiles(exact_cdfs(counts[:, 0] * 1.0, counts[:, :2].sum(1) * 1.0), [0.05, 0.95])
        hit = (q[0] <= truth) & (truth <= q[1])
        per_rep.append(hit.mean())
        for lo, hi in cal.BINS:
            by_bin[(lo, hi)].append(hit[(counts.sum(1) >= lo) & (counts.sum(1) < hi)])
    per_rep = np.array(per_rep)
    print(f"exact posterior, mode={mode}, {reps} replications x {n_slices} slices, seeds "
          f"{seed} + 1000 k ({time.perf_counter() - start:.0f} s)")
    print(f"coverage of 90 % intervals, all slices: {per_rep.mean():.4f} +- "
          f"{per_rep.std(ddof=1) / np.sqrt(reps):.4f}")
    for (lo, hi), hits in by_bin.items():
        h = np.concatenate(hits)
        print(f"  sizes {lo}-{hi - 1}: {h.mean():.4f} (n={h.size}, binomial error "
              f"{np.sqrt(h.mean() * (1 - h.mean()) / h.size):.4f})")


def compare(n_slices: int, seed: int, draws: int) -> None:
    import warnings

    import bayescm as bcm

    cal = _calibration()
    counts, truth = cal.simulate(n_slices, np.random.default_rng(seed))
    exact = quantiles(exact_cdfs(counts[:, 0] * 1.0, counts[:, :2].sum(1) * 1.0),
                      [0.05, 0.5, 0.95])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(bcm.models.groups(cal.sliced(counts)), draws=draws, tune=draws,
                        random_seed=seed, progressbar=False, predictive=False, prior=False,
                        log_likelihood=False)
    tpr = idata.posterior["tpr"].transpose("chain", "draw", "slice").values
    nuts = np.quantile(tpr.reshape(-1, n_slices), [0.05, 0.5, 0.95], axis=0)
    print(f"one replication (seed {seed}), {n_slices} slices, engine {idata.attrs['engine']}, "
          f"4 x {draws} draws, {int(idata.sample_stats['diverging'].sum())} divergences")
    for name, e, m in zip(("5 %", "50 %", "95 %"), exact, nuts, strict=True):
        d = m - e
        print(f"  {name} quantile, draws - exact: mean {d.mean():+.5f}, sd {d.std():.5f}, "
              f"max |.| {np.abs(d).max():.5f}")
    for name, q in (("exact", exact), ("draws", nuts)):
        print(f"  coverage of the {name} 90 % intervals: "
              f"{np.mean((q[0] <= truth) & (truth <= q[2])):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=200)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--mode", choices=("fixed", "prior"), default="fixed")
    parser.add_argument("--compare", action="store_true",
                        help="one replication: exact quantiles against the default engine")
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args()
    if args.compare:
        compare(args.slices, args.seed, args.draws)
    else:
        coverage(args.slices, args.reps, args.seed, args.mode)


if __name__ == "__main__":
    main()
