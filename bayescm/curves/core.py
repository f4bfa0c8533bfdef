r"""ROC and precision-recall curves with pointwise credible bands and area posteriors.

A scoring classifier gives each case a score :math:`s`; a case is **predicted
positive when** :math:`s \ge t`.  Sweeping the threshold :math:`t` over the scores
gives one confusion matrix :math:`(tp_t, fn_t, fp_t, tn_t)` per threshold, and so
the ROC curve :math:`(FPR_t, TPR_t)` and the precision-recall curve
:math:`(TPR_t, PPV_t)`.  Two different posteriors are reported, each for what it
can answer.

Pointwise bands (per-threshold Beta posteriors)
-----------------------------------------------
At each threshold, with a :math:`\mathrm{Beta}(a, b)` prior on each rate
(Goutte & Gaussier 2005; Morais 2023),

.. math::

    TPR_t \mid \mathcal D \sim \mathrm{Beta}(a + tp_t, b + fn_t),\quad
    FPR_t \mid \mathcal D \sim \mathrm{Beta}(a + fp_t, b + tn_t),\quad
    PPV_t \mid \mathcal D \sim \mathrm{Beta}(a + tp_t, b + fp_t).

The band at :math:`t` is the **highest-density interval** of that Beta (computed
exactly, not from draws): the narrowest interval of the requested mass.  With the
default flat prior the HDI always contains the observed rate (the posterior mode),
so the band passes through the corners (0, 0) and (1, 1) of the ROC curve, where an
equal-tailed interval would exclude them.  Where a Beta has no unique HDI
(:math:`\alpha = \beta = 1`, or a U-shaped Beta, which needs a prior below 1 and no
case in the rate's denominator) the band is equal-tailed.

Area posteriors (Bayesian bootstrap of the whole curve)
-------------------------------------------------------
A band is **pointwise**: its edge at each threshold is a quantile of a different
marginal posterior, and no posterior draw of the curve follows an edge at every
threshold (a curve at its 2.5% quantile everywhere at once is all but impossible).
The area under a band edge is therefore **not** a posterior quantile of the area
under the curve, and its error has no fixed sign.  Joining the band corners (lower
TPR at upper FPR and vice versa, as Morais 2023 reads an AUROC interval off the
bands) gives an interval about 1.8 times as wide as the AUC's HDI for 200 + 200
binormal cases; integrating only the TPR edges at the point estimate of FPR comes
close to the HDI there, by coincidence: ignoring the FPR uncertainty narrows what
the pointwise reading widens.  bayescm reports neither.

The posterior of the area comes from a joint model of the curve: the Bayesian
bootstrap (Rubin 1981; for ROC curves Gu, Ghosal & Roy 2008).  The score
distributions of positives and negatives are given weights
:math:`w \sim \mathrm{Dirichlet}(1, \dots, 1)` over the :math:`n_+` positives and
:math:`v \sim \mathrm{Dirichlet}(1, \dots, 1)` over the :math:`n_-` negatives, and the
prevalence :math:`\pi \sim \mathrm{Beta}(n_+, n_-)` (together: the Bayesian bootstrap
of all cases).  Each draw is a weighted empirical curve, monotone by construction,
and its area is

.. math::

    AUC = \sum_{i \in +} \sum_{j \in -} w_i v_j
          \left([s_i > s_j] + \tfrac12 [s_i = s_j]\right),

which equals the trapezoidal area under that draw's ROC curve (Hanley & McNeil
1982), and the average precision (step-wise area, as scikit-learn's
``average_precision_score``)

.. math::

    AP = \sum_{i \in +} w_i\, PPV(s_i),\qquad
    PPV(t) = \frac{\pi R(t)}{\pi R(t) + (1 - \pi) F(t)},

with :math:`R(t) = \sum_{i: s_i \ge t} w_i` and :math:`F(t) = \sum_{j: s_j \ge t} v_j`.
Scores are sorted once; each draw costs cumulative sums, in chunks of draws.  The
posterior mean of the AUC is exactly the empirical AUC (the weights have mean
:math:`1/n`).  The two posteriors agree where they overlap: the bootstrap's marginal
of :math:`TPR_t` is exactly :math:`\mathrm{Beta}(tp_t, fn_t)`, the band's Beta minus
the prior's pseudo-counts.

References
----------
Morais, "A Bayesian approach to machine learning model comparison", Idiap (2023).
Goutte & Gaussier, "A probabilistic interpretation of precision, recall and
F-score, with implication for evaluation", ECIR (2005).
Rubin, "The Bayesian bootstrap", Annals of Statistics (1981).
Gu, Ghosal & Roy, "Bayesian bootstrap estimation of ROC curve", Statistics in
Medicine (2008).
Hanley & McNeil, "The meaning and use of the area under a receiver operating
characteristic (ROC) curve", Radiology (1982).

Examples
--------
>>> import numpy as np
>>> from bayescm import curves
>>> rng = np.random.default_rng(0)
>>> y = np.repeat([1, 0], 100)
>>> scores = rng.normal(y, 1.0)
>>> roc = curves.roc(scores, y, random_seed=1)
>>> lo, hi = roc.auc_hdi
>>> bool(lo < roc.auc_point < hi)
True
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.data.confusion import resolve_positive
from bayescm.deprecation import renamed_kwargs
from bayescm.priors import Beta, named
from bayescm.stats import SAMPLE_DIMS, beta_hdi_any, check_hdi_prob, draw_conjugate, hdi

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["Curve", "precision_recall", "roc"]
_CHUNK = 2**20  # elements per (draws x cases) work array of the bootstrap
# per kind: (x, y) as registry keys and as display names, and the area's name
_AXES = {"roc": (("fpr", "tpr"), ("fpr", "tpr"), "AUC"),
         "pr": (("tpr", "ppv"), ("recall", "precision"), "AP")}
# the Beta posterior of each rate: (cell counted as success, cell counted as failure)
_BETA = {"tpr": ("tp", "fn"), "fpr": ("fp", "tn"), "ppv": ("tp", "fp")}


@dataclass(frozen=True, eq=False)
class Curve:
    """A ROC or precision-recall curve with pointwise bands and the area's posterior.

    Attributes
    ----------
    kind
        ``"roc"`` (x = FPR, y = TPR) or ``"pr"`` (x = recall, y = precision).
    thresholds
        Descending; a case is predicted positive when its score is ``>=`` the threshold.
    tp, fp, fn, tn
        Confusion-matrix counts at each threshold.
    lower, upper
        Pointwise band edges at each threshold, keyed by registry metric key
        (``"fpr"``, ``"tpr"`` for ROC; ``"tpr"``, ``"ppv"`` for PR); see :meth:`band`.
    auc
        Posterior draws (dims ``chain, draw``) of the area under the curve: the AUC
        for ROC, the average precision for PR, from the Bayesian bootstrap.
    auc_point
        The empirical area over all cases (scikit-learn's ``roc_auc_score`` or
        ``average_precision_score``), whatever the thresholds.
    hdi_prob
        Probability mass of the bands and of :attr:`auc_hdi`.
    priors
        The Beta prior of each pointwise rate, by registry key.
    """

    kind: str
    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray
    lower: Mapping[str, np.ndarray]
    upper: Mapping[str, np.ndarray]
    auc: xr.DataArray
    auc_point: float
    hdi_prob: float
    priors: Mapping[str, Beta]

    @property
    def level(self) -> float:
        """Deprecated name of :attr:`hdi_prob`."""
        warnings.warn("Curve.level is deprecated; use Curve.hdi_prob.", DeprecationWarning,
                      stacklevel=2)
        return self.hdi_prob

    @property
    def prior(self) -> tuple[float, float]:
        """Deprecated: ``(a, b)`` of the prior shared by the rates; see :attr:`priors`."""
        warnings.warn("Curve.prior is deprecated; use Curve.priors[rate].params.",
                      DeprecationWarning, stacklevel=2)
        shared = set(self.priors.values())
        if len(shared) != 1:
            raise ValueError(f"The rates have different priors {dict(self.priors)}; read "
                             "Curve.priors.")
        return shared.pop().params

    # -- point estimates and bands -------------------------------------------------
    def rate(self, name: str) -> np.ndarray:
        """Point estimate of a rate at each threshold (``"tpr"``, ``"recall"``, ...).

        Any registry metric or alias works; undefined values (e.g. precision when
        nothing is predicted positive) are NaN.
        """
        return np.asarray(registry.evaluate(name, self.tp, self.fn, self.fp, self.tn))

    tpr = property(lambda self: self.rate("tpr"), doc="True positive rate per threshold.")
    fpr = property(lambda self: self.rate("fpr"), doc="False positive rate per threshold.")
    recall = property(lambda self: self.rate("tpr"), doc="Recall (= TPR) per threshold.")
    precision = property(lambda self: self.rate("ppv"),
                         doc="Precision per threshold (NaN where nothing is predicted positive).")

    def band(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise band ``(lower, upper)`` of a rate of this curve (aliases accepted)."""
        key = registry.get(name).key
        if key not in self.lower:
            raise KeyError(f"A {self.kind} curve has bands for {list(self.lower)}, "
                           f"not {name!r}; compute the other curve for it.")
        return self.lower[key], self.upper[key]

    @property
    def n_pos(self) -> int:
        """Number of actual positives."""
        return int(self.tp[0] + self.fn[0])

    @property
    def n_neg(self) -> int:
        """Number of actual negatives."""
        return int(self.fp[0] + self.tn[0])

    # -- the area ------------------------------------------------------------------
    @property
    def auc_mean(self) -> float:
        """Posterior mean of the area."""
        return float(self.auc.mean())

    @property
    def auc_sd(self) -> float:
        """Posterior standard deviation of the area."""
        return float(self.auc.std(ddof=1))

    @property
    def auc_hdi(self) -> tuple[float, float]:
        """Highest-density interval of the area at :attr:`hdi_prob`."""
        lo, hi = hdi(self.auc.values.reshape(-1), self.hdi_prob)
        return float(lo), float(hi)

    # -- output --------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """One row per threshold: counts, then each axis' point estimate and band.

        Columns ``tp, fp, fn, tn, fpr, fpr_lower, fpr_upper, tpr, tpr_lower,
        tpr_upper`` (ROC) or ``..., recall, recall_lower, recall_upper, precision,
        precision_lower, precision_upper`` (PR); index ``threshold``.
        """
        keys, names, _ = _AXES[self.kind]
        cols: dict[str, np.ndarray] = {c: getattr(self, c) for c in ("tp", "fp", "fn", "tn")}
        for key, name in zip(keys, names, strict=True):
            cols[name] = self.rate(key)
            cols[f"{name}_lower"], cols[f"{name}_upper"] = self.band(key)
        frame = pd.DataFrame(cols, index=pd.Index(self.thresholds, name="threshold"))
        frame.attrs.update(kind=self.kind, hdi_prob=self.hdi_prob,
                           priors={k: repr(p) for k, p in self.priors.items()})
        return frame

    def _repr_html_(self) -> str:
        head = "".join(f"<p>{html.escape(line)}</p>" for line in repr(self).splitlines())
        frame = self.to_frame()
        rows = _spread(np.arange(len(frame)), 12)
        return (f"<div>{head}<p>{len(rows)} of {len(frame)} thresholds:</p>"
                + frame.iloc[rows].to_html(float_format="{:.4g}".format) + "</div>")

    def __repr__(self) -> str:
        keys, names, area = _AXES[self.kind]
        lo, hi = self.auc_hdi
        betas = ", ".join(
            f"{_shown(n)} ~ Beta({self.priors[k].alpha:g} + {_BETA[k][0]}, "
            f"{self.priors[k].beta:g} + {_BETA[k][1]})"
            for k, n in zip(keys, names, strict=True))
        title = "ROC curve" if self.kind == "roc" else "Precision-recall curve"
        return (f"{title} of {self.n_pos + self.n_neg} cases ({self.n_pos} positive, "
                f"{self.n_neg} negative) at {self.thresholds.size} thresholds\n"
                f"  {area}: empirical {self.auc_point:.4f}; posterior mean {self.auc_mean:.4f}, "
                f"sd {self.auc_sd:.4f}, {self.hdi_prob:.0%} HDI [{lo:.4f}, {hi:.4f}] "
                f"(Bayesian bootstrap, {self.auc.size} draws)\n"
                f"  bands: pointwise {self.hdi_prob:.0%} HDI of {betas}")

    def plot(
        self,
        ax: Axes | None = None,
        *,
        label: str | None = None,
        band: bool = True,
        errorbars: int = 10,
        reference: bool = True,
        **kwargs: Any,
    ) -> Axes:
        """Draw the curve, its pointwise band and the area's posterior in the legend.

        The shaded band is the pointwise band of the y-axis rate (TPR or precision)
        at each threshold's point estimate of the x-axis rate; horizontal bars at up
        to ``errorbars`` thresholds show the pointwise band of the x-axis rate (FPR
        or recall).  The legend gives the area's posterior mean and HDI.

        Parameters
        ----------
        ax
            Axes to draw on; default a new figure's.
        label
            Name of the classifier, put before the area in the legend.
        band
            Draw the pointwise bands.
        errorbars
            Number of thresholds with a bar for the x-axis rate (0: none).
        reference
            Draw the chance diagonal (ROC) or the no-skill line at the prevalence (PR).
        **kwargs
            Passed to ``Axes.plot`` for the curve (``color``, ``lw``, ...).

        Returns
        -------
        matplotlib.axes.Axes
            The ROC plot has two lines (curve, diagonal) and two collections (band,
            bars), as does the PR plot (curve, no-skill line).
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 5))
        keys, names, area = _AXES[self.kind]
        x, y = self.rate(keys[0]), self.rate(keys[1])
        (x_lo, x_hi), (y_lo, y_hi) = self.band(keys[0]), self.band(keys[1])
        step = None
        if self.kind == "pr":
            # precision is undefined before the first positive prediction; the average
            # precision's step interpolation carries the next value back to recall 0
            y, y_lo, y_hi = (_backfill(v, np.isnan(y)) for v in (y, y_lo, y_hi))
            step = "pre"
        lo, hi = self.auc_hdi
        text = (f"{area} {self.auc_mean:.3f}, {self.hdi_prob:.0%} HDI [{lo:.3f}, {hi:.3f}]")
        kwargs.setdefault("label", f"{label}: {text}" if label else text)
        if step:
            kwargs.setdefault("drawstyle", "steps-pre")
        (line,) = ax.plot(x, y, **kwargs)
        color = line.get_color()
        if band:
            ax.fill_between(x, y_lo, y_hi, step=step, color=color, alpha=0.2, lw=0,
                            label=f"{self.hdi_prob:.0%} pointwise band of {_shown(names[1])}")
            rows = _spread(np.flatnonzero(np.isfinite(y)), errorbars)
            if rows.size:
                ax.hlines(y[rows], x_lo[rows], x_hi[rows], color=color, lw=1, alpha=0.7,
                          label=f"{self.hdi_prob:.0%} pointwise band of {_shown(names[0])}")
        if reference and self.kind == "roc":
            ax.plot([0, 1], [0, 1], ls="--", color="0.6", lw=1, label="chance")
        elif reference:
            prevalence = self.n_pos / (self.n_pos + self.n_neg)
            ax.plot([0, 1], [prevalence, prevalence], ls="--", color="0.6", lw=1,
                    label=f"no skill (prevalence {prevalence:.2f})")
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        xlabel, ylabel = (("False positive rate", "True positive rate") if self.kind == "roc"
                          else ("Recall", "Precision"))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(loc="lower right" if self.kind == "roc" else "lower left", fontsize="small")
        return ax


def _shown(name: str) -> str:
    return {"fpr": "FPR", "tpr": "TPR"}.get(name, name)


def _backfill(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Replace values at ``missing`` by the next value that is not missing."""
    out = np.asarray(values, dtype=float).copy()
    idx = np.where(~missing, np.arange(out.size), out.size)
    nxt = np.minimum.accumulate(idx[::-1])[::-1]
    ok = nxt < out.size
    out[ok] = out[nxt[ok]]
    return out


def _spread(rows: np.ndarray, k: int) -> np.ndarray:
    """At most ``k`` of ``rows``, evenly spaced."""
    if k <= 0 or rows.size == 0:
        return rows[:0]
    return np.unique(rows[np.linspace(0, rows.size - 1, min(k, rows.size)).round().astype(int)])


# -- inputs ------------------------------------------------------------------------
def _prepare(scores: Any, y_true: Any, positive: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validated float scores and a boolean mask of the actual positives."""
    try:
        s = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError("scores must be numbers (one score per case, higher = more "
                         "positive).") from err
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"scores must be a non-empty 1-d array, got shape {s.shape}.")
    if not np.isfinite(s).all():
        bad = np.flatnonzero(~np.isfinite(s))
        raise ValueError(f"scores has {bad.size} NaN or infinite value(s) (first at position "
                         f"{bad[0]}); drop those cases or replace them with finite scores.")
    y = np.asarray(y_true)
    if y.ndim != 1 or y.size != s.size:
        raise ValueError(f"y_true must be 1-d with one label per score: got shape {y.shape} "
                         f"for {s.size} scores.")
    if pd.isna(y).any():
        raise ValueError("y_true contains missing labels; drop those cases first.")
    labels = np.unique(y)
    pos = resolve_positive(labels, positive)
    is_pos = y == pos
    if is_pos.all() or not is_pos.any():
        which = "positive" if is_pos.all() else "negative"
        raise ValueError(f"y_true has only {which} cases (labels {labels.tolist()}, positive = "
                         f"{pos!r}); a ROC or precision-recall curve needs both classes.")
    return s, is_pos


def _options(kind: str, hdi_prob: float, draws: int, priors: Any) -> dict[str, Beta]:
    check_hdi_prob(hdi_prob)
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 100:
        raise ValueError(f"draws must be a whole number >= 100 (an HDI from fewer draws is "
                         f"noise), got {draws!r}.")
    rates = {key: Beta(1, 1) for key in _AXES[kind][0]}
    return named(priors, rates, where="curves." + ("roc" if kind == "roc" else
                                                   "precision_recall"), proper=True)


def _thresholds(scores: np.ndarray, thresholds: Any) -> np.ndarray:
    if thresholds is None:
        return np.concatenate([[np.inf], np.unique(scores)[::-1]])
    t = np.asarray(thresholds, dtype=float)
    if t.ndim != 1 or t.size == 0 or np.isnan(t).any():
        raise ValueError(f"thresholds must be a non-empty 1-d array without NaN, got {t!r}.")
    return np.unique(t)[::-1]


def _counts(scores: np.ndarray, is_pos: np.ndarray, thresholds: np.ndarray
            ) -> dict[str, np.ndarray]:
    """Counts with ``score >= threshold`` predicted positive, at each threshold."""
    out = {}
    for cls, (hit, miss) in ((is_pos, ("tp", "fn")), (~is_pos, ("fp", "tn"))):
        s = np.sort(scores[cls])
        above = s.size - np.searchsorted(s, thresholds, side="left")
        out[hit], out[miss] = above, s.size - above
    return out


# -- pointwise bands ---------------------------------------------------------------
def _bands(counts: Mapping[str, np.ndarray], priors: Mapping[str, Beta],
           hdi_prob: float) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Exact HDI of each rate's Beta posterior (:func:`bayescm.stats.beta_hdi_any`)."""
    lower, upper = {}, {}
    for key, prior in priors.items():
        hit, miss = _BETA[key]
        lower[key], upper[key] = beta_hdi_any(prior.alpha + counts[hit],
                                              prior.beta + counts[miss], hdi_prob=hdi_prob)
        lower[key].setflags(write=False)
        upper[key].setflags(write=False)
    return lower, upper


# -- the Bayesian bootstrap ----------------------------------------------------------
def _areas(pos: np.ndarray, neg: np.ndarray, w: np.ndarray, v: np.ndarray, pi: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """AUC and average precision of weighted cases, one per row of weights.

    ``pos`` and ``neg`` are the scores of the positives and negatives, **sorted
    ascending**; ``w`` (draws, n_pos) and ``v`` (draws, n_neg) are non-negative case
    weights (normalised here, per class) and ``pi`` (draws,) the prevalence.
    """
    d = w.shape[0]
    cw = np.zeros((d, pos.size + 1))
    np.cumsum(w, axis=1, out=cw[:, 1:])
    cv = np.zeros((d, neg.size + 1))
    np.cumsum(v, axis=1, out=cv[:, 1:])
    total_w, total_v = cw[:, -1:], cv[:, -1:]
    below = cv[:, np.searchsorted(neg, pos, side="left")]  # negatives scoring below s_i
    tied = cv[:, np.searchsorted(neg, pos, side="right")] - below
    auc = np.einsum("dk,dk->d", w, below + tied / 2) / (total_w[:, 0] * total_v[:, 0])
    recall = (total_w - cw[:, np.searchsorted(pos, pos, side="left")]) / total_w
    fpr = (total_v - below) / total_v
    pi = np.asarray(pi, dtype=float).reshape(-1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = pi * recall / (pi * recall + (1 - pi) * fpr)
    ap = np.einsum("dk,dk->d", w, np.where(w > 0, precision, 0.0)) / total_w[:, 0]
    return auc, ap


def _bootstrap(scores: np.ndarray, is_pos: np.ndarray, draws: int, kind: str,
               rng: np.random.Generator) -> np.ndarray:
    """Draws of the area under the curve from the Bayesian bootstrap of the cases."""
    pos, neg = np.sort(scores[is_pos]), np.sort(scores[~is_pos])
    chunk = max(1, _CHUNK // (scores.size + 1))
    out = np.empty(draws)
    for start in range(0, draws, chunk):
        d = min(chunk, draws - start)
        # flat Dirichlet weights are normalised Exp(1) draws (exchangeable, so they are
        # drawn directly in sorted order)
        w = rng.standard_exponential((d, pos.size))
        v = rng.standard_exponential((d, neg.size))
        pi = draw_conjugate(rng, (d,), betas={"pi": (pos.size, neg.size)})["pi"]
        auc, ap = _areas(pos, neg, w, v, pi)
        out[start:start + d] = auc if kind == "roc" else ap
    return out


def _curve(kind: str, scores: Any, y_true: Any, positive: Any, thresholds: Any,
           hdi_prob: float, draws: int, priors: Any, random_seed: Any) -> Curve:
    s, is_pos = _prepare(scores, y_true, positive)
    rate_priors = _options(kind, hdi_prob, draws, priors)
    t = _thresholds(s, thresholds)
    counts = _counts(s, is_pos, t)
    lower, upper = _bands(counts, rate_priors, hdi_prob)
    rng = np.random.default_rng(random_seed)
    name = "auc" if kind == "roc" else "average_precision"
    area = xr.DataArray(_bootstrap(s, is_pos, draws, kind, rng)[None, :], dims=SAMPLE_DIMS,
                        name=name, attrs={"method": "Bayesian bootstrap (Rubin 1981)"})
    pos, neg = np.sort(s[is_pos]), np.sort(s[~is_pos])
    point = _areas(pos, neg, np.ones((1, pos.size)), np.ones((1, neg.size)),
                   np.array([pos.size / s.size]))[0 if kind == "roc" else 1]
    for arr in (t, *counts.values()):
        arr.setflags(write=False)
    return Curve(kind, t, counts["tp"], counts["fp"], counts["fn"], counts["tn"],
                 MappingProxyType(lower), MappingProxyType(upper), area, float(point[0]),
                 float(hdi_prob), MappingProxyType(rate_priors))


@renamed_kwargs(level="hdi_prob", prior=("priors", lambda v: {"tpr": v, "fpr": v}))
def roc(
    scores: Any,
    y_true: Any,
    *,
    positive: Any = None,
    thresholds: Any = None,
    hdi_prob: float = 0.95,
    draws: int = 4000,
    priors: Mapping[str, Any] | None = None,
    random_seed: int | np.random.Generator | None = None,
) -> Curve:
    r"""ROC curve with pointwise credible bands and the posterior of the AUC.

    At each threshold :math:`t` (a case is predicted positive when its score is
    :math:`\ge t`) the band of :math:`TPR_t` is the HDI of
    :math:`\mathrm{Beta}(a + tp_t, b + fn_t)` and that of :math:`FPR_t` the HDI of
    :math:`\mathrm{Beta}(a + fp_t, b + tn_t)`.  The AUC posterior comes from the
    Bayesian bootstrap of the cases (Dirichlet(1, ..., 1) weights over positives and
    over negatives), each draw's AUC being the trapezoidal area under its weighted
    empirical ROC curve,
    :math:`\sum_{i \in +}\sum_{j \in -} w_i v_j ([s_i > s_j] + \tfrac12 [s_i = s_j])`.
    The area between band edges is not a posterior of the AUC (the edges are
    pointwise; no draw follows them): see :mod:`bayescm.curves`.

    Parameters
    ----------
    scores
        One finite score per case; higher means more likely positive.
    y_true
        True labels, any two distinct values; both classes must occur.
    positive
        The positive label; may be omitted for labels ``{0, 1}`` or ``{False, True}``.
    thresholds
        Thresholds of the curve (sorted descending, repeats dropped).  Default: every
        distinct score and ``+inf``, so the curve runs from (0, 0) to (1, 1) (the
        smallest score already predicts every case positive).  The AUC posterior uses
        all cases whatever the thresholds.
    hdi_prob
        Probability mass of the pointwise bands and of the AUC's HDI (the deprecated
        ``level=`` is an alias).
    draws
        Number of Bayesian-bootstrap draws of the AUC (i.i.d., one chain: the total).
    priors
        ``{"tpr": prior, "fpr": prior}`` (``{"tpr": ..., "ppv": ...}`` for
        :func:`precision_recall`): the proper Beta prior of each pointwise rate, as
        anything :func:`bayescm.priors.coerce` reads (``Beta(a, b)``, ``(a, b)``,
        ``scipy.stats.beta(a, b)``, a ``pymc_extras`` ``Prior("Beta", ...)``); rates
        left out keep Beta(1, 1) (flat).  The deprecated ``prior=(a, b)`` sets every
        rate's.
    random_seed
        Seed or generator of the bootstrap.

    Returns
    -------
    Curve
        ``kind="roc"``: counts, point estimates ``fpr``/``tpr``, bands
        (``band("tpr")``), the AUC draws ``auc`` with ``auc_mean``, ``auc_hdi``,
        ``plot()`` and ``to_frame()``.

    Raises
    ------
    ValueError
        For non-finite or non-numeric scores, labels of another length, missing
        labels, more than two labels, an unclear positive label, a single class, or
        invalid options.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescm import curves
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat(["ill", "well"], 50)
    >>> scores = rng.normal(np.where(y == "ill", 1.0, 0.0), 1.0)
    >>> curve = curves.roc(scores, y, positive="ill", random_seed=1)
    >>> curve.fpr[0], curve.tpr[0], curve.fpr[-1], curve.tpr[-1]
    (np.float64(0.0), np.float64(0.0), np.float64(1.0), np.float64(1.0))
    >>> lo, hi = curve.band("tpr")
    >>> bool(np.all((lo <= curve.tpr) & (curve.tpr <= hi)))
    True
    >>> 0.6 < curve.auc_mean < 0.9
    True
    """
    return _curve("roc", scores, y_true, positive, thresholds, hdi_prob, draws, priors,
                  random_seed)


@renamed_kwargs(level="hdi_prob", prior=("priors", lambda v: {"tpr": v, "ppv": v}))
def precision_recall(
    scores: Any,
    y_true: Any,
    *,
    positive: Any = None,
    thresholds: Any = None,
    hdi_prob: float = 0.95,
    draws: int = 4000,
    priors: Mapping[str, Any] | None = None,
    random_seed: int | np.random.Generator | None = None,
) -> Curve:
    r"""Precision-recall curve with pointwise credible bands and the posterior of the AP.

    At each threshold the band of precision is the HDI of
    :math:`\mathrm{Beta}(a + tp_t, b + fp_t)` and that of recall the HDI of
    :math:`\mathrm{Beta}(a + tp_t, b + fn_t)` (Goutte & Gaussier 2005).  Precision
    is undefined (NaN) where nothing is predicted positive; its band there is the
    prior's.  The posterior of the area under the curve is that of the average
    precision :math:`\sum_k (R_k - R_{k-1}) P_k` (step-wise, as scikit-learn's
    ``average_precision_score``) under the Bayesian bootstrap of the cases:
    Dirichlet(1, ..., 1) weights within each class and the prevalence
    :math:`\pi \sim \mathrm{Beta}(n_+, n_-)`.  Precision depends on the prevalence,
    so the curve and its area describe a population with the test set's class
    balance.

    Parameters
    ----------
    scores, y_true, positive, thresholds, hdi_prob, draws, priors, random_seed
        As for :func:`roc` (``priors`` named ``"tpr"`` and ``"ppv"``).

    Returns
    -------
    Curve
        ``kind="pr"``: point estimates ``recall``/``precision``, bands
        (``band("precision")``), the average precision's draws in ``auc``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescm import curves
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1, 0], [30, 70])
    >>> curve = curves.precision_recall(rng.normal(y, 1.0), y, random_seed=1)
    >>> lo, hi = curve.auc_hdi
    >>> bool(0.3 < lo < curve.auc_point < hi < 1)
    True
    """
    return _curve("pr", scores, y_true, positive, thresholds, hdi_prob, draws, priors,
                  random_seed)
