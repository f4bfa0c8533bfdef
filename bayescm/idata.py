"""The one place that constructs, inspects and writes ``arviz.InferenceData``.

ArviZ is imported when a result is made or read, not on import.  Every other
module builds its result through :func:`make` and reads groups with
:func:`group` / :func:`has_group` / :func:`group_names` and top-level attributes
with :func:`attrs`, so the move to ArviZ 1.x (where PyMC 6 returns an
``xarray.DataTree``) is a change of this file alone.

The readers already take both: ``make(..., arviz=False)`` builds the same groups
and attrs as an ``xarray.DataTree`` without importing ArviZ, which is what the
model-free exact path (:func:`bayescm.inference.fit_closed_form`, the CLI) hands
to ``summary`` and ``check_convergence``.  ``tests/test_idata_seam.py`` keeps every
other module off the groups.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xarray as xr

if TYPE_CHECKING:
    import arviz as az

__all__ = [
    "attrs",
    "copy",
    "group",
    "group_names",
    "has_group",
    "is_inference_data",
    "make",
    "read",
    "require",
    "write",
]

def make(groups: Mapping[str, xr.Dataset], attrs: Mapping[str, Any] | None = None,
         *, arviz: bool = True) -> az.InferenceData:
    """An InferenceData of ``groups`` (name -> Dataset) with top-level ``attrs``.

    ``arviz=False``: the same groups and attrs as an ``xarray.DataTree`` (ArviZ
    1.x's InferenceData), made without importing ArviZ; every reader here takes it.
    """
    if not arviz:
        tree = xr.DataTree.from_dict(dict(groups))
        tree.attrs.update(attrs or {})
        return tree  # type: ignore[return-value]
    import arviz as az  # ArviZ is imported only when a result is made

    idata = az.InferenceData(**dict(groups))
    if attrs:
        idata.attrs.update(attrs)
    return idata


def is_inference_data(obj: object) -> bool:
    """True for the result type of :func:`bayescm.fit`."""
    # Without ArviZ imported nothing can be an InferenceData: no need to import it.
    az = sys.modules.get("arviz")
    return az is not None and isinstance(obj, az.InferenceData)


def require(obj: object, what: str = "data") -> az.InferenceData:
    """``obj`` if it is an InferenceData, else a TypeError saying what was expected."""
    if not is_inference_data(obj):
        raise TypeError(
            f"{what} must be an arviz.InferenceData from bayescm.fit, got {type(obj).__name__}."
        )
    return obj  # type: ignore[return-value]


def group_names(idata: az.InferenceData) -> list[str]:
    """The names of the groups present."""
    if isinstance(idata, xr.DataTree):
        return list(idata.children)
    return list(idata.groups())


def has_group(idata: az.InferenceData, name: str) -> bool:
    return name in group_names(idata)


def group(idata: az.InferenceData, name: str) -> xr.Dataset:
    """Group ``name`` as an ``xarray.Dataset``; a KeyError naming the groups there are."""
    names = group_names(idata)
    if name not in names:
        raise KeyError(f"InferenceData has no group {name!r} (groups: {names}).")
    if isinstance(idata, xr.DataTree):
        return idata[name].to_dataset(inherit=False)
    return idata[name]


def copy(idata: az.InferenceData) -> az.InferenceData:
    """A copy whose groups and attrs can be changed without touching ``idata``."""
    return idata.copy()


def attrs(idata: az.InferenceData) -> dict[str, Any]:
    """The top-level attributes (a live mapping: updates are kept)."""
    return idata.attrs


#: The netCDF C library (``netCDF4``) instead of h5netcdf (through h5py), ArviZ's default:
#: the same netCDF-4/HDF5 files, which either reads.
ENGINE = "netcdf4"
#: Integer and boolean variables (the predictive counts, the divergence flags) shrink
#: several-fold under zlib at level 1; float draws, whose mantissas are noise, shrink by
#: about a quarter for several times the writing time, so they are stored as they are.
#: Against ArviZ's defaults (h5netcdf, every number at level 4) on the 24-matrix NUTS fit:
#: write 2.89 s -> 0.47 s, read 1.69 s -> 0.53 s, 44 MB -> 60 MB
#: (``benchmarks/bench_persist.py --runs 3``).
_COMPRESSED = {"zlib": True, "complevel": 1}


def write(idata: az.InferenceData, path: str | Path) -> Path:
    """Write ``idata`` to NetCDF at ``path``: ArviZ's layout (the top-level attributes at
    the root, one netCDF group per InferenceData group), read by ``az.from_netcdf``."""
    path = Path(path)
    mode = "w"
    if idata.attrs:
        xr.Dataset(attrs=idata.attrs).to_netcdf(path, mode=mode, engine=ENGINE, group="/")
        mode = "a"
    for name in idata.groups():
        ds = idata[name]
        encoding = {var: dict(_COMPRESSED) for var, values in ds.variables.items()
                    if values.dtype.kind in "iub"}  # signed, unsigned, bool
        ds.to_netcdf(path, mode=mode, group=f"/{name}", engine=ENGINE, encoding=encoding)
        mode = "a"
    return path


def read(path: str | Path) -> az.InferenceData:
    """Read an InferenceData from NetCDF, fully into memory (the file is closed)."""
    import arviz as az

    idata = az.from_netcdf(str(path), engine=ENGINE)
    # Load every group so that the file is not held open (Windows, rewrites).
    for name in idata.groups():
        idata[name].load()
    return idata
