"""Which registry answers for a given table: binary cells or K×K tables.

Analysis code never branches on a model's name; it asks the data.  A ``theta`` (or
counts) on dim ``cell`` is a binary confusion table and the binary registry
(:mod:`bayescm.metrics.binary`) answers; a table on dims ``actual`` × ``predicted`` is
a K-class table and the multiclass registry (:mod:`bayescm.metrics.multiclass`)
answers.  :func:`registry_for` returns the one :class:`Registry` view of either, with
the same five questions: names, lookup, resolution of a request, direction and
whether a metric has one value per class.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.metrics import binary, multiclass

__all__ = ["BINARY", "MULTICLASS", "Registry", "compute", "is_multiclass_dims", "registry_for"]


def is_multiclass_dims(dims: Iterable[str]) -> bool:
    """True for K×K tables: dims ``actual`` and ``predicted`` and no ``cell``."""
    dims = set(dims)
    return "cell" not in dims and {"actual", "predicted"} <= dims


@dataclass(frozen=True)
class Registry:
    """One view of a metric registry (``kind`` is ``"binary"`` or ``"multiclass"``).

    Examples
    --------
    >>> from bayescm import metrics
    >>> reg = metrics.registry_for(["chain", "draw", "classifier", "actual", "predicted"])
    >>> reg.kind, reg.get("f1_micro").key, reg.per_class("f1"), reg.higher_is_better("fpr")
    ('multiclass', 'acc', True, False)
    """

    kind: str

    @property
    def multiclass(self) -> bool:
        """Whether this is the K-class registry."""
        return self.kind == "multiclass"

    def names(self) -> list[str]:
        """Every key, in display order."""
        return multiclass.multiclass_names() if self.multiclass else binary.names()

    def get(self, name: Any) -> Any:
        """The metric for a key or alias (``KeyError`` naming the known keys)."""
        return multiclass.get_multiclass(name) if self.multiclass else binary.get(name)

    def key(self, name: Any) -> str:
        """The canonical key of a name or alias."""
        return self.get(name).key

    def resolve(self, metrics: str | Iterable[str] | None) -> list[Any]:
        """Metrics for a name, names or ``None`` (all), without repeats."""
        if self.multiclass:
            return multiclass.resolve_multiclass(metrics)
        return binary.resolve(metrics)

    def higher_is_better(self, name: Any) -> bool:
        """Whether a larger value of the metric is better."""
        return self.get(name).higher_is_better if self.multiclass else \
            binary.higher_is_better(name)

    def per_class(self, name: Any) -> bool:
        """Whether the metric has one value per class (dim ``class``)."""
        return bool(self.multiclass and self.get(name).per_class)

    def compute(self, cells: xr.DataArray, metrics: str | Sequence[str] | None = None, *,
                dtype: Any = np.float64) -> xr.Dataset:
        """The requested metrics of ``cells`` (binary ``cell`` dim or K×K tables)."""
        if self.multiclass:
            return multiclass.compute_multiclass(cells, metrics, dtype=dtype)
        return binary.compute(cells, metrics, dtype=dtype)


def compute(cells: xr.DataArray, metrics: str | Sequence[str] | None = None, *,
            dim: str = "cell", dtype: Any = np.float64) -> xr.Dataset:
    """Every requested metric of binary cells (dim ``dim``) or of K×K tables.

    Binary cells go to :func:`bayescm.metrics.binary.compute`; tables with dims
    ``actual`` and ``predicted`` (and no ``dim``) to
    :func:`bayescm.metrics.multiclass.compute_multiclass`.

    Examples
    --------
    >>> import xarray as xr
    >>> cells = xr.DataArray([26, 0, 2, 6], dims="cell", coords={"cell": ["tp", "fn", "fp", "tn"]})
    >>> round(float(compute(cells, ["tnr"])["tnr"]), 2)
    0.75
    """
    if dim not in cells.dims and {"actual", "predicted"} <= set(cells.dims):
        return multiclass.compute_multiclass(cells, metrics, dtype=dtype)
    return binary.compute(cells, metrics, dim=dim, dtype=dtype)


BINARY = Registry("binary")
MULTICLASS = Registry("multiclass")


def registry_for(obj: Any, *, group: str | None = None) -> Registry:
    """The registry for a table, its dims, a Dataset, an InferenceData or a data object.

    Parameters
    ----------
    obj
        Dim names; a DataArray of cells; a Dataset, InferenceData or DataTree
        (decided by its ``theta``, else its observed ``counts``); a ``ConfusionMatrix`` or
        ``MulticlassConfusionMatrix`` (anything with ``to_xarray()``).
    group
        For a fit, the group asked first (then posterior, prior, observed data).

    Examples
    --------
    >>> import bayescm as bcm
    >>> mc = bcm.MulticlassConfusionMatrix([[5, 1], [2, 7]], labels=["a", "b"])
    >>> bcm.metrics.registry_for(mc).kind, bcm.metrics.registry_for(("cell",)).kind
    ('multiclass', 'binary')
    """
    if isinstance(obj, xr.DataArray):
        return MULTICLASS if is_multiclass_dims(obj.dims) else BINARY
    if isinstance(obj, xr.Dataset):
        for name in ("theta", "counts"):
            if name in obj:
                return registry_for(obj[name])
        return MULTICLASS if is_multiclass_dims(obj.dims) else BINARY
    if isinstance(obj, xr.DataTree) or idata_mod.is_inference_data(obj):
        # a fit (InferenceData, or fit_closed_form's DataTree): read through the seam
        order = ("posterior", "prior", "observed_data")
        for name in dict.fromkeys((group, *order) if group else order):
            if idata_mod.has_group(obj, name):
                ds = idata_mod.group(obj, name)
                if "theta" in ds or "counts" in ds:
                    return registry_for(ds)
        return BINARY
    to_xarray = getattr(obj, "to_xarray", None)
    if callable(to_xarray):
        return registry_for(to_xarray())
    if isinstance(obj, str):
        raise TypeError("registry_for takes dims, arrays or data objects, not a string.")
    return MULTICLASS if is_multiclass_dims(obj) else BINARY
