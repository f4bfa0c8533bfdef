r"""Two algorithms on one data set across cross-validation folds: the correlated t-test.

k-fold cross-validation repeated ``runs`` times gives, for algorithms A and B, one
confusion matrix per fold; the metric's difference on fold :math:`j` is
:math:`d_j = m(A_j) - m(B_j)`, :math:`j = 1..n`, :math:`n = runs \cdot k`.  The
folds share training cases, so the :math:`d_j` are correlated; Nadeau & Bengio
("Inference for the generalization error", 2003) take the correlation to be the
test fraction, :math:`\rho = 1/k`.  The Bayesian correlated t-test (Corani &
Benavoli, "A Bayesian approach for comparing cross-validated algorithms on multiple
data sets", 2015; Benavoli, Corani, Demšar & Zaffalon, "Time for a change: a
tutorial for comparing multiple classifiers through Bayesian analysis", JMLR 2017)
models :math:`d \sim N(\mu 1, \Sigma)`,
:math:`\Sigma = \sigma^2((1-\rho) I + \rho 1 1^\top)`, and under the prior
:math:`p(\mu, \sigma^{-2}) \propto \sigma^2` the posterior of the mean difference is

.. math::

    \mu \mid d \sim t_{n-1}\Bigl(\bar d,\
        \sqrt{\bigl(\tfrac1n + \tfrac{\rho}{1-\rho}\bigr)\, s^2}\Bigr),
    \qquad s^2 = \tfrac{1}{n-1}\textstyle\sum_j (d_j - \bar d)^2 .

``plug_in=True``
    :math:`d_j` is the difference of the plug-in metrics :math:`m(n_j/N_j)`: this
    is baycomp's ``two_on_single`` (same :math:`\rho`, same t), any metric.
``plug_in=False`` (default)
    Each fold's metric is uncertain: its confusion matrix has an exact posterior
    (the default conjugate model: three-Beta for binary matrices, Dirichlet rows for
    K classes, flat priors), and so has :math:`m(A_j)`, :math:`m(B_j)`.  With
    :math:`S` joint draws :math:`d^{(s)} = (m(A^{(s)}_j) - m(B^{(s)}_j))_j` of all
    folds' metrics, the posterior of :math:`\mu` is the mixture

    .. math::

        p(\mu \mid D) = \frac1S \sum_{s=1}^S
            t_{n-1}\Bigl(\mu;\ \bar d^{(s)},\
            \sqrt{\bigl(\tfrac1n + \tfrac{\rho}{1-\rho}\bigr) s^{2(s)}}\Bigr),

    i.e. the t-test's posterior averaged over what the fold metrics could be (a
    multiple-imputation reading of :math:`\int p(\mu \mid d)\, p(d \mid D)\, dd`).
    The probabilities are averages of the t CDFs (exact per component), and one
    draw of :math:`\mu` per component is kept.  A and B are drawn independently
    (their matrices do not say which cases they share), and the test-set noise
    enters both :math:`s^{2(s)}` and the spread of :math:`\bar d^{(s)}`, so this is
    *more* cautious than the plug-in test: it never claims more than the counts
    support, also for metrics undefined at a plug-in value (a fold without
    predicted positives has no plug-in precision, but a posterior one).

Decisions follow the metric's direction and a region of practical equivalence
:math:`[-r, r]`: ``p_a_better`` is :math:`P(\mu > r)` for a metric where higher is
better (:math:`P(\mu < -r)` otherwise), ``p_rope`` is :math:`P(|\mu| \le r)`.

Pooling the folds' out-of-fold predictions into one test set and using
:func:`bayescm.analysis.compare_paired` ignores the variation due to training sets:
it answers "which of these two *fitted* models is better on these cases", and is
more confident than this test about the *algorithms*.
"""

from __future__ import annotations

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
    posterior_values,
)
from bayescm.stats import hdi

__all__ = ["FoldComparison", "compare_folds", "correlated_t"]


def correlated_t(d: np.ndarray, k: int) -> tuple[float, np.ndarray, np.ndarray]:
    r"""Degrees of freedom, location and scale of the correlated t-test's posterior.

    ``d`` has the fold differences on its last axis (``n = runs * k`` of them), and
    :math:`\rho = 1/k`; returns :math:`(n - 1,\ \bar d,\ \sqrt{(1/n + \rho/(1-\rho))
    s^2})` with the leading axes of ``d``.

    Examples
    --------
    >>> df, loc, scale = correlated_t(np.array([0.01, 0.03, 0.02, 0.04, 0.00]), k=5)
    >>> df, round(float(loc), 3), round(float(scale), 4)
    (4, 0.02, 0.0106)
    """
    n = d.shape[-1]
    rho = 1.0 / k
    var = np.var(d, axis=-1, ddof=1)
    return n - 1, d.mean(axis=-1), np.sqrt((1.0 / n + rho / (1.0 - rho)) * var)


@dataclass(frozen=True, eq=False)
class FoldComparison:
    """The posterior of the mean difference A − B of a metric across folds.

    Attributes: ``metric``, ``rope``, ``runs``, ``folds`` (k per run), ``plug_in``,
    ``names`` (A's and B's), ``p_a_better``, ``p_rope``, ``p_b_better``,
    ``difference`` (posterior draws of the mean difference :math:`\\mu`), ``df``,
    ``loc``, ``scale`` (the t components: one for the plug-in test, one per draw
    otherwise), ``scores_a``, ``scores_b`` (plug-in metric per fold; NaN where
    undefined), ``higher_is_better``.
    """

    metric: str
    rope: float
    runs: int
    folds: int
    plug_in: bool
    names: tuple[str, str]
    p_a_better: float
    p_rope: float
    p_b_better: float
    difference: np.ndarray = field(repr=False)
    df: int = field(repr=False)
    loc: np.ndarray = field(repr=False)
    scale: np.ndarray = field(repr=False)
    scores_a: np.ndarray = field(repr=False)
    scores_b: np.ndarray = field(repr=False)
    higher_is_better: bool = True

    @property
    def rho(self) -> float:
        """The Nadeau–Bengio correlation between folds, 1/k."""
        return 1.0 / self.folds

    def summary(self, hdi_prob: float = 0.95) -> pd.DataFrame:
        """One row: the mean difference, its HDI and the three probabilities."""
        low, high = hdi(self.difference, hdi_prob)
        a, b = self.names
        return pd.DataFrame([{
            "metric": self.metric, "difference": f"{a} - {b}",
            "mean": float(np.mean(self.difference)), "hdi_lower": float(low),
            "hdi_upper": float(high), "rope": self.rope,
            f"p_{a}_better": self.p_a_better, "p_rope": self.p_rope,
            f"p_{b}_better": self.p_b_better, "folds": self.folds, "runs": self.runs,
            "rho": self.rho, "plug_in": self.plug_in}]).set_index("metric")

    def to_frame(self) -> pd.DataFrame:
        """One row per fold: run, fold, each algorithm's plug-in metric, difference."""
        n = len(self.scores_a)
        a, b = self.names
        return pd.DataFrame({
            "run": np.repeat(np.arange(self.runs), self.folds),
            "fold": np.tile(np.arange(self.folds), self.runs),
            a: self.scores_a, b: self.scores_b,
            "difference": self.scores_a - self.scores_b}, index=pd.RangeIndex(n, name="row"))

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The posterior of the difference with the ROPE shaded
        (:func:`bayescm.plots.fold_difference`)."""
        from bayescm.plots.folds import fold_difference

        return fold_difference(self, ax=ax, **kwargs)

    def __repr__(self) -> str:
        a, b = self.names
        return (f"FoldComparison({self.metric}: P({a} better) = {self.p_a_better:.3f}, "
                f"P(rope ±{self.rope:g}) = {self.p_rope:.3f}, P({b} better) = "
                f"{self.p_b_better:.3f}; {self.runs} run(s) × {self.folds} folds, "
                f"{'plug-in' if self.plug_in else 'posterior'} fold metrics)")


def _scores(cms: Any, key: str) -> np.ndarray:
    try:
        return plug_in_values(cms, key)
    except ValueError:
        # undefined plug-in values are shown as NaN; only plug_in=True needs them
        reg_values = np.full(len(cms), np.nan)
        return reg_values


def compare_folds(cms_a: Any, cms_b: Any, metric: str = "acc", *, rope: float = 0.01,
                  runs: int = 1, plug_in: bool = False, draws: int = 4000,
                  random_seed: int | None = None, names: tuple[str, str] = ("a", "b")
                  ) -> FoldComparison:
    r"""Compare two algorithms on one data set from their per-fold confusion matrices.

    The Bayesian correlated t-test (see the module docstring for the math) on any
    metric of the registry, from the folds' plug-in metrics (``plug_in=True``:
    baycomp's ``two_on_single``) or from their confusion matrices' posteriors.

    Parameters
    ----------
    cms_a, cms_b
        One confusion matrix per fold for A and for B, ``runs × folds`` in order
        (run 1's folds, then run 2's, ...), the same folds for both: binary
        :class:`bayescm.ConfusionMatrix` or K-class
        :class:`bayescm.MulticlassConfusionMatrix` batches, DataFrames of counts or
        lists of matrices.
    metric
        A registry key or alias (``"acc"``, ``"mcc"``, ``"f1_macro"``, ...); one
        number per fold (per-class metrics need an average).
    rope
        Half-width of the region of practical equivalence, in metric units.
    runs
        Repetitions of k-fold cross-validation (k = number of matrices / runs);
        :math:`\rho = 1/k`.
    plug_in
        Use the plug-in metric of each fold (baycomp's test) instead of the
        posterior of each fold's confusion matrix.
    draws
        Posterior draws: joint draws of the fold metrics (``plug_in=False``) and
        draws of the difference kept in ``difference``.
    random_seed
        Seed of the draws (probabilities of the plug-in test are exact).
    names
        Labels of A and B in tables and plots.

    Returns
    -------
    FoldComparison
        ``p_a_better``, ``p_rope``, ``p_b_better``, ``difference`` (draws),
        ``summary()``, ``to_frame()``, ``plot()``.

    Raises
    ------
    ValueError
        Different numbers of folds, one fold per run (:math:`\rho = 1`), all fold
        differences equal in the plug-in test (zero variance), a metric undefined on
        a fold in the plug-in test, an unknown or per-class metric.

    Examples
    --------
    >>> import bayescm as bcm
    >>> a = bcm.ConfusionMatrix(tp=[45, 47, 44, 46, 48], fn=[5, 3, 6, 4, 2],
    ...                         fp=[4, 6, 5, 3, 4], tn=[46, 44, 45, 47, 46])
    >>> b = bcm.ConfusionMatrix(tp=[42, 44, 43, 41, 45], fn=[8, 6, 7, 9, 5],
    ...                         fp=[7, 6, 8, 5, 7], tn=[43, 44, 42, 45, 43])
    >>> res = bcm.analysis.compare_folds(a, b, "acc", rope=0.01, plug_in=True)
    >>> round(res.p_a_better, 3), round(res.p_rope, 3), round(res.p_b_better, 3)
    (0.991, 0.007, 0.002)
    >>> res = bcm.analysis.compare_folds(a, b, "acc", random_seed=1)
    >>> 0.75 < res.p_a_better < 0.95  # the fold matrices' own uncertainty: more cautious
    True
    """
    cms_a, cms_b = as_folds(cms_a, "cms_a"), as_folds(cms_b, "cms_b")
    k = check_pair(cms_a, cms_b, runs)
    check_rope(rope)
    if not isinstance(draws, int | np.integer) or isinstance(draws, bool) or draws < 10:
        raise ValueError(f"draws must be an integer >= 10, got {draws!r}.")
    key, higher = metric_key(cms_a, metric)
    rng = np.random.default_rng(random_seed)
    if plug_in:
        scores_a = plug_in_values(cms_a, key, "cms_a")
        scores_b = plug_in_values(cms_b, key, "cms_b")
        d = (scores_a - scores_b)[None, :]
    else:
        scores_a, scores_b = _scores(cms_a, key), _scores(cms_b, key)
        seeds = rng.integers(2**32, size=2)
        d = (posterior_values(cms_a, key, draws, int(seeds[0]))
             - posterior_values(cms_b, key, draws, int(seeds[1])))
    df, loc, scale = correlated_t(d, k)
    if np.any(scale <= 0):
        raise ValueError(
            f"All {d.shape[-1]} fold differences of {key!r} are equal ({float(d[0, 0]):.4g}): "
            "the correlated t-test's variance is zero and its posterior a point mass, which "
            "is no evidence about the algorithms.  Use plug_in=False (the confusion matrices' "
            "posteriors carry the test-set uncertainty), or check that A's and B's matrices "
            "are really different folds' results.")
    # P(mu < -rope) and P(mu > rope), averaged over the mixture's components
    below = float(np.mean(stats.t.cdf(-rope, df, loc, scale)))
    above = float(np.mean(stats.t.sf(rope, df, loc, scale)))
    comp = rng.integers(len(loc), size=int(draws)) if len(loc) > 1 else np.zeros(draws, int)
    difference = loc[comp] + scale[comp] * rng.standard_t(df, size=int(draws))
    p_a, p_b = (above, below) if higher else (below, above)
    return FoldComparison(
        metric=key, rope=float(rope), runs=int(runs), folds=k, plug_in=bool(plug_in),
        names=(str(names[0]), str(names[1])), p_a_better=p_a,
        p_rope=max(0.0, 1.0 - p_a - p_b), p_b_better=p_b, difference=difference, df=int(df),
        loc=np.atleast_1d(loc), scale=np.atleast_1d(scale), scores_a=scores_a,
        scores_b=scores_b, higher_is_better=higher)
