r"""``summary``: one table of every metric's posterior, with plug-in values.

The HDI is :func:`bayescm.stats.hdi` (ArviZ's estimator: the narrowest window
holding ``floor(hdi_prob * n)`` sorted draws), vectorised over classifiers and
metrics, so a batch of 1,000 classifiers is summarised in one pass.  The table's
statistics are computed by :func:`table` alone; :func:`bayescm.summary_exact`
streams chunks of classifiers through it.

Exact where exact exists
------------------------
For a fit whose model has a closed-form posterior (its record in the attrs,
:func:`bayescm.inference.marginals.closed_form_of`), the metrics with an exact Beta
marginal (three-Beta prevalence, TPR and TNR; a Dirichlet row's recall; every ratio
of cell sums under a Dirichlet over the cells) are summarised by that Beta, not by
the draws: mean, sd and median of ``scipy.stats.beta`` and the exact HDI
(:func:`bayescm.stats.beta_hdi_any`), for exact and NUTS fits alike (the posterior
is the same).  Column ``exact`` says which rows are; ``note`` names the Beta.  An
unbounded metric whose posterior mean does not exist (the DOR with fn = 0) reports
``mean = inf`` and ``sd = NaN`` (a finite mean but no finite sd: ``sd = inf``) with
the reason in ``note``, never a Monte Carlo artefact
(:mod:`bayescm.inference.marginals`).

Every other row carries its Monte Carlo standard error: ``mcse_mean`` (i.i.d.
draws: :math:`sd/\sqrt{n}`; MCMC: ArviZ's ``mcse(method="mean")`` through
:func:`bayescm.inference.diagnostics.mcse_mean`) and ``mcse_hdi_lower`` /
``mcse_hdi_upper`` (:func:`bayescm.stats.hdi_mcse`: batches, scaled at the HDI's
cube-root rate).  Exact rows have MCSE 0.

Index convention
----------------
The unit dims of the requested metrics, then ``metric``: ``(classifier, metric)``
for binary models (``(slice, metric)`` for a sliced matrix, the slice labels such
as ``"sex=F|age=40-60"``; ``(population, classifier, metric)`` for latent-class
ones, a population's parameter shared by its classifiers).  Multiclass fits give
``(classifier, metric)`` when only overall and averaged metrics are requested and
``(classifier, class, metric)`` as soon as a per-class metric is: the rows of
metrics without a class (``acc``, ``f1_macro``, ...) then carry class ``""`` and
come first for each classifier, followed by each class (in label order) with its
per-class metrics; an overall metric is never repeated across classes.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.confusion import UNIT_DIMS, unit_of
from bayescm.data.items import OUTCOMES
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, hdi, hdi_mcse

if TYPE_CHECKING:
    import arviz as az

    from bayescm.inference import marginals as marginals_mod

__all__ = ["CLASS_DIM", "COLUMNS", "EXTRA_COLUMNS", "ExactMismatchWarning", "check_names",
           "hdi", "metric_arrays", "select_classifiers", "stats_columns", "summary", "table"]

COLUMNS = ["plug_in", "mean", "sd", "median", "hdi_lower", "hdi_upper", "hdi_width"]
EXTRA_COLUMNS = ["mcse_mean", "mcse_hdi_lower", "mcse_hdi_upper", "exact", "note"]
"""Appended after ``COLUMNS`` (and ``undefined``): Monte Carlo errors, exactness, notes."""
_MISMATCH_Z = 6.0  # a closed-form mean this many MCSEs from the draws' is not their posterior


class ExactMismatchWarning(UserWarning):
    """A fit's draws disagree with the closed form of its model record."""
CLASS_DIM = "class"
"""The dim of per-class multiclass metrics; never broadcast over (label ``""``)."""
_TABLE_DIMS = ("actual", "predicted")


def select_classifiers(obj: xr.Dataset | xr.DataArray, classifiers: str | Sequence[str] | None
                       ) -> xr.Dataset | xr.DataArray:
    """``obj`` restricted to some classifiers (all when None), naming any unknown one."""
    classifiers = check_names("classifiers", classifiers)
    if classifiers is None:
        return obj
    unit = unit_of(obj)
    if unit is None:
        raise ValueError(f"There is no classifier dim (dims {tuple(obj.dims)}); "
                         "drop classifiers=...")
    names = [str(c) for c in obj[unit].values]
    wanted = [classifiers] if isinstance(classifiers, str) else list(classifiers)
    unknown = [c for c in wanted if c not in names]
    if unknown:
        raise KeyError(f"{unit.capitalize()}(s) {unknown} are not in the data ({names}).")
    return obj.sel({unit: wanted})


def check_names(what: str, value: Any) -> str | list[str] | None:
    """``value`` as None, a name or a list of names; else a TypeError naming what to pass."""
    if value is None or isinstance(value, str):
        return value
    names = (list(value) if isinstance(value, Iterable)
             and not isinstance(value, bytes | Mapping) else None)
    if names is None or not all(isinstance(n, str) for n in names):
        example = "'tpr' or ['tpr', 'tnr']" if what == "metrics" else "'cm' or ['a', 'b']"
        raise TypeError(f"{what} takes a name or a list of names (e.g. {example}), or None "
                        f"for all of them; got {type(value).__name__} {value!r}.")
    return names


def summary(
    idata: az.InferenceData,
    *,
    metrics: str | Sequence[str] | None = None,
    classifiers: str | Sequence[str] | None = None,
    hdi_prob: float = 0.95,
    group: str = "posterior",
) -> pd.DataFrame:
    r"""Posterior summary of metrics: plug-in value, mean, sd, median, HDI and its width,
    their Monte Carlo errors, and exact values where the posterior has them.

    The HDI width is Tötsch & Hoffmann's *metric uncertainty* (MU) when
    ``hdi_prob=0.95``.  Metrics with an exact Beta marginal under the fit's
    closed-form posterior are summarised by it (module notes); the others by their
    draws, with Monte Carlo standard errors

    .. math::

        \mathrm{MCSE}(\bar x) = sd / \sqrt{\mathrm{ESS}}, \qquad
        \mathrm{MCSE}(\text{bound}) = s_B\, B^{-1/3},

    (ESS = n for the exact sampler's i.i.d. draws; :math:`s_B` the sd of the bound
    over :math:`B = 16` contiguous batches, :func:`bayescm.stats.hdi_mcse`).

    Parameters
    ----------
    idata
        Result of :func:`bayescm.fit` (binary, latent-class or multiclass models).
    metrics
        Metric keys (or aliases), resolved by the registry that fits the data
        (:func:`bayescm.metrics.registry_for`: for a multiclass fit ``"recall"`` is
        ``tpr`` per class and ``"f1_micro"`` is ``acc``); default every metric present
        in the group.
    classifiers
        Subset of classifiers; default all.
    hdi_prob
        Probability mass of the highest-density interval.
    group
        ``"posterior"`` (the metric's posterior), ``"posterior_predictive"`` or
        ``"predictions"`` (what repeated experiments would observe: draws where a
        metric is undefined or infinite, e.g. ppv with no predicted positives or
        log_dor with tp * tn = 0, are dropped and their share is reported in column
        ``undefined``), or ``"prior"`` (when it holds metrics).

    Returns
    -------
    pandas.DataFrame
        Index ``(classifier, metric)`` (``(slice, metric)`` for a sliced matrix,
        whose slices ``classifiers=`` then selects; ``(population, classifier, metric)`` for
        latent-class models; ``(classifier, class, metric)`` for a multiclass fit
        when a per-class metric is requested, class ``""`` for the metrics without
        one: see the module notes); columns ``plug_in, mean, sd, median, hdi_lower,
        hdi_upper, hdi_width`` (``undefined`` for a predictive group), then
        ``mcse_mean, mcse_hdi_lower, mcse_hdi_upper`` (0 for exact rows, NaN where
        unknown), ``exact`` (True where the row is the exact Beta marginal) and
        ``note`` (the Beta, or why a mean or sd does not exist; ``""``).  ``plug_in``
        is the metric of the observed table (NaN where undefined, and without labels;
        for item-level results, ``acc``'s is the mean item score).
        ``attrs["group"]`` names the group read; for a sliced matrix whose classifier
        was named, ``attrs["classifier"]`` is it.

    Raises
    ------
    TypeError
        When ``idata`` is not a fit, or ``metrics`` or ``classifiers`` is not a name, a
        list of names or None.

    Warns
    -----
    ExactMismatchWarning
        When the draws' means lie more than six MCSEs from the closed form's (a model
        changed after it was built, or a NUTS fit that did not converge): the table is
        then the draws' alone.

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)
    >>> table = bcm.summary(idata, metrics=["tpr", "tnr"])
    >>> table.loc[("cm", "tnr"), "plug_in"]
    np.float64(0.75)
    >>> row = table.loc[("cm", "tnr")]         # TNR ~ Beta(7, 3), exactly
    >>> bool(row["exact"]), round(row["hdi_lower"], 4), round(row["hdi_upper"], 4)
    (True, np.float64(0.4324), np.float64(0.9458))

    A multiclass fit: per-class rows under their class, the others under ``""``.

    >>> mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> fit = bcm.fit(bcm.models.multiclass_cells(mc), sampler="exact", random_seed=1)
    >>> t = bcm.summary(fit, metrics=["recall", "f1_macro", "f1_micro"])
    >>> list(t.index.names), len(t)
    (['classifier', 'class', 'metric'], 5)
    >>> t.loc[("cm", "", "acc"), "plug_in"], round(t.loc[("cm", "dog", "tpr"), "plug_in"], 2)
    (np.float64(0.75), np.float64(0.7))
    """
    if not (idata_mod.is_inference_data(idata) or isinstance(idata, xr.DataTree)):
        raise TypeError(f"idata must be an arviz.InferenceData from bayescm.fit (or "
                        f"bayescm.load), got {type(idata).__name__}; for counts without a "
                        "fit use bayescm.summary_exact.")
    hdi_prob = check_hdi_prob(hdi_prob)
    metrics = check_names("metrics", metrics)
    classifiers = check_names("classifiers", classifiers)
    ds: xr.Dataset = idata_mod.group(idata, group)
    obs = (idata_mod.group(idata, "observed_data").get("counts")
           if idata_mod.has_group(idata, "observed_data") else None)
    reg = registry.registry_for(idata, group=group)
    ds = select_classifiers(ds, classifiers)
    arrays = metric_arrays(ds, reg, metrics, group)
    if any(a.chunks is not None for a in arrays.values()):
        # xarray on Dask (bcm.exact_posterior(..., chunk=)): one pass computes every
        # metric's blocks together, where one compute per metric would redraw them all
        arrays = dict(xr.Dataset(arrays).compute().data_vars)
    plug = None
    unit = None if obs is None else unit_of(obs)
    if unit is not None and unit in ds.dims and (
            "cell" in obs.dims or registry.is_multiclass_dims(obs.dims)):  # labelled data
        plug = reg.compute(obs.sel({unit: ds[unit].values}), list(arrays))
    elif (unit is not None and unit in ds.dims and "outcome" in obs.dims
          and set(OUTCOMES) == set(obs["outcome"].values.tolist())):
        plug = _scored_plug_in(obs.sel({unit: ds[unit].values}), unit, list(arrays))
    iid = idata_mod.attrs(idata).get("sampler") == "exact"
    exact = _exact_of(idata, list(arrays), reg) if group == "posterior" else None
    out = table(arrays, hdi_prob=hdi_prob, plug=plug, undefined=group != "posterior",
                iid=iid, exact=exact)
    out.attrs["group"] = group
    if "classifier" in ds.attrs:  # the classifier whose predictions a sliced fit counts
        out.attrs["classifier"] = ds.attrs["classifier"]
    return out


def _exact_of(idata: Any, keys: list[str], reg: registry.Registry
              ) -> dict[str, marginals_mod.Exact] | None:
    """What the fit's closed-form posterior says exactly about the metrics (or None)."""
    # imported here: ``import bayescm`` stays free of scipy.stats (bayescm.summary is eager)
    from bayescm.inference import marginals as marginals_mod

    found = marginals_mod.closed_form_of(idata)
    if found is None:
        return None
    try:
        return marginals_mod.exact_marginals(*found, keys, reg)
    except (KeyError, ValueError, IndexError):  # a family whose draws have no theta
        return None


def _scored_plug_in(obs: xr.DataArray, unit: str, keys: list[str]) -> xr.Dataset:
    """Item-level scores (counts on dim ``outcome``: ``correct``, ``wrong``): the plug-in
    accuracy is each unit's mean item score (each item's share correct over its runs,
    averaged over the items), the centre of the CLT interval of
    :func:`bayescm.analysis.benchmark_intervals`; no other metric has one."""
    item = obs.sel(outcome=OUTCOMES[0]) / obs.sum("outcome")
    acc = item.mean([d for d in item.dims if d != unit]).astype(float)
    nan = xr.full_like(acc, np.nan)
    return xr.Dataset({k: acc if k == "acc" else nan for k in keys})


def _table_of(ds: xr.Dataset) -> xr.DataArray | None:
    """The group's tables the metrics come from: ``theta``, else replicated ``counts``."""
    for name in ("theta", "counts"):
        if name in ds:
            return ds[name]
    return None


def _is_metric(da: xr.DataArray, per_class: bool) -> bool:
    """Whether a variable has the dims of a metric: a class dim iff it is per class, and
    no table dims (multiclass_rows' parameter ``prevalence`` on ``actual`` is not the
    per-class metric of that name)."""
    dims = set(da.dims)
    return (CLASS_DIM in dims) == per_class and not dims & set(_TABLE_DIMS)


def metric_arrays(ds: xr.Dataset, reg: registry.Registry, metrics: str | Sequence[str] | None,
                  group: str) -> dict[str, xr.DataArray]:
    """The draws of the requested metrics in a group, by canonical key.

    A multiclass variable that carries a metric's name without its dims (a
    parameter) is replaced by the metric computed from the group's tables.
    """
    wanted = None if metrics is None else [m.key for m in reg.resolve(metrics)]
    keys = [k for k in reg.names() if k in ds] if wanted is None else wanted
    absent = [k for k in keys if k not in ds]
    if absent:
        raise KeyError(f"Metric(s) {absent} are not in group {group!r}; refit with "
                       f"bcm.fit(..., metrics=None) to compute every metric.")
    out = {k: ds[k] for k in keys}
    if reg.multiclass:
        clash = [k for k in keys if not _is_metric(ds[k], reg.per_class(k))]
        source = _table_of(ds)
        if clash and source is not None:
            out.update(reg.compute(source, clash, dtype=np.float64))
        elif clash:
            for k in clash:
                del out[k]
    if not out:
        raise KeyError(f"Group {group!r} holds no metrics"
                       + ("; compute them from its theta with bcm.metrics.compute."
                          if "theta" in ds else "."))
    return out


def table(arrays: Mapping[str, xr.DataArray], *, hdi_prob: float = 0.95,
          plug: xr.Dataset | None = None, undefined: bool = False, iid: bool = False,
          exact: Mapping[str, marginals_mod.Exact] | None = None) -> pd.DataFrame:
    """The summary table of metric draws (dims: units and ``chain, draw``).

    The one implementation of the table's statistics and index (see the module
    notes); :func:`summary` and :func:`bayescm.summary_exact` call it.  Units other
    than ``class`` are broadcast to the widest metric's; ``plug`` holds the plug-in
    values by key (NaN without it); ``undefined`` adds the share of draws where a
    metric is undefined or infinite; ``iid`` says the draws are independent (the
    exact sampler); ``exact`` is what the closed form says of each metric
    (:func:`bayescm.inference.marginals.exact_marginals`), which replaces the draws'
    statistics where it applies.
    """
    keys = list(arrays)
    widest = max(keys, key=lambda k: len(set(arrays[k].dims) - {CLASS_DIM}))
    template = arrays[widest]
    if CLASS_DIM in template.dims:
        template = template.isel({CLASS_DIM: 0}, drop=True)
    base = [d for d in template.dims if d not in SAMPLE_DIMS]
    units = template.isel({d: 0 for d in SAMPLE_DIMS if d in template.dims}, drop=True)
    if not set(UNIT_DIMS) & set(base):
        raise ValueError("summary needs metrics with a 'classifier' (or 'slice') dim "
                         "(bayescm models).")
    overall = [k for k in keys if CLASS_DIM not in arrays[k].dims]
    by_class = [k for k in keys if CLASS_DIM in arrays[k].dims]
    classes = ([str(c) for c in arrays[by_class[0]][CLASS_DIM].values] if by_class else [])
    n_base = int(np.prod([template.sizes[d] for d in base]))
    k = len(classes)
    per_unit = len(overall) + k * len(by_class)  # rows of one base unit
    from bayescm.inference import marginals as marginals_mod

    known = {key: marginals_mod.aligned(ex, key in by_class, base, units, classes)
             for key, ex in (exact or {}).items() if key in arrays}
    # a metric exact in every row needs no sort of its draws (unless they disagree)
    light = {key for key, ex in known.items() if np.isfinite(ex["a"]).all()}

    def rows_of(key: str) -> np.ndarray:
        """Row positions of a key's values (base units first, then class)."""
        units = np.arange(n_base)[:, None] * per_unit
        if key in overall:
            return (units + overall.index(key)).ravel()
        return (units + len(overall) + np.arange(k)[None, :] * len(by_class)
                + by_class.index(key)).ravel()

    def one(key: str, full: bool = True) -> dict[str, np.ndarray]:
        extra = [CLASS_DIM] if key in by_class else []
        da = arrays[key]
        if set(da.dims) - {CLASS_DIM} != set(template.dims):  # a shared parameter
            da = da.broadcast_like(template)
        da = da.transpose(*base, *extra, *SAMPLE_DIMS)
        flat = da.values.reshape(-1, da.sizes["chain"] * da.sizes["draw"])
        cols = (stats_columns(flat, hdi_prob, chains=da.sizes["chain"], iid=iid) if full
                else _moments(flat, da.sizes["chain"], iid))
        if plug is not None:
            value = plug[key]
            if set(value.dims) - {CLASS_DIM} != set(base):
                value = value.broadcast_like(units)
            cols["plug_in"] = value.transpose(*base, *extra).values.ravel()
        return cols

    # sorting releases the GIL: metrics are summarised two at a time
    with ThreadPoolExecutor(2) as pool:
        done = dict(zip(keys, pool.map(lambda key: one(key, key not in light), keys),
                        strict=True))
    off = [key for key, ex in known.items() if marginals_mod.disagree(done[key], ex, _MISMATCH_Z)]
    if off:
        warnings.warn(
            f"The draws of {', '.join(off)} disagree with the closed-form posterior of the "
            f"fit's model record (means more than {_MISMATCH_Z:g} Monte Carlo standard errors "
            "apart): a model changed after it was built, or a NUTS fit that did not converge. "
            "The table summarises the draws alone.", ExactMismatchWarning, stacklevel=3)
        known = {}
        done.update({key: one(key) for key in light})
    columns = COLUMNS + (["undefined"] if undefined else []) + EXTRA_COLUMNS
    data: dict[str, np.ndarray] = {c: np.full(n_base * per_unit, np.nan) for c in columns}
    data["exact"] = np.zeros(n_base * per_unit, dtype=bool)
    data["note"] = np.full(n_base * per_unit, "", dtype=object)
    for key, cols in done.items():
        if key in known:
            cols.update(marginals_mod.columns(cols, known[key], hdi_prob))
        at = rows_of(key)
        for c in columns:
            if c in cols:
                data[c][at] = cols[c]
    levels = _unit_levels(template, base, per_unit)
    names = list(base)
    within_class = ([""] * len(overall) + [c for c in classes for _ in by_class])
    within_key = overall + by_class * k
    if by_class:
        levels.append(np.tile(within_class, n_base))
        names.append(CLASS_DIM)
    levels.append(np.tile(within_key, n_base))
    names.append("metric")
    out = pd.DataFrame(data, index=pd.MultiIndex.from_arrays(levels, names=names))
    out.attrs["hdi_prob"] = hdi_prob
    return out


def _unit_levels(template: xr.DataArray, base: Sequence[str], per_unit: int) -> list[Any]:
    """Index levels of the base units, each repeated over the rows of a unit."""
    grid = np.meshgrid(*[np.array([str(v) for v in template[d].values], dtype=object)
                         for d in base], indexing="ij")
    return [np.repeat(g.ravel(), per_unit) for g in grid]


def stats_columns(flat: np.ndarray, hdi_prob: float, *, chains: int = 1,
                  iid: bool = False) -> dict[str, np.ndarray]:
    """Mean, sd, median, HDI, their Monte Carlo errors and the undefined share of each
    row of draws (``chains`` chains one after another in a row; ``iid``: independent
    draws, whose ESS is their number).

    The HDI and the median are those of the finite draws (NaN with fewer than two);
    ``undefined`` is the share of the others.  A row with undefined draws gets the
    MCSEs of its finite draws taken as one chain.
    """
    # contiguous rows: NumPy's pairwise sums then give a row the same mean whatever
    # the other rows (a strided view would sum in another order)
    flat = np.ascontiguousarray(flat, dtype=np.float64)
    finite = np.isfinite(flat)
    if finite.all():
        out = _finite_stats(flat, hdi_prob, chains, iid)
        out["undefined"] = np.zeros(flat.shape[0])
        return out
    out = {k: np.full(flat.shape[0], np.nan) for k in COLUMNS[1:] + EXTRA_COLUMNS[:3]}
    good = finite.all(axis=-1)
    if good.any():
        for c, v in _finite_stats(flat[good], hdi_prob, chains, iid).items():
            out[c][good] = v
    for i in np.flatnonzero(~good):
        row = flat[i][finite[i]]
        if row.size < 2:
            continue
        for c, v in _finite_stats(row[None, :], hdi_prob, 1, iid).items():
            out[c][i] = v[0]
    out["undefined"] = 1 - finite.mean(axis=-1)
    return out


def _moments(flat: np.ndarray, chains: int, iid: bool) -> dict[str, np.ndarray]:
    """Mean, sd and the mean's MCSE of rows of draws (no sort)."""
    flat = np.ascontiguousarray(flat, dtype=np.float64)
    mean, sd = flat.mean(-1), flat.std(-1, ddof=1)
    n = flat.shape[-1]
    if iid or chains < 1 or n % chains:
        mcse = sd / np.sqrt(n)
    elif n // chains < 8:  # too few draws per chain to estimate their autocorrelation
        mcse = np.full(flat.shape[0], np.nan)
    else:
        from bayescm.inference import diagnostics

        mcse = diagnostics.mcse_mean(flat.reshape(flat.shape[0], chains, n // chains))
    return {"mean": mean, "sd": sd, "mcse_mean": mcse}


COMPILED_FROM = 2**21
"""Draws in one call from which the median, HDI and MCSE come from the compiled
:func:`bayescm.inference.order_stats.draw_stats` (the same numbers from one set of
sorts; importing numba costs more than it saves below).  Once that module is loaded
(``summary_exact`` loads it for large jobs) it serves every call."""


def _finite_stats(flat: np.ndarray, hdi_prob: float, chains: int = 1,
                  iid: bool = False) -> dict[str, np.ndarray]:
    if flat.size >= COMPILED_FROM or "bayescm.inference.order_stats" in sys.modules:
        from bayescm.inference.order_stats import draw_stats

        out = draw_stats(flat, hdi_prob)
        return {**_moments(flat, chains, iid), **out,
                "hdi_width": out["hdi_upper"] - out["hdi_lower"]}
    n = flat.shape[-1]
    mid = ((n - 1) // 2, n // 2)
    middle = np.partition(flat, list(mid), axis=-1)  # linear time, as the HDI's tails
    lower, upper = hdi(flat, hdi_prob)
    mcse_lower, mcse_upper = hdi_mcse(flat, hdi_prob)
    return {**_moments(flat, chains, iid),
            "median": 0.5 * (middle[:, mid[0]] + middle[:, mid[1]]),
            "hdi_lower": lower, "hdi_upper": upper, "hdi_width": upper - lower,
            "mcse_hdi_lower": mcse_lower, "mcse_hdi_upper": mcse_upper}
