r"""Judge-assisted evaluation: a model's whole confusion matrix from judges and a few gold labels.

A model under test predicts a class for each of :math:`N` items; one or more judges
(an LLM-as-judge, annotators) label the same items; the true class is known for
:math:`n \ll N` of them.  Each of them is a *rater* of a Dawid–Skene latent-class model
(Dawid & Skene, "Maximum likelihood estimation of observer error-rates using the EM
algorithm", 1979): item :math:`i` has an unseen class :math:`z_i` with prevalence
:math:`\pi`, rater :math:`r` labels a class-:math:`a` item :math:`p` with probability
:math:`\theta_{rap}`, independently of the other raters given the class, and gold items
enter with their class (verified cases).  The model under test is rater
:math:`r = m`; its posterior confusion probabilities

.. math::

    C_{ap} = \pi_a\,\theta_{map}\qquad(\textstyle\sum_{a,p} C_{ap} = 1)

give every metric of the one registry (accuracy :math:`\sum_a C_{aa}`, per-class
precision :math:`C_{cc}/\sum_a C_{ac}`, recall, F1, macro averages, ...) with its
posterior.  On the :math:`N` items themselves, the expected confusion counts given the
ratings are, at each posterior draw,

.. math::

    E_{ap} = \sum_{i=1}^{N} \Pr(z_i = a \mid \text{ratings of } i, \pi, \theta)\,
             \mathbf 1\{\hat y_i = p\},

whose column sums are the model's prediction counts and whose gold items count for
their class exactly.

Identifiability: two raters' labels of an item cannot tell a rater's errors from the
class prevalence; gold items of every class (or a third conditionally independent
rater) identify the model (see :func:`bayescm.models.dawid_skene`, whose warning is
given).  Unlike prediction-powered inference (Angelopoulos et al., "Prediction-powered
inference", 2023), which needs no model of the judge but gives only means, the latent
class model assumes the judges' errors are independent of the model's given the
class, and in exchange gives the whole matrix.  ``benchmarks/bench_judged_calibration.py``
measures both on 10,000 judged items: with a conditionally independent judge the 95%
HDIs of the accuracy cover 0.97 to 0.95 from 20 to 200 gold items at 0.6 to 0.7 times
PPI++'s width; when the judge errs more often where the model errs, they miss almost
always (coverage 0.01 at 50 gold items, against PPI++'s 0.92).
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.data.ratings import RatingsTable
from bayescm.family import family_of, spec_of
from bayescm.inference.diagnostics import mcse_mean
from bayescm.metrics import MULTICLASS
from bayescm.models import IdentifiabilityWarning
from bayescm.models.dawid_skene import LabelSwitchingWarning, dawid_skene
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, hdi

__all__ = ["DEFAULT_METRICS", "JudgedEvaluation", "judge_assisted"]

DEFAULT_METRICS: tuple[str, ...] = ("acc", "ba", "tpr", "ppv", "f1", "ppv_macro", "f1_macro")
"""Accuracy, balanced accuracy, per-class recall, precision and F1, macro averages."""
#: Refits (with the next seeds) when a chain sits in the classes' mirror image although
#: gold items fix the labelling: the chains start at random points, and one may start
#: in the basin of that local mode (1-3% of fits in the calibration benchmark).
RETRIES = 2
HOOK = "item_class_probabilities"
#: Pattern chunks keep draws x patterns x classes below this many values.
CHUNK_VALUES = 8_000_000


@dataclass(frozen=True)
class JudgedEvaluation:
    """The model under test's posterior confusion matrix and metrics (:func:`judge_assisted`).

    Attributes
    ----------
    model
        The model's rater name; ``judges`` the judges' names; ``labels`` the K classes.
    joint
        Draws of the confusion probabilities :math:`C_{ap}` (dims ``chain, draw, actual,
        predicted``; they sum to 1 over the cells).
    counts
        Draws of the expected confusion counts :math:`E_{ap}` on the N items given
        their ratings (same dims; they sum to N, columns to the model's predictions).
    metrics
        Draws of every requested metric (``chain, draw`` and ``class`` for one-vs-rest
        metrics).
    idata
        The fit of the Dawid–Skene model (:func:`bayescm.fit`).
    n_items, n_gold
        N and the number of gold items.
    hdi_prob
        Mass of the intervals of :meth:`summary` and :meth:`to_frame`.
    """

    model: str
    judges: tuple[str, ...]
    labels: tuple[Hashable, ...]
    joint: xr.DataArray
    counts: xr.DataArray
    metrics: xr.Dataset
    idata: Any
    n_items: int
    n_gold: int
    hdi_prob: float = 0.95

    @property
    def confusion(self) -> xr.Dataset:
        """Both confusion matrices' draws: ``joint`` (probabilities) and ``counts``."""
        return xr.Dataset({"joint": self.joint, "counts": self.counts})

    def summary(self, hdi_prob: float | None = None) -> pd.DataFrame:
        """One row per metric (and class): ``mean, sd, hdi_lower, hdi_upper, mcse_mean``.

        Index ``(metric, class)``; metrics without a class (``acc``, ``f1_macro``, ...)
        have class ``""``.  ``attrs["hdi_prob"]`` records the mass.
        """
        p = self.hdi_prob if hdi_prob is None else check_hdi_prob(hdi_prob)
        blocks = []
        for key, da in self.metrics.data_vars.items():
            frame = _stats(da, p)
            if "class" in da.dims:
                frame.index = pd.MultiIndex.from_arrays(
                    [[key] * len(frame), list(da["class"].values)], names=["metric", "class"])
            else:
                frame.index = pd.MultiIndex.from_tuples([(key, "")], names=["metric", "class"])
            blocks.append(frame)
        out = pd.concat(blocks)
        out.attrs["hdi_prob"] = p
        return out

    def confusion_matrix(self, kind: str = "counts", stat: str = "mean",
                         hdi_prob: float | None = None) -> pd.DataFrame:
        """The K×K matrix (rows actual, columns predicted) of one statistic.

        Parameters
        ----------
        kind
            ``"counts"`` (expected counts on the N items) or ``"joint"`` (probabilities).
        stat
            ``"mean"``, ``"sd"``, ``"hdi_lower"``, ``"hdi_upper"`` or ``"mcse_mean"``.
        """
        if kind not in ("counts", "joint"):
            raise ValueError(f"kind must be 'counts' or 'joint', got {kind!r}.")
        table = _stats(getattr(self, kind), self.hdi_prob if hdi_prob is None
                       else check_hdi_prob(hdi_prob))
        if stat not in table.columns:
            raise ValueError(f"stat must be one of {list(table.columns)}, got {stat!r}.")
        return table[stat].unstack("predicted")

    def to_frame(self, hdi_prob: float | None = None) -> pd.DataFrame:
        """Everything in one long frame: columns ``quantity`` (``"metric"``, ``"joint"``,
        ``"counts"``), ``name`` (the metric's key), ``class``, ``actual``, ``predicted``
        (None where they do not apply), ``mean, sd, hdi_lower, hdi_upper, mcse_mean``."""
        p = self.hdi_prob if hdi_prob is None else check_hdi_prob(hdi_prob)
        metrics = self.summary(p).reset_index()
        metrics = metrics.rename(columns={"metric": "name"})
        metrics["class"] = pd.Series([None if c == "" else c for c in metrics["class"]],
                                     dtype=object)
        metrics.insert(0, "quantity", "metric")
        metrics["actual"] = metrics["predicted"] = None
        parts = [metrics]
        for kind in ("joint", "counts"):
            cells = _stats(getattr(self, kind), p).reset_index()
            cells.insert(0, "quantity", kind)
            cells.insert(1, "name", kind)
            cells.insert(2, "class", None)
            parts.append(cells)
        columns = ["quantity", "name", "class", "actual", "predicted", "mean", "sd",
                   "hdi_lower", "hdi_upper", "mcse_mean"]
        out = pd.concat([part.astype({"actual": object, "predicted": object})[columns]
                         for part in parts], ignore_index=True)
        out.attrs["hdi_prob"] = p
        return out

    def _header(self) -> str:
        return (f"Judge-assisted evaluation of {self.model!r}: {self.n_items} items, "
                f"{self.n_gold} gold, judges {list(self.judges)}, classes "
                f"{list(self.labels)}; posterior means with {self.hdi_prob:.0%} HDIs")

    def __repr__(self) -> str:
        table = self.summary()[["mean", "hdi_lower", "hdi_upper"]].round(3)
        counts = self.confusion_matrix("counts").round(1)
        return (f"{self._header()}\n{table!r}\nExpected confusion counts (rows actual, "
                f"columns predicted):\n{counts!r}")

    def _repr_html_(self) -> str:
        return (f"<div><p><b>{html.escape(self._header())}</b></p>"
                f"{self.summary().to_html(float_format='{:.3f}'.format)}"
                "<p>Expected confusion counts (rows actual, columns predicted)</p>"
                f"{self.confusion_matrix('counts').to_html(float_format='{:.1f}'.format)}"
                "</div>")


def judge_assisted(y_pred: Any, judges: Any, gold: Any = None, *,
                   priors: Mapping[str, Any] | None = None,
                   metrics: Sequence[str] = DEFAULT_METRICS, model: str = "model",
                   labels: Sequence[Hashable] | None = None, draws: int = 1000,
                   tune: int = 1000, chains: int = 4, random_seed: int | None = None,
                   hdi_prob: float = 0.95,
                   fit_options: Mapping[str, Any] | None = None) -> JudgedEvaluation:
    r"""Evaluate a model from judges' labels and a few gold labels (Dawid–Skene).

    Builds :meth:`bayescm.RatingsTable.from_predictions` (raters: the model, then the
    judges), the model :func:`bayescm.models.dawid_skene`, fits it with
    :func:`bayescm.fit`, and reads the model under test's confusion matrix
    :math:`C_{ap} = \pi_a\theta_{map}` and its metrics off the posterior (the math is
    in :mod:`bayescm.analysis.judged`).

    Parameters
    ----------
    y_pred
        The model's predicted class for each of the N items (no missing values).
    judges
        ``{name: labels}`` (N labels per judge, None where a judge gave none), a
        DataFrame with one column per judge, or one sequence of N labels.
    gold
        The true class of some items: N values with None/NaN for the others, or a
        mapping ``item -> class``.  Without gold items, two raters (the model and one
        judge) do not identify the model: an
        :class:`~bayescm.models.IdentifiabilityWarning` says so.
    priors
        As for :func:`bayescm.models.dawid_skene` (``"prevalence"``, ``"confusion"``
        for all raters or ``{rater: prior}``, e.g. an informative prior for a judge
        validated before).
    metrics
        Keys of the multiclass registry (one-vs-rest metrics get dim ``class``).
    model, labels
        The model's rater name, and the K classes in order (default: every label seen).
    draws, tune, chains, random_seed
        NUTS settings of :func:`bayescm.fit`.  With gold items, a fit in which a chain
        sits in the classes' mirror image (a
        :class:`~bayescm.models.dawid_skene.LabelSwitchingWarning`: a local mode that
        the gold items make improbable, reached from a random start) is repeated with
        the next seed, up to :data:`RETRIES` times.
    hdi_prob
        Mass of the result's intervals.
    fit_options
        Other arguments of :func:`bayescm.fit` (default ``predictive=False,
        prior=False, log_likelihood=False, target_accept=0.95``).

    Returns
    -------
    JudgedEvaluation
        ``.joint`` and ``.counts`` (draws of the confusion matrix as probabilities and
        as expected counts on the N items), ``.metrics`` (draws), ``.summary()``,
        ``.confusion_matrix()``, ``.to_frame()``, ``.idata``.

    Raises
    ------
    ValueError
        (:class:`~bayescm.CountsError`) for lengths that differ, missing predictions or
        labels outside ``labels``; ``KeyError`` for an unknown metric.

    Examples
    --------
    >>> import numpy as np
    >>> import bayescm as bcm
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(0, 2, 400)
    >>> noisy = lambda acc: np.where(rng.random(400) < acc, truth, 1 - truth)
    >>> gold = np.where(np.arange(400) < 60, truth, -1).astype(object)
    >>> gold[gold == -1] = None
    >>> res = bcm.analysis.judge_assisted(noisy(0.8), {"llm": noisy(0.85)}, gold,
    ...                                   draws=500, tune=500, random_seed=1)
    >>> round(float(res.confusion_matrix("counts").to_numpy().sum()), 6)  # the N items
    400.0
    >>> 0.6 < float(res.metrics["acc"].mean()) < 0.95
    True
    """
    p = check_hdi_prob(hdi_prob)
    keys = [m.key for m in MULTICLASS.resolve(list(metrics) if not isinstance(metrics, str)
                                              else metrics)]
    rt = RatingsTable.from_predictions(y_pred, judges, gold=gold, model=model, labels=labels)
    built = _build(rt, priors, str(model))
    from bayescm.inference import fit  # sampling needs the engines, imported on use

    # target_accept 0.95: with few gold items the posterior reaches towards the edges
    # of the raters' simplexes, where NUTS at 0.8 diverged in one fit in four
    # (benchmarks/bench_judged_calibration.py at n = 20); smaller steps cost little here
    options = {"predictive": False, "prior": False, "log_likelihood": False,
               "target_accept": 0.95, **dict(fit_options or {})}
    n_gold = int((rt.gold_index >= 0).sum())
    for attempt in range(1 + RETRIES * (n_gold > 0)):
        seed = None if random_seed is None else random_seed + attempt
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            idata = fit(built, draws=draws, tune=tune, chains=chains, random_seed=seed,
                        metrics=keys, **options)
        trapped = any(issubclass(w.category, LabelSwitchingWarning) for w in caught)
        if not trapped or attempt == RETRIES * (n_gold > 0):
            break
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    post = idata_mod.group(idata, "posterior")
    joint = post["theta"].sel(classifier=str(model), drop=True).transpose(
        *SAMPLE_DIMS, "actual", "predicted")
    counts = _expected_counts(post, built, rt, str(model))
    values = MULTICLASS.compute(joint, keys)
    return JudgedEvaluation(str(model), rt.raters[1:], rt.labels, joint.rename("joint"),
                            counts, values, idata, rt.n_items, n_gold, p)


def _build(rt: RatingsTable, priors: Mapping[str, Any] | None, model: str) -> Any:
    """The Dawid–Skene model, its identifiability warning told in a judge's words."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = dawid_skene(rt, priors=priors)
    n_gold = int((rt.gold_index >= 0).sum())
    for w in caught:
        message = str(w.message)
        if issubclass(w.category, IdentifiabilityWarning):
            judges = list(rt.raters[1:])
            lead = (f"Judge-assisted evaluation with no gold items and only {rt.n_raters} "
                    f"raters (the model {model!r} and judge(s) {judges}): the model's "
                    "confusion matrix is not identified by the labels; give the true class "
                    "of some items of every class (gold=) or add another judge. "
                    if n_gold == 0 and rt.n_raters < 3 else "Judge-assisted evaluation: ")
            message = lead + message
        warnings.warn(message, w.category, stacklevel=3)
    return built


def _expected_counts(post: xr.Dataset, built: Any, rt: RatingsTable, model: str
                     ) -> xr.DataArray:
    """Draws of :math:`E_{ap}`: per rating pattern the class posterior times its items,
    in the column of the model's prediction."""
    family, spec = family_of(built), spec_of(built)
    pat = rt.patterns()
    k = rt.n_classes
    pred = np.argmax(pat.counts[:, rt.raters.index(model), :], axis=-1)  # one rating each
    onehot = np.eye(k)[pred] * pat.multiplicity[:, None]  # (P, K_predicted)
    n_draws = post.sizes["chain"] * post.sizes["draw"]
    step = max(1, CHUNK_VALUES // max(1, n_draws * k))
    out = np.zeros((post.sizes["chain"], post.sizes["draw"], k, k))
    for lo in range(0, len(pat), step):
        index = np.arange(lo, min(lo + step, len(pat)))
        q = np.asarray(getattr(family, HOOK)(post, spec, index))  # (chain, draw, P', K)
        out += np.einsum("cdpa,pq->cdaq", q, onehot[index])
    labels = list(rt.labels)
    return xr.DataArray(out, dims=(*SAMPLE_DIMS, "actual", "predicted"), name="counts",
                        coords={"chain": post["chain"].values, "draw": post["draw"].values,
                                "actual": labels, "predicted": labels})


def _stats(da: xr.DataArray, p: float) -> pd.DataFrame:
    """mean, sd, HDI and MCSE of the mean of every non-sample cell of ``da``."""
    rest = [d for d in da.dims if d not in SAMPLE_DIMS]
    series = da.transpose(*rest, *SAMPLE_DIMS).values
    series = series.reshape(-1, *series.shape[-2:])  # (cells, chain, draw)
    flat = series.reshape(series.shape[0], -1)
    lower, upper = hdi(flat, p)
    mcse = np.zeros(series.shape[0])
    varying = np.ptp(flat, axis=1) > 0  # constant draws (gold-only cells) have no error
    if varying.any():
        mcse[varying] = mcse_mean(series[varying])
    frame = pd.DataFrame({"mean": flat.mean(axis=1), "sd": flat.std(axis=1, ddof=1),
                          "hdi_lower": lower, "hdi_upper": upper, "mcse_mean": mcse})
    if rest:
        frame.index = pd.MultiIndex.from_product([list(da[d].values) for d in rest],
                                                 names=rest) if len(rest) > 1 else \
            pd.Index(list(da[rest[0]].values), name=rest[0])
    return frame
