r"""Each item's posterior class probabilities, with their uncertainty.

For a latent-class fit of raters (:func:`bayescm.models.dawid_skene`) the probability
that item :math:`i` belongs to class :math:`c` given its ratings is, at one posterior
draw :math:`s`,

.. math::

    q^{(s)}_{ic} = \frac{\pi^{(s)}_c \prod_{r,l} \bigl(\theta^{(s)}_{rcl}\bigr)^{n_{irl}}}
                        {\sum_{c'} \pi^{(s)}_{c'} \prod_{r,l}
                         \bigl(\theta^{(s)}_{rc'l}\bigr)^{n_{irl}}}

(1 for a gold item's class).  Its posterior mean :math:`\bar q_{ic}` is the probability
of the class given the data, with the uncertainty about the raters integrated out: what
crowd-kit's ``DawidSkene.probas_`` estimates at one point (the EM estimate), here with
the spread of :math:`q_{ic}` over the posterior (an HDI) and the Monte Carlo standard
error of :math:`\bar q_{ic}`.  The draws are computed per distinct rating pattern, in
chunks, and shared by the items with that pattern.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayescm import idata as idata_mod
from bayescm.family import families, family_of, spec_of
from bayescm.inference.diagnostics import mcse_mean
from bayescm.stats import check_hdi_prob, hdi

if TYPE_CHECKING:
    import arviz as az
    import pymc as pm

__all__ = ["ItemClasses", "item_classes"]

HOOK = "item_class_probabilities"
#: Pattern chunks keep draws x patterns x classes below this many values.
CHUNK_VALUES = 8_000_000


@dataclass(frozen=True)
class ItemClasses:
    """Posterior class probabilities of every item (result of :func:`item_classes`).

    Attributes
    ----------
    mean, hdi_lower, hdi_upper, mcse
        ``items × classes`` DataFrames: the posterior mean of :math:`q_{ic}`, its HDI
        at ``hdi_prob`` and the Monte Carlo standard error of the mean.
    gold
        Per item, its gold label (None for the others).
    pattern
        Per item, its rating pattern (items with one pattern have one row of numbers).
    hdi_prob
        Mass of the intervals.
    """

    mean: pd.DataFrame
    hdi_lower: pd.DataFrame
    hdi_upper: pd.DataFrame
    mcse: pd.DataFrame
    gold: pd.Series
    pattern: pd.Series
    hdi_prob: float

    @property
    def probabilities(self) -> pd.DataFrame:
        """``items × classes``: the posterior mean probabilities (crowd-kit's ``probas_``)."""
        return self.mean

    @property
    def most_probable(self) -> pd.Series:
        """Each item's class of highest mean probability (crowd-kit's ``labels_``)."""
        return self.mean.idxmax(axis=1).rename("class")

    def to_frame(self) -> pd.DataFrame:
        """One row per (item, class): ``mean``, ``hdi_lower``, ``hdi_upper``, ``mcse_mean``,
        ``gold`` (True for the gold class of a gold item); ``attrs["hdi_prob"]``."""
        columns = {"mean": self.mean, "hdi_lower": self.hdi_lower,
                   "hdi_upper": self.hdi_upper, "mcse_mean": self.mcse}
        frame = pd.DataFrame({k: v.stack() for k, v in columns.items()})
        frame.index.names = ["item", "class"]
        gold = self.gold.reindex(frame.index.get_level_values("item")).to_numpy()
        frame["gold"] = [g is not None and g == c
                         for g, c in zip(gold, frame.index.get_level_values("class"),
                                         strict=True)]
        frame.attrs["hdi_prob"] = self.hdi_prob
        return frame

    def _header(self) -> str:
        n_gold = int(self.gold.notna().sum())
        return (f"Item class probabilities: {len(self.mean)} items, {self.mean.shape[1]} "
                f"classes ({n_gold} gold); posterior means with {self.hdi_prob:.0%} HDIs")

    def __repr__(self) -> str:
        return f"{self._header()}\n{self.mean.round(3)!r}"

    def _repr_html_(self) -> str:
        return (f"<div><p><b>{html.escape(self._header())}</b></p>"
                f"{self.mean.to_html(float_format='{:.3f}'.format)}</div>")


def item_classes(idata: az.InferenceData, *, model: pm.Model | None = None,
                 hdi_prob: float = 0.95, mcse: bool = True) -> ItemClasses:
    """Each item's posterior class probabilities from a fit of a raters' model.

    Parameters
    ----------
    idata
        From :func:`bayescm.fit` of a model whose family knows item classes
        (:func:`bayescm.models.dawid_skene`), or any InferenceData with its posterior
        (e.g. the JAGS twin's) together with ``model``.
    model
        The model the draws belong to; default: rebuilt from ``idata.attrs["model_spec"]``
        (what ``bcm.fit`` records).
    hdi_prob
        Mass of the per-item intervals.
    mcse
        Compute the Monte Carlo standard errors (ArviZ's estimator of the mean's; about
        half of the work for 10,000 items); False leaves them NaN.

    Returns
    -------
    ItemClasses
        ``.mean`` (items × classes), ``.hdi_lower``, ``.hdi_upper``, ``.mcse``,
        ``.most_probable``, and ``.to_frame()`` (one row per item and class).

    Raises
    ------
    ValueError
        When the fit's family has no item classes, or the fit carries no model record
        and no ``model`` is given.

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.data.datasets_ratings import anaesthesia
    >>> idata = bcm.fit(bcm.models.dawid_skene(anaesthesia()), random_seed=1,
    ...                 predictive=False, prior=False)
    >>> res = bcm.analysis.item_classes(idata)
    >>> res.mean.shape, res.most_probable.loc[2]
    ((45, 4), 3)
    """
    p = check_hdi_prob(hdi_prob)
    family, spec = _family_and_spec(idata, model)
    post = idata_mod.group(idata, "posterior")
    rt = spec.data
    pat = rt.patterns()
    n_draws = post.sizes["chain"] * post.sizes["draw"]
    k = rt.n_classes
    step = max(1, CHUNK_VALUES // max(1, n_draws * k))
    stats = {name: np.empty((len(pat), k)) for name in ("mean", "lower", "upper", "mcse")}
    for lo in range(0, len(pat), step):
        index = np.arange(lo, min(lo + step, len(pat)))
        q = np.asarray(getattr(family, HOOK)(post, spec, index))  # (chain, draw, P', K)
        series = np.moveaxis(q, (0, 1), (-2, -1))  # (P', K, chain, draw)
        stats["mean"][index] = series.mean(axis=(-2, -1))
        flat = series.reshape(*series.shape[:2], -1)
        stats["lower"][index], stats["upper"][index] = hdi(flat, p)
        stats["mcse"][index] = _mcse(series) if mcse else np.nan
    items = pd.Index(list(rt.items), name="item", dtype=object)
    classes = pd.Index(list(rt.labels), name="class", dtype=object)

    def frame(values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(values[pat.item_pattern], index=items, columns=classes)

    gold = pd.Series([rt.labels[g] if g >= 0 else None for g in rt.gold_index], index=items,
                     name="gold", dtype=object)
    return ItemClasses(frame(stats["mean"]), frame(stats["lower"]), frame(stats["upper"]),
                       frame(stats["mcse"]), gold,
                       pd.Series(pat.item_pattern, index=items, name="pattern"), p)


def _mcse(series: np.ndarray) -> np.ndarray:
    """MCSE of the mean of ``(P', K, chain, draw)``; 0 for constant series (gold)."""
    flat = series.reshape(-1, *series.shape[-2:])
    out = np.zeros(flat.shape[0])
    varying = np.ptp(flat.reshape(flat.shape[0], -1), axis=1) > 0
    if varying.any():
        out[varying] = mcse_mean(flat[varying])
    return out.reshape(series.shape[:2])


def _family_and_spec(idata: Any, model: Any) -> tuple[Any, Any]:
    if model is not None:
        family, spec = family_of(model), spec_of(model)
        if spec is None:
            raise ValueError("model was not built by a bayescm builder: pass the model that "
                             "bcm.models.dawid_skene returned.")
    else:
        from bayescm.inference.persist import read_spec

        record = read_spec(idata)
        if record is None:
            raise ValueError("This fit carries no model record (idata.attrs['model_spec'], "
                             "written by bcm.fit); pass model= (e.g. for a JAGS twin's fit).")
        family, spec, _ = record
    if not hasattr(family, HOOK):
        knowing = sorted(n for n, f in families().items() if hasattr(f, HOOK))
        raise ValueError(f"Item classes come from latent-class models of raters ({knowing}); "
                         f"this fit is of the {family.name} family.")
    return family, spec
