"""MulticlassConfusionMatrix (issue 12 item 1): construction, validation, conversions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bayescm as bcm
from bayescm.data.multiclass import one_vs_rest_cells

MC = bcm.MulticlassConfusionMatrix
TABLE = [[50, 3, 2], [4, 40, 6], [1, 2, 30]]
LABELS = ["cat", "dog", "bird"]


def test_one_matrix_with_labels():
    mc = MC(TABLE, labels=LABELS)
    assert mc.counts.shape == (1, 3, 3) and mc.counts.dtype == np.int64
    assert mc.labels == ("cat", "dog", "bird") and mc.classifiers == ("cm",)
    assert mc.n_classes == 3 and mc.n.tolist() == [138] and len(mc) == 1
    da = mc.to_xarray()
    assert da.dims == ("classifier", "actual", "predicted")
    assert da.sel(actual="dog", predicted="bird").item() == 6
    assert mc.coords == {"classifier": ["cm"], "actual": LABELS, "predicted": LABELS}
    frame = mc.to_frame()
    assert frame.index.name == "actual" and frame.columns.name == "predicted"
    assert frame.loc["bird", "cat"] == 1
    assert "K=3" in repr(mc) and "bird" in repr(mc)
    assert MC(TABLE).labels == (0, 1, 2)  # scikit-learn's confusion_matrix order


def test_a_batch_and_its_views():
    counts = np.arange(1, 19).reshape(2, 3, 3)
    mc = MC(counts, labels=[1, 2, 3], classifier=["a", "b"])
    assert len(mc) == 2 and [m.classifiers for m in mc] == [("a",), ("b",)]
    assert mc["b"] == mc[1] and mc["b"].counts[0, 2, 0] == 16
    assert mc.to_frame().index.names == ["classifier", "actual"]
    assert mc.pooled().counts[0].tolist() == (counts[0] + counts[1]).tolist()
    assert hash(mc) == hash(MC(counts, labels=[1, 2, 3], classifier=["a", "b"]))
    assert mc != MC(counts, labels=[1, 2, 4], classifier=["a", "b"])
    assert "2 classifiers" in repr(mc)
    with pytest.raises(KeyError, match="No classifier"):
        mc["c"]


def test_immutable():
    mc = MC(TABLE, labels=LABELS)
    with pytest.raises(AttributeError, match="immutable"):
        mc._counts = None
    with pytest.raises(ValueError):
        mc.counts[0, 0, 0] = 1


def test_round_trips_frame_xarray_dict_json():
    mc = MC(np.arange(1, 19).reshape(2, 3, 3), labels=["x", "y", "z"], classifier=["a", "b"])
    assert MC.from_frame(mc.to_frame()) == mc
    assert MC(mc.to_frame()) == mc
    assert MC.from_xarray(mc.to_xarray()) == mc and MC(mc.to_xarray()) == mc
    assert MC.from_dict(json.loads(json.dumps(mc.to_dict()))) == mc
    one = mc["a"]
    assert MC.from_frame(one.to_frame()).counts.tolist() == one.counts.tolist()
    tuples = MC([[1, 2], [3, 4]], labels=[("a", 1), ("b", 2)])
    assert MC.from_dict(json.loads(json.dumps(tuples.to_dict()))).labels == tuples.labels


def test_frames_are_matched_by_label_not_position():
    frame = pd.DataFrame([[5, 1], [2, 7]], index=["a", "b"], columns=["a", "b"])
    swapped = frame[["b", "a"]]
    assert MC.from_frame(swapped) == MC.from_frame(frame)
    da = xr.DataArray([[5, 1], [2, 7]], dims=("actual", "predicted"),
                      coords={"actual": ["a", "b"], "predicted": ["a", "b"]})
    assert MC(da.isel(predicted=[1, 0])).counts.tolist() == [[[5, 1], [2, 7]]]
    with pytest.raises(bcm.CountsError, match="coords"):
        MC(da, labels=["b", "a"])
    with pytest.raises(bcm.CountsError, match="differ"):
        MC(da.assign_coords(predicted=["a", "c"]))


def test_crosstab_without_a_predicted_class_needs_labels():
    y_true = pd.Series(["a", "a", "b", "c"], name="actual")
    y_pred = pd.Series(["a", "b", "b", "b"], name="predicted")
    tab = pd.crosstab(y_true, y_pred)
    with pytest.raises(bcm.CountsError, match="only in rows \\['c'\\]"):
        MC.from_frame(tab)
    mc = MC.from_frame(tab, labels=["a", "b", "c"])
    assert mc == MC.from_predictions(y_true, y_pred, labels=["a", "b", "c"])
    with pytest.raises(bcm.CountsError, match="not in labels"):
        MC.from_frame(tab, labels=["a", "b"])


def test_from_predictions_matches_scikit_learn():
    from sklearn.metrics import confusion_matrix

    rng = np.random.default_rng(0)
    y_true, y_pred = rng.integers(0, 5, 300), rng.integers(0, 5, 300)
    labels = [4, 2, 0, 1, 3, 7]
    mc = MC.from_predictions(y_true, y_pred, labels=labels)
    assert mc.counts[0].tolist() == confusion_matrix(y_true, y_pred, labels=labels).tolist()
    assert mc.counts[0, -1].sum() == mc.counts[0, :, -1].sum() == 0  # unseen class 7 kept
    assert MC.from_predictions(y_true, y_pred).labels == (0, 1, 2, 3, 4)


def test_from_predictions_of_several_classifiers_on_one_test_set():
    y = ["cat", "dog", "dog", "bird", "cat"]
    mc = MC.from_predictions(y, {"a": ["cat", "dog", "cat", "bird", "cat"], "b": y})
    assert mc.classifiers == ("a", "b") and mc.labels == ("bird", "cat", "dog")
    assert mc["b"].counts[0].trace() == 5 and mc["a"].counts[0].trace() == 4
    assert MC.from_predictions([1, "a", 1], [1, 1, "a"]).labels == (1, "a")  # types kept
    assert MC.from_predictions(pd.Series(y), pd.Series(y), classifier="me").classifiers == ("me",)


@pytest.mark.parametrize(("y_true", "y_pred", "kw", "match"), [
    ([0, 1], [0, 1, 1], {}, "paired case by case"),
    ([], [], {}, "empty"),
    ([0, None], [0, 1], {}, "missing"),
    ([0, 1, 2], [0, 1, 3], {"labels": [0, 1, 2]}, "not in labels"),
    ([0, 0], [0, 0], {}, "at least two classes"),
    ([0, 1], [0, 1], {"labels": [0, 1, 1]}, "unique"),
    ([[0, 1]], [[0, 1]], {}, "1-d"),
])
def test_bad_predictions(y_true, y_pred, kw, match):
    with pytest.raises(bcm.CountsError, match=match):
        MC.from_predictions(y_true, y_pred, **kw)


@pytest.mark.parametrize(("counts", "kw", "match"), [
    ([[1, -1], [0, 1]], {}, "negative|>= 0"),
    ([[1.5, 0], [0, 1]], {}, "not a whole number"),
    ([[np.nan, 0], [0, 1]], {}, "finite"),
    ([[np.inf, 0], [0, 1]], {}, "finite"),
    ([[True, False], [False, True]], {}, "boolean"),
    ([[1, 0], [0, np.True_]], {}, "boolean"),
    ([], {}, "empty"),
    ([[1, 2, 3], [4, 5, 6]], {}, "not square"),
    ([[0, 0], [0, 0]], {}, "zero"),
    ([[1]], {}, "at least two classes"),
    ([[1, 2], [3]], {}, "K×K array"),
    ([1, 2, 3, 4], {}, "shape"),
    ([[1, 2], [3, 4]], {"labels": ["a", "a"]}, "unique"),
    ([[1, 2], [3, 4]], {"labels": ["a", "b", "c"]}, "3 labels given for 2"),
    ([[1, 2], [3, 4]], {"labels": ["a", None]}, "missing"),
    ([[1, 2], [3, 4]], {"labels": [["a"], ["b"]]}, "hashable"),
    ([[1, 2], [3, 4]], {"labels": "ab"}, "sequence"),
    ([[[1, 2], [3, 4]]] * 2, {"classifier": ["x", "x"]}, "unique"),
    ([[[1, 2], [3, 4]]] * 2, {"classifier": ["x"]}, "1 classifier names"),
    ([[2**60, 0], [0, 1]], {}, "2\\*\\*53"),
])
def test_bad_counts_get_a_clear_error(counts, kw, match):
    with pytest.raises(bcm.CountsError, match=match):
        MC(counts, **kw)


def test_error_names_the_cell_and_classifier():
    counts = np.ones((2, 3, 3), dtype=int)
    counts[1, 2, 0] = -4
    with pytest.raises(bcm.CountsError, match=r"actual='z', predicted='x'\) of classifier 'b'"):
        MC(counts, labels=list("xyz"), classifier=["a", "b"])


def test_one_vs_rest_is_the_binary_matrix_of_each_class():
    y = np.array(LABELS)[np.random.default_rng(2).integers(0, 3, 200)]
    p = np.array(LABELS)[np.random.default_rng(3).integers(0, 3, 200)]
    mc = MC.from_predictions(y, p, labels=LABELS)
    ovr = mc.one_vs_rest()
    assert ovr.classifiers == ("cat", "dog", "bird")
    for label in LABELS:
        ref = bcm.ConfusionMatrix.from_predictions(y == label, p == label, positive=True)
        assert ovr[label].to_dict() == ref.to_dict()
    batch = MC.from_predictions(y, {"a": p, "b": y}, labels=LABELS).one_vs_rest()
    assert batch.classifiers[:4] == ("a:cat", "a:dog", "a:bird", "b:cat")
    assert batch["b:dog"].fn[0] == batch["b:dog"].fp[0] == 0


def test_binary_round_trip_given_the_positive_label():
    cm = bcm.ConfusionMatrix(tp=[26, 5], fn=[0, 1], fp=[2, 3], tn=[6, 9], classifier=["x", "y"])
    mc = MC.from_binary(cm, labels=("ill", "well"))
    assert mc.counts[0].tolist() == [[26, 0], [2, 6]] and mc.classifiers == ("x", "y")
    assert mc.to_binary(positive="ill") == cm
    flipped = mc.to_binary(positive="well")
    assert flipped.to_dict() == {"tp": [6, 9], "fn": [2, 3], "fp": [0, 1], "tn": [26, 5]}
    assert MC.from_binary(cm).to_binary() == cm  # labels (1, 0): 1 is positive by default
    with pytest.raises(bcm.CountsError, match="pass positive"):
        mc.to_binary()
    with pytest.raises(bcm.CountsError, match="not one of the labels"):
        mc.to_binary(positive="sick")
    with pytest.raises(bcm.CountsError, match="Only a K = 2"):
        MC(TABLE).to_binary(positive=0)
    with pytest.raises(bcm.CountsError, match="needs a ConfusionMatrix"):
        MC.from_binary(TABLE)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 3), st.integers(2, 6), st.integers(2, 6)),
                  elements=st.integers(0, 10**6)))
def test_valid_counts_keep_their_invariants(counts):
    _, k, k2 = counts.shape
    if k != k2:
        with pytest.raises(bcm.CountsError, match="not square"):
            MC(counts)
        return
    if (counts.sum(axis=(1, 2)) == 0).any():
        with pytest.raises(bcm.CountsError, match="zero"):
            MC(counts)
        return
    mc = MC(counts)
    assert np.array_equal(mc.counts, counts) and mc.n.tolist() == counts.sum(axis=(1, 2)).tolist()
    assert MC.from_dict(mc.to_dict()) == mc == MC.from_frame(mc.to_frame())
    ovr = one_vs_rest_cells(counts)
    assert np.array_equal(sum(ovr.values()), np.repeat(mc.n[:, None], k, axis=1))
    assert np.array_equal(ovr["tp"].sum(axis=-1), np.trace(counts, axis1=1, axis2=2))
    assert np.array_equal(ovr["fn"].sum(axis=-1), ovr["fp"].sum(axis=-1))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3), st.floats(allow_nan=True), st.booleans(),
                          st.text(max_size=2)), min_size=4, max_size=4))
def test_invalid_cells_get_bayescm_errors(values):
    arr = np.empty(4, dtype=object)
    arr[:] = values
    try:
        mc = MC(arr.reshape(2, 2))
    except bcm.CountsError:
        return
    assert (mc.counts >= 0).all() and mc.counts.sum() > 0
