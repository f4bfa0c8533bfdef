"""Tamper-evident files (issue 25): the content hash covers everything that changes how
a fit is read, damaged or foreign files get bayescm's own error naming the file, and a
file declaring more than memory holds is refused before anything is read."""

from __future__ import annotations

import json
import pathlib
import shutil
import warnings

import h5netcdf
import h5py
import numpy as np
import pytest
import xarray as xr

import bayescm as bcm
from bayescm.inference import persist
from bayescm.inference.budget import SizeError
from bayescm.inference.persist import FileMismatchWarning, LoadError
from tests.bounded import refused_fast

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def nuts_file(tmp_path_factory) -> pathlib.Path:
    """A short NUTS fit that has not converged, saved."""
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcm.ConvergenceWarning)
        idata = bcm.fit(bcm.models.three_beta(cm), draws=30, tune=30, chains=2,
                        random_seed=1, metrics=["tpr", "tnr"])
    assert idata.attrs["converged"] == 0 and idata.attrs["sampler"] == "nuts"
    return bcm.save(idata, tmp_path_factory.mktemp("fits") / "nuts.nc")


def _copy(path: pathlib.Path, tmp_path: pathlib.Path, name: str) -> pathlib.Path:
    return pathlib.Path(shutil.copy(path, tmp_path / name))


def _load_quietly(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails
        return bcm.load(path)


def test_an_untouched_file_loads_without_a_warning_and_save_leaves_the_fit_alone(
        nuts_file, tmp_path):
    back = _load_quietly(nuts_file)
    assert back.attrs["bayescm_file_format"] == 2
    assert set(json.loads(back.attrs["content_parts"])) >= {"attr:sampler", "group:posterior"}
    again = bcm.save(back, tmp_path / "again.nc")  # a loaded fit saves and verifies again
    _load_quietly(again)
    assert "content_hash" in back.attrs  # ...and save did not change `back`


def test_counts_are_compressed_draws_are_not_and_arviz_reads_the_file(nuts_file):
    """The layout is ArviZ's (root attributes, a netCDF group per InferenceData group);
    integer and boolean variables are zlib-compressed at level 1, float draws stored as
    they are (``bayescm.idata.write``)."""
    import arviz as az
    import netCDF4

    with netCDF4.Dataset(nuts_file) as f:
        assert set(f.groups) == {"posterior", "posterior_predictive", "sample_stats",
                                 "prior", "prior_predictive", "observed_data"}
        assert "content_hash" in f.ncattrs()
        counts = f["posterior_predictive"]["counts"]
        assert counts.dtype.kind == "i" and counts.filters()["zlib"]
        assert counts.filters()["complevel"] == 1
        assert f["sample_stats"]["diverging"].filters()["zlib"]
        tpr = f["posterior"]["tpr"]
        assert tpr.dtype.kind == "f" and not tpr.filters()["zlib"]
    plain = az.from_netcdf(nuts_file)  # h5netcdf, ArviZ's default reader
    back = _load_quietly(nuts_file)
    for group in back.groups():
        xr.testing.assert_identical(plain[group], back[group])


def test_editing_the_sampler_of_a_nuts_fit_to_exact_warns(nuts_file, tmp_path):
    edited = _copy(nuts_file, tmp_path, "edited.nc")
    with h5py.File(edited, "r+") as f:
        f.attrs["sampler"] = "exact"
    with pytest.warns(FileMismatchWarning, match="attribute 'sampler' changed") as record:
        back = bcm.load(edited)
    assert str(edited) in str(record[0].message)
    assert back.attrs["sampler"] == "exact"  # loaded as it is, but the reader was told


@pytest.mark.parametrize(("where", "change", "named"), [
    ("attrs", {"converged": 1}, "attribute 'converged'"),
    ("attrs", {"convergence": "Converged."}, "attribute 'convergence'"),
    ("attrs", {"engine": "pymc"}, "attribute 'engine'"),
    ("attrs", {"priors": json.dumps({"tpr": {"cm": "Beta(100, 1)"}})}, "attribute 'priors'"),
    ("posterior", {"note": "edited"}, "group 'posterior'"),           # a group's attrs
    ("sample_stats", None, "group 'sample_stats'"),                   # diagnostics
    ("posterior", None, "group 'posterior'"),                         # draws
])
def test_every_part_that_changes_how_a_fit_reads_is_covered(nuts_file, tmp_path, where,
                                                             change, named):
    edited = _copy(nuts_file, tmp_path, "edited.nc")
    with h5py.File(edited, "r+") as f:
        if where == "attrs":
            f.attrs.update(change)
        elif change is not None:
            f[where].attrs.update(change)
        else:
            name = "diverging" if where == "sample_stats" else "tpr"
            data = f[where][name]
            data[0, 0] = 1 - data[0, 0]
    with pytest.warns(FileMismatchWarning, match=named):
        bcm.load(edited)


def test_a_file_of_format_one_still_loads_with_a_note(tmp_path):
    """``format1_nuts.nc`` was written by bcm.save before file format 2 (a hash over the
    model record and the arrays only): it loads, its arrays are checked, and the note
    says that its attributes cannot be."""
    with pytest.warns(FileMismatchWarning, match="file format 1") as record:
        back = bcm.load(DATA / "format1_nuts.nc")
    assert "cannot be verified" in str(record[0].message)
    assert back.attrs["sampler"] == "nuts" and bcm.rebuild(back) is not None
    edited = _copy(DATA / "format1_nuts.nc", tmp_path, "edited.nc")
    with h5py.File(edited, "r+") as f:
        f["posterior"]["tpr"][0, 0] = 0.5
    with pytest.warns(FileMismatchWarning, match="draws or the model record were changed"):
        bcm.load(edited)


def _damaged(kind: str, good: pathlib.Path, path: pathlib.Path) -> pathlib.Path:
    data = good.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "random bytes":
        path.write_bytes(np.random.default_rng(0).bytes(5000))
    elif kind == "JSON":
        path.write_text(json.dumps({"posterior": {"tpr": [0.9, 0.95]}}))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "netCDF-3":
        xr.Dataset({"x": ("a", np.arange(3))}).to_netcdf(path, engine="scipy")
    elif kind == "not a fit":
        xr.Dataset({"x": ("a", np.arange(3))}).to_netcdf(path, engine="h5netcdf")
    elif kind == "model record":
        shutil.copy(good, path)
        with h5py.File(path, "r+") as f:
            f.attrs["model_spec"] = '{"family": "three_beta", "data": [1, 2'
    elif kind == "hash parts":
        shutil.copy(good, path)
        with h5py.File(path, "r+") as f:
            f.attrs["content_parts"] = "[garbage"
    return path


@pytest.mark.parametrize(("kind", "says"), [
    ("truncated", "damaged or truncated"),
    ("random bytes", "not a netCDF-4/HDF5 file"),
    ("JSON", "like JSON text"),
    ("empty", "it is empty"),
    ("netCDF-3", "netCDF-3"),
    ("not a fit", "holds no InferenceData group"),
    ("model record", "attribute 'model_spec' should be a JSON record"),
    ("hash parts", "attribute 'content_parts'"),
])
def test_damaged_or_foreign_files_get_bayescms_error_naming_the_file(nuts_file, tmp_path,
                                                                      kind, says):
    path = _damaged(kind, nuts_file, tmp_path / "bad.nc")
    with pytest.raises(LoadError, match=says) as err:
        bcm.load(path)
    assert str(path) in str(err.value)
    assert isinstance(err.value, ValueError)


def test_a_missing_file_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="No saved fit"):
        bcm.load(tmp_path / "nothing.nc")


def test_a_damaged_model_record_in_memory_is_bayescms_error(nuts_file):
    back = _load_quietly(nuts_file)
    back.attrs["model_spec"] = json.dumps({"family": "three_beta", "data": "x"})
    with pytest.raises(ValueError, match=r"model record .* cannot be read"):
        bcm.rebuild(back)


def test_a_small_file_declaring_a_billion_draws_is_refused_before_reading(tmp_path):
    path = tmp_path / "declares.nc"
    with h5netcdf.File(path, "w") as f:  # chunks never written: the file stays small
        group = f.create_group("posterior")
        group.dimensions.update({"chain": 1, "draw": 10**9})
        group.create_variable("tpr", ("chain", "draw"), "f8", chunks=(1, 2**20))
    assert path.stat().st_size < 10_000
    err = refused_fast(lambda: bcm.load(path), SizeError)
    assert str(path) in str(err) and "(1, 1000000000)" in str(err)
    assert "xarray.open_datatree" in str(err)


def test_the_hash_parts_name_a_new_or_a_dropped_group(nuts_file, tmp_path):
    parts = persist._content_parts(_load_quietly(nuts_file))
    assert persist._hash_of(parts) == _load_quietly(nuts_file).attrs["content_hash"]
    edited = _copy(nuts_file, tmp_path, "edited.nc")
    with h5py.File(edited, "r+") as f:
        del f["sample_stats"]
    with pytest.warns(FileMismatchWarning, match="group 'sample_stats'"):
        bcm.load(edited)
