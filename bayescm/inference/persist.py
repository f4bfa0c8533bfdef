"""Save a fit, load it back, and rebuild the model it came from.

``fit`` records in ``idata.attrs["model_spec"]`` what rebuilds its model: the family,
the data, the priors actually used and the builder's options (JSON).  :func:`save`
writes the InferenceData to NetCDF with the library versions and a content hash;
:func:`load` reads it and warns when the file was written by another version of
bayescm or no longer matches its hash; :func:`rebuild` returns the unsampled
``pm.Model`` again, so a loaded fit can be refitted or extended.

Tamper evidence
---------------
The hash (file format 2) covers everything that changes how a fit is read: every
array of every group (values, dtype, dims, shape), every attribute -- the file's
(``sampler``, ``engine``, ``priors``, ``model_spec``, the convergence verdict, the
versions, ...), each group's and each variable's.  :func:`save` stores a SHA-256 per
part (``attrs["content_parts"]``: one per top-level attribute and one per group) and
the hash of those (``content_hash``), so :func:`load` names what changed: a fit
whose ``sampler`` was edited from ``"nuts"`` to ``"exact"`` warns that the attribute
``sampler`` was changed after saving, instead of passing for converged by
construction.  Files of format 1 (bayescm before this change: a hash over the model
record and the arrays only) still load; their arrays are checked, and a
:class:`FileMismatchWarning` says that their attributes cannot be.

Damaged and foreign files
-------------------------
Before reading any value, :func:`load` opens the file's HDF5 index and adds up the
sizes its arrays declare: a file over the memory bound
(:mod:`bayescm.inference.budget`; a 6 KB file can declare 10^9 draws) raises
:class:`~bayescm.inference.budget.SizeError` at once.  A missing file raises
``FileNotFoundError``; a truncated or damaged file, one that is not netCDF-4/HDF5
(random bytes, JSON, netCDF-3), a netCDF without InferenceData groups, or a model
record that is not valid JSON raise :class:`LoadError` naming the file and what is
wrong.
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

__all__ = ["FileMismatchWarning", "LoadError", "encode_spec", "load", "read_spec", "rebuild",
           "save"]

_FORMAT = 2
# the groups an InferenceData may hold (a netCDF with none of them is not a fit)
_GROUPS = ("posterior", "prior", "sample_stats", "posterior_predictive", "prior_predictive",
           "observed_data", "predictions", "log_likelihood", "constant_data",
           "predictions_constant_data", "sample_stats_prior", "warmup_posterior",
           "warmup_sample_stats")


class FileMismatchWarning(UserWarning):
    """A saved fit was written by another bayescm version, or its content changed."""


class LoadError(ValueError):
    """A file that is not a readable bayescm fit: damaged, truncated or foreign.  The
    message names the file and what is wrong."""


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


def _content_hash_v1(idata: az.InferenceData) -> str:
    """Format 1 (bayescm before file format 2): the model record and every array."""
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


def _plain(value: Any) -> Any:
    """An attribute as JSON: NumPy scalars and arrays as Python (a file gives them back
    as NumPy types), tuples as lists."""
    if isinstance(value, np.ndarray | np.generic):
        return _plain(value.tolist())
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _canon(value: Any) -> bytes:
    return json.dumps(_plain(value), sort_keys=True, default=repr).encode()


_KEPT_OUT = ("content_hash", "content_parts")  # the hash's own record


def _content_parts(idata: az.InferenceData) -> dict[str, str]:
    """SHA-256 of each part of a fit (format 2): ``attr:<name>`` per top-level attribute,
    ``group:<name>`` per group (its attrs and every variable's dims, dtype, shape,
    attrs and values)."""
    parts = {f"attr:{k}": hashlib.sha256(_canon(v)).hexdigest()
             for k, v in idata_mod.attrs(idata).items() if k not in _KEPT_OUT}
    for name in idata_mod.group_names(idata):
        ds = idata_mod.group(idata, name)
        h = hashlib.sha256(_canon(ds.attrs))
        for var in sorted(map(str, ds.variables)):
            v = ds.variables[var]
            arr = np.ascontiguousarray(v.values)
            text = arr.dtype.kind in "OUS"
            h.update(f"{var}/{list(v.dims)}/{'str' if text else arr.dtype.str}/"
                     f"{arr.shape}".encode() + _canon(v.attrs))
            h.update(_canon(arr.astype(str).tolist()) if text else arr.tobytes())
        parts[f"group:{name}"] = h.hexdigest()
    return parts


def _hash_of(parts: Mapping[str, str]) -> str:
    return hashlib.sha256(_canon(dict(parts))).hexdigest()


def save(idata: az.InferenceData, path: str | Path) -> Path:
    """Write a fit to NetCDF with its model record, library versions and content hash.

    The file is netCDF-4 (HDF5) in ArviZ's layout (``az.from_netcdf`` reads it), written
    through the netCDF C library: integer and boolean variables (the predictive counts)
    zlib-compressed, float draws as they are, which compress by a quarter at most for
    several times the writing time.

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
    >>> idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=2000,
    ...                 random_seed=1)
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
    attrs = idata_mod.attrs(out)
    for key in _KEPT_OUT:
        attrs.pop(key, None)
    attrs.update(versions)
    parts = _content_parts(out)
    attrs["content_parts"] = json.dumps(parts, sort_keys=True)
    attrs["content_hash"] = _hash_of(parts)
    return idata_mod.write(out, path)


def load(path: str | Path) -> az.InferenceData:
    """Read a fit written by :func:`save` (fully into memory).

    Warns with :class:`FileMismatchWarning` when the file was written by another
    version of bayescm, carries no content hash, or its content no longer matches
    the hash (the file was changed after saving: the warning names the attributes
    and groups that changed), or when it is of file format 1, whose hash does not
    cover the attributes.

    Raises
    ------
    FileNotFoundError
        When there is no such file.
    LoadError
        For a damaged, truncated or foreign file (the message says what is wrong).
    bayescm.inference.budget.SizeError
        When the arrays the file declares exceed the memory bound (nothing is read).
    """
    path = Path(path)
    _check_file(path)  # before ArviZ is imported: a refused file costs milliseconds
    import arviz as az

    from bayescm._version import __version__

    try:
        # eager: ArviZ closes each group's file as it reads it (lazily it stays open,
        # read-only, until garbage collection: another writer of the file then fails)
        with az.rc_context({"data.load": "eager"}):
            idata = idata_mod.read(path)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, AttributeError,
            IndexError) as err:
        raise LoadError(f"{path} cannot be read as a fit ({type(err).__name__}: "
                        f"{_short(err)}); it is damaged or was not written by "
                        "bcm.save.") from None
    attrs = idata_mod.attrs(idata)
    _check_records(path, attrs)
    written = attrs.get("bayescm_version")
    if written != __version__:
        warnings.warn(
            f"{path} was written by bayescm {written or '(unknown: not bayescm.save)'}; this "
            f"is {__version__}. Draws load as saved; refit if the models changed.",
            FileMismatchWarning, stacklevel=2)
    problem = _integrity(idata, attrs)
    if problem:
        warnings.warn(f"{path} {problem}", FileMismatchWarning, stacklevel=2)
    return idata


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return text[:200]


def _check_file(path: Path) -> None:
    """The file is netCDF-4 (HDF5), holds InferenceData groups and declares arrays
    within the memory bound: checked from its index, before any value is read."""
    import h5py

    from bayescm.inference import budget

    if not path.is_file():
        raise FileNotFoundError(f"No saved fit at {path}: the file does not exist.")
    with open(path, "rb") as f:
        head = f.read(8)
    if not h5py.is_hdf5(str(path)):
        kind = ("a netCDF-3 file; bcm.save writes netCDF-4 (HDF5)" if head.startswith(b"CDF")
                else "empty" if not head else f"not a netCDF-4/HDF5 file (it starts with "
                f"{head!r}{', like JSON text' if head.lstrip()[:1] in (b'{', b'[') else ''})")
        raise LoadError(f"{path} is not a saved fit: it is {kind}.")
    sizes: list[tuple[str, tuple[int, ...], int]] = []
    try:
        with h5py.File(path, "r") as f:
            groups = [name for name in f if isinstance(f[name], h5py.Group)]

            def visit(name: str, obj: Any) -> None:
                if isinstance(obj, h5py.Dataset):
                    sizes.append((name, tuple(obj.shape or ()), int(obj.dtype.itemsize)))

            f.visititems(visit)
    except (OSError, ValueError, KeyError, RuntimeError) as err:
        raise LoadError(f"{path} is damaged or truncated: its HDF5 index cannot be read "
                        f"({_short(err)}).") from None
    if not any(g in _GROUPS for g in groups):
        raise LoadError(f"{path} is a netCDF file but not a fit: it holds no InferenceData "
                        f"group (posterior, sample_stats, ...; found {sorted(groups)[:8]}).")
    total = sum(float(np.prod(shape)) * item for _, shape, item in sizes)
    largest = max(sizes, key=lambda x: float(np.prod(x[1])) * x[2], default=("", (), 0))
    budget.check_memory(  # with room for the copies the hash check makes
        total * budget.HEADROOM,
        f"Loading {path} (its arrays declare {budget.format_bytes(total)}; the largest, "
        f"{largest[0]}, has shape {largest[1]})",
        "A file this large cannot be loaded whole: open it lazily with "
        "xarray.open_datatree(path) and read a part (e.g. a few chains or draws), or "
        "check where it came from: a small file that declares such sizes is damaged or "
        "forged.")


def _check_records(path: Path, attrs: Mapping[str, Any]) -> None:
    """The JSON records a fit carries (model record, priors, hash parts) parse."""
    for key in ("model_spec", "priors", "content_parts"):
        if key not in attrs:
            continue
        try:
            value = json.loads(str(_plain(attrs[key])))
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise LoadError(f"{path} is damaged: its attribute {key!r} should be a JSON "
                            f"record and is {str(_plain(attrs[key]))[:80]!r}.")


def _integrity(idata: az.InferenceData, attrs: Mapping[str, Any]) -> str | None:
    """What is wrong with the content hash, in words (None: it matches)."""
    stored = attrs.get("content_hash")
    fmt = _plain(attrs.get("bayescm_file_format", 1))
    if stored is None:
        return ("carries no content hash (not written by bayescm.save): its integrity cannot "
                "be checked.")
    if fmt == 1:
        if _content_hash_v1(idata) != stored:
            return ("does not match its content hash: the draws or the model record were "
                    "changed after saving. Do not trust it as the saved fit.")
        return ("was written in file format 1, whose content hash covers the draws and the "
                "model record but not the other attributes (sampler, engine, convergence "
                "verdict, ...): those cannot be verified. Save it again with bcm.save to "
                "protect them from here on.")
    if fmt != _FORMAT:
        return (f"declares file format {fmt!r}, which this bayescm ({_FORMAT}) cannot verify; "
                "its content hash is not checked.")
    parts = _content_parts(idata)
    if _hash_of(parts) == stored:
        return None
    try:
        saved = dict(json.loads(str(_plain(attrs.get("content_parts", "{}")))))
    except (ValueError, TypeError):
        saved = {}
    changed = sorted(k for k in set(parts) | set(saved) if parts.get(k) != saved.get(k))
    words = [f"attribute {k[5:]!r}" if k.startswith("attr:") else f"group {k[6:]!r}"
             for k in changed] or ["its content hash itself"]
    return ("does not match its content hash: " + ", ".join(words[:8])
            + (f" and {len(words) - 8} more" if len(words) > 8 else "")
            + " changed after saving. Do not trust it as the saved fit (its sampler, draws "
            "and convergence verdict may not be what was fitted).")


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
    try:
        payload = json.loads(str(_plain(record)))
        family = get_family(payload["family"])
        data = family.decode_data(payload["data"])
        priors = {name: {u: _decode_prior(p) for u, p in per.items()}
                  for name, per in payload["priors"].items()}
        spec = ModelSpec(payload["family"], data,
                         {k: list(v.values()) for k, v in priors.items()},
                         options=dict(payload["options"]))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
        raise ValueError(f"The fit's model record (attrs['model_spec']) cannot be read "
                         f"({type(err).__name__}: {_short(err)}): it was changed or damaged "
                         "after the fit; nothing to rebuild.") from None
    return family, spec, priors
