r"""Two algorithms across many data sets: the hierarchical correlated t-test.

Corani, Benavoli, Demšar, Mangili & Zaffalon, "Statistical comparison of classifiers
through Bayesian hierarchical modelling", Machine Learning 106 (2017).  On data set
:math:`i` (:math:`i = 1..q`) k-fold cross-validation, repeated ``runs`` times, gives
:math:`n_i` fold differences :math:`x_{ij} = m(A_{ij}) - m(B_{ij})` of the plug-in
metric (any metric of the registry, from the folds' confusion matrices), and

.. math::

    x_i \sim N\bigl(\delta_i 1,\ \sigma_i^2 ((1-\rho_i) I + \rho_i 1 1^\top)\bigr),
    \qquad \rho_i = 1/k_i \ \text{(Nadeau–Bengio)},

    \delta_i \sim t_\nu(\delta_0, \sigma_0),\qquad
    \sigma_i \sim U(0, \bar\sigma),\qquad
    \delta_0 \sim U(-D, D),\qquad \sigma_0 \sim U(0, \bar\sigma_0),

    \nu - 1 \sim \mathrm{Gamma}(\alpha, \beta),\qquad
    \alpha \sim U(\underline\alpha, \bar\alpha),\qquad
    \beta \sim U(\underline\beta, \bar\beta).

As in the paper (and baycomp), the differences are first divided by
:math:`s = \frac1q\sum_i \mathrm{sd}(x_i)` (the rope too), :math:`D = \max|x|`,
:math:`\bar\sigma = 1000 \cdot s_{within}`, :math:`\bar\sigma_0 = 1000 \cdot
\mathrm{sd}_i(\bar x_i)`, and :math:`(\underline\alpha, \bar\alpha,
\underline\beta, \bar\beta) = (1, 2, 0.01, 0.1)`: :data:`DEFAULT_PRIORS`, each
overridable by name with ``priors=``.

How it is sampled (NUTS through nutpie on a compiled density, no Stan)
    The likelihood depends on the data only through :math:`\bar x_i` and
    :math:`SS_i = \sum_j (x_{ij} - \bar x_i)^2`: with the compound-symmetry
    covariance, :math:`(x - \delta 1)^\top \Sigma^{-1} (x - \delta 1) = Q_i/\sigma_i^2`,

    .. math::

        Q_i(\delta_i) = \frac{SS_i}{1 - \rho_i}
            + \frac{n_i (\bar x_i - \delta_i)^2}{1 - \rho_i + n_i \rho_i},

    and :math:`\sigma_i` is integrated out exactly (its upper bound,
    :math:`1000\times` the observed spread, is where the integrand is
    :math:`O(10^{-3n})`: ignored):
    :math:`\int_0^\infty \sigma^{-n} e^{-Q/2\sigma^2} d\sigma \propto Q^{-(n-1)/2}`.
    NUTS then moves in :math:`q + 5` dimensions, with :math:`\delta_i` non-centred
    (:math:`\delta_i = \delta_0 + \sigma_0 z_i`, :math:`z_i \sim t_\nu(0, 1)`), and
    :math:`\sigma_i^{-2} \mid \delta_i \sim \mathrm{Gamma}((n_i-1)/2,\ Q_i/2)` is drawn
    afterwards.  The density is compiled once
    (:mod:`bayescm.analysis.compare_datasets_kernel`, equal to the PyMC model
    :func:`_model` that PyMC samples when nutpie is absent).  A data set whose fold
    differences are all equal has no within-set variance, an unbounded likelihood at
    :math:`\delta_i = \bar x_i`, and is refused with a message.

What is reported
    Per data set the posterior of :math:`\delta_i` (shrunk towards
    :math:`\delta_0`: the table shows it next to the observed mean) and
    :math:`P(\delta_i > r)`, :math:`P(|\delta_i| \le r)`, :math:`P(\delta_i < -r)`.
    Overall, the paper's decision rule: for each posterior draw the probabilities
    that the :math:`\delta` of a *new* data set, :math:`t_\nu(\delta_0, \sigma_0)`,
    lies in each region -- a point in the simplex -- and ``p_a_better``,
    ``p_rope``, ``p_b_better`` are the fractions of draws in which that region is
    the most probable (baycomp's convention); ``predictive_probs`` are the mean
    points (the probabilities of each region for a new data set).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayescm.analysis.fold_metrics import (
    as_folds,
    check_pair,
    check_rope,
    metric_key,
    plug_in_values,
)
from bayescm.stats import hdi

__all__ = ["DEFAULT_PRIORS", "DatasetComparison", "compare_datasets"]

#: The hierarchical model's prior settings (Corani et al. 2017; baycomp's defaults):
#: bounds relative to the standardised differences.
DEFAULT_PRIORS: dict[str, float] = {
    "delta0_bound": 1.0,    # delta0 ~ U(-b max|x|, b max|x|)
    "std0_upper": 1000.0,   # sigma0 ~ U(0, u * sd of the data sets' means)
    # sigma_i ~ U(0, u * mean within-set sd): recorded, not used -- sigma_i is integrated
    # out over (0, infinity), the bound being where the integrand is O(1e-3n)
    "sigma_upper": 1000.0,
    "alpha_lower": 1.0, "alpha_upper": 2.0,   # nu - 1 ~ Gamma(alpha, beta)
    "beta_lower": 0.01, "beta_upper": 0.1,
}


@dataclass(frozen=True, eq=False)
class DatasetComparison:
    """Posterior of the hierarchical comparison of A and B across data sets.

    Attributes: ``metric``, ``rope``, ``names``, ``datasets``, ``p_a_better``,
    ``p_rope``, ``p_b_better`` (decision rule on the predictive for a new data set),
    ``predictive`` (draws × 3 simplex points, columns A better / rope / B better),
    ``predictive_probs`` (their means), ``delta`` (draws × data sets, metric units),
    ``delta_new`` (draws of a new data set's difference), ``observed_mean``,
    ``priors``, ``r_hat`` (largest), ``divergences``.
    """

    metric: str
    rope: float
    names: tuple[str, str]
    datasets: list[str]
    p_a_better: float
    p_rope: float
    p_b_better: float
    predictive: np.ndarray = field(repr=False)
    delta: np.ndarray = field(repr=False)
    delta_new: np.ndarray = field(repr=False)
    delta0: np.ndarray = field(repr=False)
    observed_mean: np.ndarray = field(repr=False)
    priors: dict[str, float] = field(repr=False)
    r_hat: float = float("nan")
    divergences: int = 0
    higher_is_better: bool = True

    @property
    def predictive_probs(self) -> tuple[float, float, float]:
        """P(a new data set's difference shows A better / within rope / B better)."""
        a, r, b = self.predictive.mean(axis=0)
        return float(a), float(r), float(b)

    def to_frame(self, hdi_prob: float = 0.95) -> pd.DataFrame:
        """Per data set: observed mean difference, shrunk posterior mean, HDI, P's."""
        low, high = hdi(self.delta, hdi_prob, axis=0)
        a_side, b_side = _sides(self.delta, self.rope, self.higher_is_better)
        a, b = self.names
        return pd.DataFrame({
            "observed_mean": self.observed_mean, "posterior_mean": self.delta.mean(axis=0),
            "hdi_lower": low, "hdi_upper": high, f"p_{a}_better": a_side.mean(axis=0),
            "p_rope": 1 - a_side.mean(axis=0) - b_side.mean(axis=0),
            f"p_{b}_better": b_side.mean(axis=0)},
            index=pd.Index(self.datasets, name="dataset"))

    def summary(self, hdi_prob: float = 0.95) -> pd.DataFrame:
        r"""Overall: the mean difference δ0, a new data set's, and the probabilities.

        A new data set's difference is the model's :math:`t_\nu(\delta_0, \sigma_0)`,
        which, as in Corani et al. (2017) and baycomp, is not bounded to the metric's
        range: with few data sets or a small :math:`\nu` its HDI can reach beyond ±1
        (read it as "the sign is not settled"; the probabilities are what to report)."""
        a, b = self.names
        rows = []
        for what, x in (("delta0", self.delta0), ("new data set", self.delta_new)):
            low, high = hdi(x, hdi_prob)
            rows.append({"quantity": what, "mean": float(np.mean(x)),
                         "hdi_lower": float(low), "hdi_upper": float(high)})
        table = pd.DataFrame(rows).set_index("quantity")
        pa, pr, pb = self.predictive_probs
        table.attrs = {f"p_{a}_better": self.p_a_better, "p_rope": self.p_rope,
                       f"p_{b}_better": self.p_b_better, "predictive_probs": (pa, pr, pb),
                       "r_hat": self.r_hat, "divergences": self.divergences}
        return table

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The simplex of the predictive (:func:`bayescm.plots.datasets_simplex`)."""
        from bayescm.plots.folds import datasets_simplex

        return datasets_simplex(self, ax=ax, **kwargs)

    def plot_forest(self, ax: Any = None, **kwargs: Any) -> Any:
        """δ_i per data set, shrunk, next to the observed means
        (:func:`bayescm.plots.datasets_forest`)."""
        from bayescm.plots.folds import datasets_forest

        return datasets_forest(self, ax=ax, **kwargs)

    def __repr__(self) -> str:
        a, b = self.names
        return (f"DatasetComparison({self.metric} over {len(self.datasets)} data sets: "
                f"P({a} better) = {self.p_a_better:.3f}, P(rope ±{self.rope:g}) = "
                f"{self.p_rope:.3f}, P({b} better) = {self.p_b_better:.3f}; max R-hat "
                f"{self.r_hat:.3f}, {self.divergences} divergences)")


def _prior_settings(priors: Mapping[str, float] | None) -> dict[str, float]:
    """:data:`DEFAULT_PRIORS` with the user's overrides, checked: finite, positive, and
    each lower bound below its upper bound."""
    settings = dict(DEFAULT_PRIORS)
    for name, value in (priors or {}).items():
        if name not in settings:
            raise ValueError(f"Unknown prior setting {name!r}; the settings are "
                             f"{', '.join(DEFAULT_PRIORS)}.")
        try:
            settings[name] = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"priors[{name!r}] must be a number, got {value!r}.") from None
        if not np.isfinite(settings[name]) or settings[name] <= 0:
            raise ValueError(f"priors[{name!r}] must be a finite number > 0, got {value!r}.")
    for low, high in (("alpha_lower", "alpha_upper"), ("beta_lower", "beta_upper")):
        if not settings[low] < settings[high]:
            raise ValueError(f"priors: {low} ({settings[low]:g}) must be below {high} "
                             f"({settings[high]:g}).")
    return settings


def _warn_unconverged(r_hat: float, divergences: int, chains: int,
                      target_accept: float) -> None:
    """The ConvergenceWarning of :func:`bayescm.fit`, on the bounds it uses (R-hat below
    1.01, no divergent transitions)."""
    from bayescm.inference.convergence import ConvergenceWarning

    problems = []
    if chains < 2:
        problems.append("one chain cannot show convergence (R-hat needs 2 or more)")
    elif not r_hat < 1.01:
        problems.append(f"max R-hat {r_hat:.4f} (bound 1.01)")
    if divergences:
        problems.append(f"{divergences} divergent transitions")
    if problems:
        warnings.warn(f"compare_datasets: NOT converged: {'; '.join(problems)}. Its "
                      "probabilities may be wrong: run it again with more tuning (tune=2000) "
                      f"and a higher target_accept (now {target_accept:g}; e.g. 0.99), and "
                      "4 chains.", ConvergenceWarning, stacklevel=3)


def _sides(x: np.ndarray, rope: float, higher: bool) -> tuple[np.ndarray, np.ndarray]:
    above, below = x > rope, x < -rope
    return (above, below) if higher else (below, above)


def _differences(cms_a: Any, cms_b: Any, metric: str, runs: int
                 ) -> tuple[list[str], list[np.ndarray], str, bool]:
    if isinstance(cms_a, Mapping) != isinstance(cms_b, Mapping):
        raise TypeError("cms_a and cms_b must both be mappings {data set: folds} or both "
                        "sequences of per-data-set fold batches.")
    if isinstance(cms_a, Mapping):
        if list(cms_a) != list(cms_b):
            raise ValueError("cms_a and cms_b must have the same data sets in the same order.")
        names, items_a, items_b = [str(k) for k in cms_a], list(cms_a.values()), \
            list(cms_b.values())
    elif isinstance(cms_a, Sequence) and isinstance(cms_b, Sequence):
        if len(cms_a) != len(cms_b):
            raise ValueError(f"cms_a has {len(cms_a)} data sets and cms_b {len(cms_b)}.")
        names = [f"dataset{i}" for i in range(len(cms_a))]
        items_a, items_b = list(cms_a), list(cms_b)
    else:
        raise TypeError("cms_a and cms_b must be mappings {data set: per-fold confusion "
                        "matrices} or lists of per-fold batches, one per data set.")
    if len(names) < 2:
        raise ValueError("A hierarchical model across data sets needs at least two data sets; "
                         "for one data set use compare_folds.")
    diffs, key, higher = [], "", True
    for name, a, b in zip(names, items_a, items_b, strict=True):
        a, b = as_folds(a, f"cms_a[{name!r}]"), as_folds(b, f"cms_b[{name!r}]")
        check_pair(a, b, runs)
        key, higher = metric_key(a, metric)
        # the hierarchical model takes plug-in values: another metric is the way out
        instead = ("compare on a metric defined on every fold (e.g. 'acc', 'ba' or "
                   "'mcc'), or compare_folds per data set")
        diffs.append(plug_in_values(a, key, f"cms_a[{name!r}]", instead)
                     - plug_in_values(b, key, f"cms_b[{name!r}]", instead))
    return names, diffs, key, higher


def _model(xbar: np.ndarray, ssw: np.ndarray, n: np.ndarray, rho: np.ndarray,
           bounds: Mapping[str, float]) -> Any:
    import pymc as pm
    import pytensor.tensor as pt

    q = len(xbar)
    with pm.Model(coords={"dataset": np.arange(q)}) as model:
        xbar_d, ssw_d = pm.Data("xbar", xbar), pm.Data("ssw", ssw)
        n_d, rho_d = pm.Data("n", n.astype(float)), pm.Data("rho", rho)
        d_bound, s0_up = pm.Data("delta0_hi", bounds["delta0"]), pm.Data("std0_hi", bounds["std0"])
        delta0 = pm.Uniform("delta0", -d_bound, d_bound)
        std0 = pm.Uniform("std0", 0.0, s0_up)
        alpha = pm.Uniform("gamma_alpha", bounds["alpha_lower"], bounds["alpha_upper"])
        beta = pm.Uniform("gamma_beta", bounds["beta_lower"], bounds["beta_upper"])
        nu_m1 = pm.Gamma("nu_minus_one", alpha=alpha, beta=beta)
        nu = pm.Deterministic("nu", nu_m1 + 1)
        z = pm.StudentT("z", nu=nu, mu=0.0, sigma=1.0, dims="dataset")
        delta = pm.Deterministic("delta", delta0 + std0 * z, dims="dataset")
        quad = ssw_d / (1 - rho_d) + n_d * (xbar_d - delta) ** 2 / (1 - rho_d + n_d * rho_d)
        pm.Potential("fold_differences", pt.sum(-(n_d - 1) / 2 * pt.log(quad)))
    return model


def _sample(xbar: np.ndarray, ssw: np.ndarray, n: np.ndarray, rho: np.ndarray,
            bounds: Mapping[str, float], draws: int, tune: int, chains: int, seed: int,
            target_accept: float) -> tuple[dict[str, np.ndarray], Any]:
    """NUTS draws: nutpie on the compiled density (no model to compile), else PyMC."""
    from bayescm.inference import engines

    kwargs = dict(draws=draws, tune=tune, chains=chains, seed=seed, progressbar=False,
                  target_accept=target_accept)
    q = len(xbar)
    if engines.kernel_supported():
        from bayescm.analysis import compare_datasets_kernel as ker
        from bayescm.family import Kernel

        kernel = Kernel(ker, ker.user_data(xbar, ssw, n, rho, dict(bounds)), q + 5,
                        list(ker.NAMES), [()] * 5 + [(q,)])
        values, sample_stats = engines.sample_kernel(kernel, **kwargs)
        values["nu"] = values["nu_minus_one"] + 1.0
        values["delta"] = values["delta0"][..., None] + values["std0"][..., None] * values["z"]
        return values, sample_stats
    model = _model(xbar, ssw, n, rho, bounds)
    try:
        return engines.sample_nutpie(model, structure=("compare_datasets", q), **kwargs)
    except ImportError:  # nutpie absent: PyMC's own NUTS
        return engines.sample_pymc(model, **kwargs)


def compare_datasets(cms_a: Any, cms_b: Any, metric: str = "acc", *, rope: float = 0.01,
                     runs: int = 1, priors: Mapping[str, float] | None = None,
                     draws: int = 1000, tune: int = 1000, chains: int = 4,
                     target_accept: float = 0.95, random_seed: int | None = None,
                     names: tuple[str, str] = ("a", "b")) -> DatasetComparison:
    r"""Compare two algorithms across data sets with the hierarchical model.

    See the module docstring for the model (Corani et al. 2017), its priors and
    how it is sampled.

    Parameters
    ----------
    cms_a, cms_b
        ``{data set: per-fold confusion matrices}`` for A and B (same keys, same
        order), or lists of per-fold batches; each data set's folds are ``runs ×
        folds`` in order, as for :func:`compare_folds` (binary or K-class batches,
        frames, lists).
    metric
        A registry key or alias; the plug-in value of each fold enters the model.
    rope
        Half-width of the region of practical equivalence, in metric units.
    runs
        Repetitions of cross-validation (the same for every data set).
    priors
        Overrides of :data:`DEFAULT_PRIORS` by name.
    draws, tune, chains, target_accept, random_seed
        NUTS settings.
    names
        Labels of A and B.

    Returns
    -------
    DatasetComparison
        ``p_a_better``, ``p_rope``, ``p_b_better``, ``predictive``, ``to_frame()``
        (per data set, with the shrinkage), ``summary()``, ``plot()`` (simplex),
        ``plot_forest()``; ``r_hat`` and ``divergences`` of the run.

    Examples
    --------
    >>> import numpy as np, bayescm as bcm
    >>> rng = np.random.default_rng(0)
    >>> def folds(acc):
    ...     tp = rng.binomial(50, acc, 10); tn = rng.binomial(50, acc, 10)
    ...     return bcm.ConfusionMatrix(tp=tp, fn=50 - tp, fp=50 - tn, tn=tn)
    >>> a = {f"d{i}": folds(0.85) for i in range(6)}
    >>> b = {f"d{i}": folds(0.80) for i in range(6)}
    >>> res = bcm.analysis.compare_datasets(a, b, "acc", random_seed=1)  # doctest: +SKIP
    >>> res.p_a_better > 0.5  # doctest: +SKIP
    True
    """
    check_rope(rope)
    from bayescm.inference.arguments import check_seed, check_target_accept
    from bayescm.inference.fit import check_sizes

    check_sizes(draws, tune, chains)  # bcm.fit's checks of the same NUTS settings
    check_target_accept(target_accept)
    check_seed(random_seed)
    settings = _prior_settings(priors)
    datasets, diffs, key, higher = _differences(cms_a, cms_b, metric, runs)
    flat = [d for d in diffs if np.ptp(d) == 0]
    if flat:
        bad = [datasets[i] for i, d in enumerate(diffs) if np.ptp(d) == 0]
        raise ValueError(
            f"All fold differences are equal on data set(s) {bad}: no within-set variance, "
            "and the hierarchical likelihood is unbounded there.  Drop those data sets, or "
            "check that A's and B's matrices are different algorithms' results.")
    scale = float(np.mean([np.std(d) for d in diffs]))
    x = [d / scale for d in diffs]
    xbar = np.array([v.mean() for v in x])
    ssw = np.array([((v - v.mean()) ** 2).sum() for v in x])
    n = np.array([len(v) for v in x])
    rho = np.array([runs / len(v) for v in x])
    among = float(np.std(xbar)) or float(np.mean([np.std(v) for v in x]))
    bounds = {**settings, "delta0": settings["delta0_bound"] * max(np.abs(v).max() for v in x),
              "std0": settings["std0_upper"] * among}
    seed = int(np.random.default_rng(random_seed).integers(2**31))
    values, sample_stats = _sample(xbar, ssw, n, rho, bounds, draws, tune, chains, seed,
                                   target_accept)
    from bayescm.inference.diagnostics import rhat

    checked = np.concatenate([values[v].reshape(chains, draws, -1)
                              for v in ("delta0", "std0", "nu", "delta")], axis=-1)
    r_hat = float(np.nanmax(rhat(np.moveaxis(checked, -1, 0)))) if chains > 1 else float("nan")
    divergences = int(np.asarray(sample_stats["diverging"]).sum())
    _warn_unconverged(r_hat, divergences, chains, target_accept)
    delta0 = values["delta0"].reshape(-1)
    std0 = values["std0"].reshape(-1)
    nu = values["nu"].reshape(-1)
    delta = values["delta"].reshape(-1, len(x))
    r = rope / scale
    rng = np.random.default_rng(seed + 1)
    # simplex points: where a new data set's delta falls, per posterior draw
    below = stats.t.cdf(-r, nu, delta0, std0)
    above = stats.t.sf(r, nu, delta0, std0)
    a_side, b_side = (above, below) if higher else (below, above)
    predictive = np.column_stack([a_side, 1 - a_side - b_side, b_side])
    winners = np.bincount(predictive.argmax(axis=1), minlength=3) / len(predictive)
    delta_new = delta0 + std0 * rng.standard_t(nu)
    return DatasetComparison(
        metric=key, rope=float(rope), names=(str(names[0]), str(names[1])),
        datasets=datasets, p_a_better=float(winners[0]), p_rope=float(winners[1]),
        p_b_better=float(winners[2]), predictive=predictive, delta=delta * scale,
        delta_new=delta_new * scale, delta0=delta0 * scale,
        observed_mean=np.array([d.mean() for d in diffs]), priors=settings,
        r_hat=r_hat, divergences=divergences, higher_is_better=higher)
