r"""Is classifier A better than B?  Independent and paired comparisons.

:func:`compare` is for classifiers evaluated on **different** test sets: their
posteriors are independent, and the posterior of the difference is the
difference of independent draws.  :func:`compare_paired` is for classifiers
evaluated on the **same** cases, whose errors are correlated (both tend to fail on
hard cases).  It models the joint outcomes: for each true class
:math:`c \in \{+, -\}` the counts of cases that A and B classify correctly or not,

.. math::

    (n^c_{11}, n^c_{10}, n^c_{01}, n^c_{00}) \sim
        \mathrm{Multinomial}(n^c, \psi^c),\qquad
    \psi^c \sim \mathrm{Dirichlet}(1, 1, 1, 1),\qquad
    \phi \sim \mathrm{Beta}(1 + n^+, 1 + n^-),

so :math:`TPR_A = \psi^+_{11} + \psi^+_{10}`, :math:`TPR_B = \psi^+_{11} +
\psi^+_{01}` (likewise TNR from :math:`\psi^-`), and every metric of A and B is a
function of the *same* draw.  The posterior is conjugate and drawn exactly.

"Better" follows the metric's direction (:func:`bayescm.metrics.higher_is_better`):
for most metrics A is better by ``margin`` when :math:`m_A - m_B > \text{margin}`;
for the lower-is-better metrics (``err``, ``fpr``, ``fnr``, ``fdr``, ``for``,
``lr_neg``) when :math:`m_A - m_B < -\text{margin}`.  Both functions draw i.i.d.
from closed forms in one chain, so their ``draws`` is the total number of draws.
Treating a paired design as independent ignores the shared cases: with
positively correlated errors the interval of the difference is too wide (and the
probability that A is better too timid); the tests show both on simulated data.
"""

from __future__ import annotations

import html
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.analysis.posterior import metric_draws, select, select_class
from bayescm.data import CountsError, resolve_positive
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, draw_conjugate, hdi

__all__ = ["Comparison", "compare", "compare_paired", "paired_counts"]


@dataclass(frozen=True)
class Comparison:
    """Posterior of metric_A - metric_B.

    Attributes
    ----------
    metric, margin, design
        What was compared, the margin, ``"independent"`` or ``"paired"``.
    difference
        Draws of metric_A - metric_B (dims chain, draw).
    probability
        P(A better than B by more than ``margin`` | data): P(metric_A - metric_B >
        margin), or P(metric_A - metric_B < -margin) when lower is better.
    hdi_prob
        Mass of the HDI of the difference.
    higher_is_better
        The metric's direction (:func:`bayescm.metrics.higher_is_better`).
    class_label
        The class of a per-class multiclass metric (``compare(..., label=)``), else
        None.
    """

    metric: str
    margin: float
    design: str
    difference: xr.DataArray
    probability: float
    hdi_prob: float
    higher_is_better: bool = True
    class_label: Hashable | None = None

    @property
    def _what(self) -> str:
        return (self.metric if self.class_label is None
                else f"{self.metric}[{self.class_label}]")

    @property
    def hdi(self) -> tuple[float, float]:
        """HDI of the difference metric_A - metric_B."""
        lo, hi = hdi(self.difference.values.reshape(-1), self.hdi_prob)
        return float(lo), float(hi)

    @property
    def event(self) -> str:
        """The event whose probability is reported, e.g. ``"A - B > 0.02"``."""
        if self.higher_is_better:
            return f"A - B > {self.margin:g}"
        return f"A - B < {-self.margin:g}"

    def to_frame(self) -> pd.DataFrame:
        """One row: metric, design, margin, mean, sd and HDI of the difference,
        ``p_better`` (:attr:`probability`) and ``higher_is_better``."""
        lo, hi = self.hdi
        d = self.difference.values
        frame = pd.DataFrame({
            "metric": [self._what], "design": [self.design], "margin": [self.margin],
            "mean": [float(d.mean())], "sd": [float(d.std(ddof=1))], "hdi_lower": [lo],
            "hdi_upper": [hi], "p_better": [self.probability],
            "higher_is_better": [self.higher_is_better],
        })
        frame.attrs.update(hdi_prob=self.hdi_prob, event=self.event)
        return frame

    def __repr__(self) -> str:
        lo, hi = self.hdi
        way = "" if self.higher_is_better else " (lower is better)"
        return (f"Comparison({self.design}, {self._what}{way}): mean difference "
                f"{float(self.difference.mean()):+.4f}, {self.hdi_prob:.0%} HDI "
                f"[{lo:+.4f}, {hi:+.4f}], P({self.event}) = {self.probability:.3f}")

    def _repr_html_(self) -> str:
        return (f"<p><b>{html.escape(repr(self))}</b></p>"
                + self.to_frame().to_html(index=False, float_format="{:.4g}".format))


def _p_better(diff: np.ndarray, margin: float, key: str) -> tuple[float, bool]:
    higher = registry.higher_is_better(key)
    better = diff > margin if higher else diff < -margin
    return float(np.mean(better)), higher


def _draws_of(x: Any, metric: str, label: Hashable | None, draws: int,
              seed: int | None) -> tuple[xr.DataArray, str, str]:
    """One side's draws of ``metric`` (one class's for a per-class metric), its key and
    the kind of registry that answered (``"binary"`` or ``"multiclass"``)."""
    classifier = None
    if isinstance(x, tuple):
        x, classifier = x
    reg = registry.registry_for(x)
    key = reg.key(metric)
    da = metric_draws(x, key, draws=draws, random_seed=seed)
    return select_class(select(da, classifier), label, key), key, reg.kind


def compare(
    a: Any,
    b: Any,
    metric: str,
    margin: float = 0.0,
    *,
    label: Hashable | None = None,
    hdi_prob: float = 0.95,
    draws: int = 20_000,
    random_seed: int | None = None,
) -> Comparison:
    r"""Compare two classifiers evaluated on different (independent) test sets.

    The posteriors of A and B are independent, so draws
    :math:`m_A^{(s)} - m_B^{(s)}` of independent posteriors, paired by position, are
    draws of the difference.

    Parameters
    ----------
    a, b
        Each an InferenceData (binary or multiclass fit), a ConfusionMatrix or a
        MulticlassConfusionMatrix holding one classifier, or a tuple
        ``(data, classifier_name)`` to pick one from a batch.  Both binary or both
        multiclass.
    metric
        Key or alias of the registry that answers for the data
        (:func:`bayescm.metrics.registry_for`): binary keys, or for K classes the
        overall (``"acc"``, ``"kappa"``, ``"mcc"``, ...), averaged (``"f1_macro"``,
        ``"ppv_weighted"``, ...) and per-class metrics (``"f1"``, ``"tpr"``, ...).
    margin
        Report P(A better than B by more than ``margin``): P(metric_A - metric_B >
        margin), or P(metric_A - metric_B < -margin) for lower-is-better metrics
        (``err``, ``fpr``, ``fnr``, ``fdr``, ``for``, ``lr_neg``).
    label
        The class of a per-class multiclass metric (one of the data's labels); only
        for those.
    hdi_prob
        Mass of the HDI of the difference.
    draws
        Draws per side for a ConfusionMatrix (i.i.d. from the three-Beta posterior in
        one chain, so the total) or a MulticlassConfusionMatrix (i.i.d. from the
        ``multiclass_rows`` posterior with flat Dirichlet priors); an InferenceData
        contributes all its draws.  The
        sides are paired by position, so the difference has as many draws as the
        smaller side.
    random_seed
        Seed of the draws.

    Examples
    --------
    >>> import bayescm as bcm
    >>> a = bcm.ConfusionMatrix(tp=40, fn=7, fp=8, tn=15)
    >>> b = bcm.ConfusionMatrix(tp=31, fn=9, fp=13, tn=20)
    >>> result = bcm.analysis.compare(a, b, "tpr", random_seed=1)
    >>> 0.5 < result.probability < 0.9
    True

    Two 3-class classifiers on their own test sets, by macro-F1 and by one class's
    recall:

    >>> labels = ["cat", "dog", "bird"]
    >>> a = bcm.MulticlassConfusionMatrix([[50, 3, 2], [4, 40, 6], [1, 2, 30]], labels)
    >>> b = bcm.MulticlassConfusionMatrix([[45, 8, 2], [6, 38, 6], [3, 2, 28]], labels)
    >>> bcm.analysis.compare(a, b, "f1_macro", random_seed=1).probability > 0.8
    True
    >>> bcm.analysis.compare(a, b, "recall", label="bird", random_seed=1).metric
    'tpr'

    Raises
    ------
    ValueError
        A per-class metric without ``label`` (or ``label`` for another metric), a
        binary and a multiclass side, a side with several classifiers, an invalid
        ``margin`` or ``hdi_prob``.
    KeyError
        Unknown metric, class label or classifier (the message lists the known ones).
    """
    hdi_prob = check_hdi_prob(hdi_prob)
    if not (isinstance(margin, int | float | np.integer | np.floating)
            and not isinstance(margin, bool) and np.isfinite(margin)):
        raise ValueError(f"margin must be a finite number, got {margin!r}.")
    seed = np.random.default_rng(random_seed).integers(2**31, size=2)
    da, key, kind = _draws_of(a, metric, label, draws, int(seed[0]))
    db, _, kind_b = _draws_of(b, metric, label, draws, int(seed[1]))
    if kind != kind_b:
        raise ValueError(
            f"A is {kind} and B is {kind_b}: compare like with like (a K = 2 matrix "
            "converts with MulticlassConfusionMatrix.from_binary or .to_binary)."
        )
    if extra := [d for d in da.dims if d not in SAMPLE_DIMS] + \
            [d for d in db.dims if d not in SAMPLE_DIMS]:
        raise ValueError(f"Each side must be a single classifier; extra dims {extra}.")
    na, nb = da.sizes["chain"] * da.sizes["draw"], db.sizes["chain"] * db.sizes["draw"]
    n = min(na, nb)
    # independent posteriors: pair draws by position (each side's draws are exchangeable)
    diff = da.values.reshape(-1)[:n] - db.values.reshape(-1)[:n]
    diff_da = xr.DataArray(diff.reshape(1, -1), dims=SAMPLE_DIMS, name=f"{key}_difference")
    probability, higher = _p_better(diff, margin, key)
    return Comparison(key, float(margin), "independent", diff_da, probability, hdi_prob,
                      higher_is_better=higher, class_label=label)


def paired_counts(y_true: Any, pred_a: Any, pred_b: Any, *, positive: Any = None
                  ) -> pd.DataFrame:
    """Per true class, the counts of (A correct, B correct) in {11, 10, 01, 00}."""
    y, a, b = (np.asarray(v, dtype=object) for v in (y_true, pred_a, pred_b))
    if not (y.ndim == a.ndim == b.ndim == 1) or not (y.size == a.size == b.size):
        raise CountsError(
            f"y_true, pred_a and pred_b must be 1-d and of equal length (got {y.size}, "
            f"{a.size}, {b.size}): the paired design needs both predictions for every case."
        )
    if y.size == 0 or pd.isna(y).any() or pd.isna(a).any() or pd.isna(b).any():
        raise CountsError("Labels must be non-empty and have no missing values.")
    pos = resolve_positive(np.unique(np.concatenate([y, a, b])), positive)
    truth = y == pos
    ok_a, ok_b = (a == pos) == truth, (b == pos) == truth
    rows = {}
    for name, mask in (("positive", truth), ("negative", ~truth)):
        rows[name] = [int(np.sum(mask & ok_a & ok_b)), int(np.sum(mask & ok_a & ~ok_b)),
                      int(np.sum(mask & ~ok_a & ok_b)), int(np.sum(mask & ~ok_a & ~ok_b))]
    return pd.DataFrame.from_dict(rows, orient="index", columns=["11", "10", "01", "00"])


def compare_paired(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    metric: str,
    margin: float = 0.0,
    *,
    positive: Any = None,
    hdi_prob: float = 0.95,
    draws: int = 20_000,
    random_seed: int | None = None,
) -> Comparison:
    """Compare two classifiers evaluated on the same cases (paired design).

    Parameters
    ----------
    y_true, pred_a, pred_b
        True labels and the two classifiers' predictions, one per case.
    metric, margin
        As for :func:`compare` (lower-is-better metrics are honoured).
    positive
        The positive label (may be omitted for ``{0, 1}`` or ``{False, True}``).
    hdi_prob
        Mass of the HDI of the difference.
    draws
        Draws of the joint posterior (i.i.d., one chain: the total).
    random_seed
        Seed of the draws.

    Examples
    --------
    >>> import numpy as np, bayescm as bcm
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 300)
    >>> hard = rng.random(300) < 0.2          # both classifiers fail on hard cases
    >>> a = np.where(hard, 1 - y, y)
    >>> b = np.where(hard | (rng.random(300) < 0.05), 1 - y, y)
    >>> result = bcm.analysis.compare_paired(y, a, b, "acc", random_seed=1)
    >>> result.probability > 0.99
    True
    """
    key = registry.get(metric).key
    counts = paired_counts(y_true, pred_a, pred_b, positive=positive)
    rng = np.random.default_rng(random_seed)
    n_pos, n_neg = int(counts.loc["positive"].sum()), int(counts.loc["negative"].sum())
    post = draw_conjugate(
        rng, (draws,), betas={"prevalence": (1 + n_pos, 1 + n_neg)},
        dirichlets={c: 1.0 + counts.loc[c].to_numpy(float) for c in ("positive", "negative")})
    phi, psi_pos, psi_neg = post["prevalence"], post["positive"], post["negative"]
    values = []
    for correct in (1, 2):  # A is correct in cells 11 and 10, B in cells 11 and 01
        tpr = psi_pos[:, 0] + psi_pos[:, correct]
        tnr = psi_neg[:, 0] + psi_neg[:, correct]
        values.append(registry.evaluate(key, *registry.cells_from_rates(phi, tpr, tnr)))
    diff = np.asarray(values[0] - values[1])
    diff_da = xr.DataArray(diff.reshape(1, -1), dims=SAMPLE_DIMS, name=f"{key}_difference")
    probability, higher = _p_better(diff, margin, key)
    return Comparison(key, float(margin), "paired", diff_da, probability, hdi_prob,
                      higher_is_better=higher)

