r"""Is classifier A better than B?  Independent and paired comparisons.

:func:`compare` is for classifiers evaluated on **different** test sets: their
posteriors are independent, and the posterior of the difference is the
difference of independent draws.  :func:`~bayescm.analysis.paired.compare_paired` (module
:mod:`bayescm.analysis.paired`) is for classifiers evaluated on the **same** cases,
whose errors are correlated: it models their joint outcomes.  :class:`Comparison`
is the result of both.

"Better" follows the metric's direction (:func:`bayescm.metrics.higher_is_better`):
for most metrics A is better by ``margin`` when :math:`m_A - m_B > \text{margin}`;
for the lower-is-better metrics (``err``, ``fpr``, ``fnr``, ``fdr``, ``for``,
``lr_neg``) when :math:`m_A - m_B < -\text{margin}`.  Both functions draw i.i.d.
from closed forms in one chain, so their ``draws`` is the total number of draws.
"""

from __future__ import annotations

import html
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.confusion import unit_of
from bayescm.inference.posterior import metric_draws, select, select_class
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, hdi

__all__ = ["Comparison", "compare"]


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
        multiclass.  Two models of one item-level fit (``(fit, "A"), (fit, "B")``)
        answered the same items: their joint draws are paired by position, the
        result equals :func:`~bayescm.analysis.compare_paired`'s and says ``"paired"``.
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
        ``multiclass_rows`` posterior with its default priors, Dirichlet(2/K) per cell of each
        row and of the prevalence); an InferenceData
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
    if not isinstance(draws, int | np.integer) or isinstance(draws, bool) or draws < 1:
        raise ValueError(f"draws must be a whole number >= 1 (draws per side for counts; "
                         f"default 20,000), got {draws!r}.")
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
    return Comparison(key, float(margin), _design(a, b), diff_da, probability, hdi_prob,
                      higher_is_better=higher, class_label=label)


def _design(a: Any, b: Any) -> str:
    """``"paired"`` for two models of one item-level fit (unit ``model``: they answered
    the same items, and position pairs their joint draws, as compare_paired does);
    ``"independent"`` otherwise."""
    if not (isinstance(a, tuple) and isinstance(b, tuple) and a[0] is b[0]):
        return "independent"
    fit = a[0]
    items = (idata_mod.is_inference_data(fit) and idata_mod.has_group(fit, "posterior")
             and unit_of(idata_mod.group(fit, "posterior")) == "model")
    return "paired" if items else "independent"
