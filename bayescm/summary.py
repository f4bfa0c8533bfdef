"""``summary``: one table of every metric's posterior, with plug-in values.

The HDI is :func:`bayescm.stats.hdi` (ArviZ's estimator: the narrowest window
holding ``floor(hdi_prob * n)`` sorted draws), vectorised over classifiers and
metrics, so a batch of 1,000 classifiers is summarised in one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.stats import SAMPLE_DIMS, hdi

if TYPE_CHECKING:
    import arviz as az

__all__ = ["COLUMNS", "hdi", "select_classifiers", "summary"]

COLUMNS = ["plug_in", "mean", "sd", "median", "hdi_lower", "hdi_upper", "hdi_width"]


def select_classifiers(obj: xr.Dataset | xr.DataArray, classifiers: str | Sequence[str] | None
                       ) -> xr.Dataset | xr.DataArray:
    """``obj`` restricted to some classifiers (all when None), naming any unknown one."""
    if classifiers is None:
        return obj
    if "classifier" not in obj.dims:
        raise ValueError(f"There is no classifier dim (dims {tuple(obj.dims)}); "
                         "drop classifiers=...")
    names = [str(c) for c in obj["classifier"].values]
    wanted = [classifiers] if isinstance(classifiers, str) else list(classifiers)
    unknown = [c for c in wanted if c not in names]
    if unknown:
        raise KeyError(f"Classifier(s) {unknown} are not in the data ({names}).")
    return obj.sel(classifier=wanted)


def summary(
    idata: az.InferenceData,
    *,
    metrics: str | Sequence[str] | None = None,
    classifiers: str | Sequence[str] | None = None,
    hdi_prob: float = 0.95,
    group: str = "posterior",
) -> pd.DataFrame:
    """Posterior summary of metrics: plug-in value, mean, sd, median, HDI and its width.

    The HDI width is Tötsch & Hoffmann's *metric uncertainty* (MU) when
    ``hdi_prob=0.95``.

    Parameters
    ----------
    idata
        Result of :func:`bayescm.fit`.
    metrics
        Metric keys (or aliases); default every metric present in the group.
    classifiers
        Subset of classifiers; default all.
    hdi_prob
        Probability mass of the highest-density interval.
    group
        ``"posterior"`` (the metric's posterior), ``"posterior_predictive"`` or
        ``"predictions"`` (what repeated experiments would observe: draws where a
        metric is undefined or infinite, e.g. ppv with no predicted positives or
        log_dor with tp * tn = 0, are dropped and their share is reported in column
        ``undefined``), or ``"prior"``.

    Returns
    -------
    pandas.DataFrame
        Index ``(classifier, metric)`` (``(population, classifier, metric)`` for
        latent-class models); columns ``plug_in, mean, sd, median, hdi_lower,
        hdi_upper, hdi_width``.  Without labels there is no plug-in value (NaN).

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)
    >>> table = bcm.summary(idata, metrics=["tpr", "tnr"])
    >>> table.loc[("cm", "tnr"), "plug_in"]
    np.float64(0.75)
    """
    ds: xr.Dataset = idata_mod.group(idata, group)
    if metrics is None:
        keys = [k for k in registry.names() if k in ds]
    else:
        keys = [m.key for m in registry.resolve(metrics)]
        absent = [k for k in keys if k not in ds]
        if absent:
            raise KeyError(
                f"Metric(s) {absent} are not in group {group!r}; refit with "
                f"bcm.fit(..., metrics=None) to compute every metric."
            )
    if not keys:
        raise KeyError(f"Group {group!r} holds no metrics.")
    # parameters may have fewer dims than metrics (a population's prevalence is shared
    # by its classifiers): broadcast everything to the fullest set of unit dims
    widest = max(keys, key=lambda k: ds[k].ndim)
    unit_dims = [d for d in ds[widest].dims if d not in SAMPLE_DIMS]
    if "classifier" not in unit_dims:
        raise ValueError("summary needs metrics with a 'classifier' dim (bayescm models).")
    ds = select_classifiers(ds, classifiers)
    units = pd.MultiIndex.from_product([[str(v) for v in ds[d].values] for d in unit_dims],
                                       names=unit_dims)
    plug = None
    obs = (idata_mod.group(idata, "observed_data").get("counts")
           if idata_mod.has_group(idata, "observed_data") else None)
    if obs is not None and "cell" in obs.dims and "classifier" in obs.dims:  # labelled data
        plug = registry.compute(obs.sel(classifier=ds["classifier"].values), keys)

    def one(key: str) -> dict[str, np.ndarray]:
        da = ds[key].broadcast_like(ds[widest]).transpose(*unit_dims, *SAMPLE_DIMS)
        flat = da.values.reshape(len(units), -1)
        cols = _stats(flat, hdi_prob)
        cols["undefined"] = (~np.isfinite(flat)).sum(axis=-1) / flat.shape[-1]
        cols["plug_in"] = (plug[key].transpose(*unit_dims).values.ravel() if plug is not None
                           else np.full(len(units), np.nan))
        return cols

    # sorting releases the GIL: metrics are summarised two at a time
    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(keys, pool.map(one, keys), strict=True))
    frames = []
    for key in keys:
        frame = pd.DataFrame(results[key], index=units)
        frame["metric"] = key
        frames.append(frame.set_index("metric", append=True))
    ordered = COLUMNS + (["undefined"] if group != "posterior" else [])
    out = pd.concat(frames)[ordered]
    order = pd.MultiIndex.from_tuples([(*u, k) if isinstance(u, tuple) else (u, k)
                                       for u in units for k in keys],
                                      names=[*unit_dims, "metric"])
    out = out.reindex(order)
    out.attrs["hdi_prob"] = hdi_prob
    out.attrs["group"] = group
    return out


def _stats(flat: np.ndarray, hdi_prob: float) -> dict[str, np.ndarray]:
    if np.isfinite(flat).all():
        # one sort serves the median and the HDI
        x = np.sort(flat, axis=-1)
        n = x.shape[-1]
        lower, upper = hdi(x, hdi_prob, presorted=True)
        return {"mean": flat.mean(-1), "sd": flat.std(-1, ddof=1),
                "median": 0.5 * (x[:, (n - 1) // 2] + x[:, n // 2]),
                "hdi_lower": lower, "hdi_upper": upper, "hdi_width": upper - lower}
    out = {k: np.full(flat.shape[0], np.nan) for k in COLUMNS[1:]}
    for i, row in enumerate(flat):
        row = row[np.isfinite(row)]
        if row.size < 2:
            continue
        lo, hi = hdi(row[None, :], hdi_prob)
        out["mean"][i], out["sd"][i], out["median"][i] = row.mean(), row.std(ddof=1), np.median(row)
        out["hdi_lower"][i], out["hdi_upper"][i], out["hdi_width"][i] = lo[0], hi[0], hi[0] - lo[0]
    return out
