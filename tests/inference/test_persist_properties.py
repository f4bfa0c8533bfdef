"""Property-based tests (hypothesis) of ``bcm.load`` on mutated files, in the style of
``tests/test_properties.py`` (its profiles and time bound): whatever is done to a saved
fit -- bytes flipped, the file cut short or extended, attributes rewritten -- ``load``
returns within the time bound and either raises bayescm's own error (``LoadError``,
``SizeError``: a ValueError naming the file) or returns the fit; and when it returns
without a warning, the fit is exactly the one saved."""

from __future__ import annotations

import atexit
import pathlib
import shutil
import tempfile
import warnings

import h5py
import numpy as np
import pytest
from hypothesis import strategies as st

import bayescm as bcm
from bayescm.inference.persist import FileMismatchWarning
from tests.test_properties import BOUND, assert_own_error, prop
from tests.timebound import time_bound

_DIR = pathlib.Path(tempfile.mkdtemp(prefix="bayescm-load-props-"))
atexit.register(shutil.rmtree, _DIR, True)  # made at import, so no fixture removes it


def _saved() -> tuple[pathlib.Path, object]:
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=40, chains=2,
                        random_seed=1, metrics=["tpr"], prior=False)
    return bcm.save(idata, _DIR / "good.nc"), idata


GOOD, FIT = _saved()
GOOD_BYTES = GOOD.read_bytes()
SAVED = dict(bcm.load(GOOD).attrs)  # the attrs as saved (versions and hash included)


def _load(path: pathlib.Path):
    """``bcm.load(path)``: the fit and whether it warned, or bayescm's own error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with time_bound(BOUND, "bcm.load"):
                back = bcm.load(path)
        except Exception as err:  # the point: which error, and where it came from
            assert_own_error(err)
            assert str(path) in str(err), f"the error does not name the file: {err}"
            return None, True
    mismatch = any(issubclass(w.category, FileMismatchWarning) for w in caught)
    return back, mismatch


def _same(back) -> bool:
    for group in FIT.groups():
        for name in FIT[group].variables:
            if not np.array_equal(back[group][name].values, FIT[group][name].values):
                return False
    return set(back.attrs) == set(SAVED) and all(
        str(back.attrs[k]) == str(v) for k, v in SAVED.items())


mutation = st.one_of(
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, len(GOOD_BYTES) - 1),
                                                   st.integers(1, 255)), min_size=1, max_size=8)),
    st.tuples(st.just("cut"), st.integers(0, len(GOOD_BYTES) - 1)),
    st.tuples(st.just("extend"), st.binary(min_size=1, max_size=200)),
)


@prop(change=mutation)
def test_load_of_a_file_with_mutated_bytes(change):
    kind, what = change
    data = bytearray(GOOD_BYTES)
    if kind == "flip":
        for where, xor in what:
            data[where] ^= xor
    elif kind == "cut":
        data = data[:what]
    else:
        data += what
    path = _DIR / "mutated.nc"
    path.write_bytes(bytes(data))
    back, warned = _load(path)
    if back is not None and not warned:
        assert _same(back), "a changed fit loaded without a warning"


ATTRS = ["sampler", "engine", "converged", "convergence", "model_spec", "priors",
         "content_parts", "content_hash", "bayescm_file_format", "random_seed", "draws_note"]
value = st.one_of(st.text(max_size=40), st.integers(-10**6, 10**6), st.just("exact"),
                  st.just("{"), st.just("[]"), st.just('{"family": 1}'), st.just(2),
                  st.just(1), st.floats(allow_nan=True))


@prop(edits=st.dictionaries(st.sampled_from(ATTRS), value, min_size=1, max_size=4))
def test_load_of_a_file_with_rewritten_attributes(edits):
    path = _DIR / "edited.nc"
    shutil.copy(GOOD, path)
    with h5py.File(path, "r+") as f:
        for key, v in edits.items():
            if isinstance(v, str) and "\x00" in v:
                v = v.replace("\x00", "")
            f.attrs[key] = v
    back, warned = _load(path)
    if back is not None:
        changed = any(str(SAVED.get(k)) != str(v) for k, v in edits.items())
        assert warned or not changed, f"edited attributes loaded without a warning: {edits}"


@pytest.fixture(autouse=True, scope="module")
def _cleanup():
    yield
    shutil.rmtree(_DIR, ignore_errors=True)
