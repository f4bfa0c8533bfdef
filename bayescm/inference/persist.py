"""Save a fit, load it back, and rebuild the model it came from.

``fit`` records in ``idata.attrs["model_spec"]`` what rebuilds its model: the family,
the data, the priors actually used and the builder's options (JSON).  :func:`save`
writes the InferenceData to NetCDF with the library versions and a content hash
(SHA-256 over that record and every stored array); :func:`load` reads it and warns
when the file was written by another version of bayescm or no longer matches its
hash; :func:`rebuild` returns the unsampled ``pm.Model`` again, so a loaded fit can
be refitted or extended.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bayescm import idata as idata_mod
from bayescm import priors as prior_specs

if TYPE_CHECKING:
    import arviz as az
    import pymc as pm

    from bayescm.family import Family, ModelSpec

__all__ = ["FileMismatchWarning", "encode_spec", "load", "read_spec", "rebuild", "save"]

_FORMAT = 1


class FileMismatchWarning(UserWarning):
    """A saved fit was written by another bayescm version, or its content changed."""


def _encode_prior(prior: Any) -> dict[str, Any]:
    # nested lists for a matrix Dirichlet (rows of multiclass_rows)
    out = {"kind": type(prior).__name__, "params": np.asarray(prior.params, float).tolist()}
    for note in ("elicited", "rationale"):  # only when stated: older records stay identical
        if getattr(prior, note, None):
            out[note] = getattr(prior, note)
    return out


def _decode_prior(payload: Mapping[str, Any]) -> Any:
    kind, params = payload["kind"], payload["params"]
    cls = getattr(prior_specs, kind, None)
    if cls is None:
        raise ValueError(f"Unknown prior kind {kind!r} in a saved model.")
    notes = {note: payload.get(note) for note in ("elicited", "rationale")}
    if kind == "Dirichlet":
        return cls(tuple(params), **notes)
    return cls(*params, **notes)


def encode_spec(family: Family, spec: ModelSpec) -> str:
    """The JSON record from which :func:`rebuild` makes the model again."""
    priors = {name: {u: _encode_prior(p) for u, p in per.items()}
              for name, per in family.prior_record(spec).items()}
    return json.dumps({
        "format": _FORMAT, "family": spec.family, "data": family.encode_data(spec.data),
        "priors": priors, "options": dict(spec.options),
    }, sort_keys=True, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"Cannot record {type(value).__name__} in a saved model.")


def _content_hash(idata: az.InferenceData) -> str:
    h = hashlib.sha256()
    h.update(str(idata_mod.attrs(idata).get("model_spec", "")).encode())
    for name in sorted(idata_mod.group_names(idata)):
        ds = idata_mod.group(idata, name)
        for var in sorted(map(str, ds.variables)):
            arr = np.ascontiguousarray(ds[var].values)
            h.update(f"{name}/{var}/{arr.dtype.str}/{arr.shape}".encode())
            if arr.dtype.kind in "OUS":
                h.update(json.dumps(arr.astype(str).tolist()).encode())
            else:
                h.update(arr.tobytes())
    return h.hexdigest()


def save(idata: az.InferenceData, path: str | Path) -> Path:
    """Write a fit to NetCDF with its model record, library versions and content hash.

    Parameters
    ----------
    idata
        A result of :func:`bayescm.fit` (or any InferenceData).
    path
        File to write (conventionally ``*.nc``).

    Returns
    -------
    pathlib.Path
        The path written.  ``idata`` itself is not changed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    >>> idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)
    >>> path = bcm.save(idata, pathlib.Path(tempfile.mkdtemp()) / "fit.nc")
    >>> back = bcm.load(path)
    >>> bool((back.posterior["tpr"] == idata.posterior["tpr"]).all())
    True
    >>> model = bcm.rebuild(back)
    >>> sorted(v.name for v in model.free_RVs)
    ['prevalence', 'tnr', 'tpr']
    """
    import arviz as az
    import pymc as pm

    from bayescm._version import __version__

    out = idata_mod.copy(idata_mod.require(idata, "idata"))
    versions = {"bayescm_version": __version__, "pymc_version": pm.__version__,
                "arviz_version": az.__version__, "numpy_version": np.__version__,
                "bayescm_file_format": _FORMAT}
    idata_mod.attrs(out).update(versions)
    idata_mod.attrs(out)["content_hash"] = _content_hash(out)
    return idata_mod.write(out, path)


def load(path: str | Path) -> az.InferenceData:
    """Read a fit written by :func:`save` (fully into memory).

    Warns with :class:`FileMismatchWarning` when the file was written by another
    version of bayescm, carries no content hash, or its content no longer matches
    the hash (the file was changed after saving).
    """
    from bayescm._version import __version__

    idata = idata_mod.read(path)
    attrs = idata_mod.attrs(idata)
    written = attrs.get("bayescm_version")
    if written != __version__:
        warnings.warn(
            f"{path} was written by bayescm {written or '(unknown: not bayescm.save)'}; this "
            f"is {__version__}. Draws load as saved; refit if the models changed.",
            FileMismatchWarning, stacklevel=2)
    stored = attrs.get("content_hash")
    if stored is None:
        warnings.warn(f"{path} carries no content hash (not written by bayescm.save): its "
                      "integrity cannot be checked.", FileMismatchWarning, stacklevel=2)
    elif _content_hash(idata) != stored:
        warnings.warn(f"{path} does not match its content hash: the draws or the model record "
                      "were changed after saving. Do not trust it as the saved fit.",
                      FileMismatchWarning, stacklevel=2)
    return idata


def rebuild(idata: az.InferenceData) -> pm.Model:
    """The unsampled model a fit came from, built again from its record.

    Raises
    ------
    ValueError
        When ``idata`` has no model record (not from :func:`bayescm.fit` of a model
        built by a registered family).
    """
    recorded = read_spec(idata_mod.require(idata, "idata"))
    if recorded is None:
        raise ValueError("This InferenceData records no model (it was not made by bcm.fit of "
                         "a model from bayescm.models); nothing to rebuild.")
    family, spec, priors = recorded
    return family.rebuild(spec.data, priors, spec.options)


def read_spec(idata: az.InferenceData
              ) -> tuple[Family, ModelSpec, dict[str, dict[str, Any]]] | None:
    """A fit's model record without building the model (no PyMC): None when it has none.

    Returns the family, a :class:`~bayescm.models.ModelSpec` (family name, decoded
    data, the priors per unit in unit order, options; no ``var_names`` or ``extra``)
    and the priors as recorded, ``name -> {unit: prior}`` (with their ``elicited`` and
    ``rationale`` notes).
    """
    from bayescm.family import ModelSpec, get_family

    record = idata_mod.attrs(idata).get("model_spec")
    if not record:
        return None
    payload = json.loads(record)
    family = get_family(payload["family"])
    data = family.decode_data(payload["data"])
    priors = {name: {u: _decode_prior(p) for u, p in per.items()}
              for name, per in payload["priors"].items()}
    spec = ModelSpec(payload["family"], data, {k: list(v.values()) for k, v in priors.items()},
                     options=dict(payload["options"]))
    return family, spec, priors
