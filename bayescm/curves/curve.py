"""The result of :func:`bayescm.curves.roc` and :func:`bayescm.curves.precision_recall`.

A :class:`Curve` holds the per-threshold counts, the pointwise Beta bands and the
Bayesian-bootstrap draws of the area, and shows them as a table, a figure and HTML.
How they are computed is :mod:`bayescm.curves.sweep`.
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.priors import Beta
from bayescm.stats import hdi

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["Curve"]

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
        shown = set(ax.get_legend_handles_labels()[1])

        def once(text: str) -> str:
            # the band, bars and reference of several curves on one Axes: one legend entry
            return f"_{text}" if text in shown else text

        (line,) = ax.plot(x, y, **kwargs)
        color = line.get_color()
        if band:
            ax.fill_between(x, y_lo, y_hi, step=step, color=color, alpha=0.2, lw=0,
                            label=once(f"{self.hdi_prob:.0%} pointwise band of "
                                       f"{_shown(names[1])}"))
            rows = _spread(np.flatnonzero(np.isfinite(y)), errorbars)
            if rows.size:
                ax.hlines(y[rows], x_lo[rows], x_hi[rows], color=color, lw=1, alpha=0.7,
                          label=once(f"{self.hdi_prob:.0%} pointwise band of "
                                     f"{_shown(names[0])}"))
        if reference and self.kind == "roc":
            ax.plot([0, 1], [0, 1], ls="--", color="0.6", lw=1, label=once("chance"))
        elif reference:
            prevalence = self.n_pos / (self.n_pos + self.n_neg)
            ax.plot([0, 1], [prevalence, prevalence], ls="--", color="0.6", lw=1,
                    label=once(f"no skill (prevalence {prevalence:.2f})"))
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
