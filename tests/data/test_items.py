"""ItemResults: construction from long tables (pandas, Dask), checks, records."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.data import CountsError, ItemResults


def _frame(runs: int = 1) -> pd.DataFrame:
    rows = [(m, f"q{i}", r, int((i + r + (m == "b")) % 3 != 0), f"c{i // 2}")
            for m in ("a", "b") for i in range(6) for r in range(runs)]
    return pd.DataFrame(rows, columns=["model", "item", "run", "correct", "topic"])


def test_counts_runs_and_clusters():
    df = _frame(runs=3)
    res = ItemResults.from_frame(df, run="run", cluster="topic")
    assert res.models == ("a", "b") and res.n_items == 6 and res.n_clusters == 3
    expected = df.groupby(["model", "item"], sort=False)["correct"].sum().unstack()
    np.testing.assert_array_equal(res.successes_array, expected.loc[["a", "b"], list(res.items)])
    assert (res.trials_array == 3).all() and not res.one_run
    assert res.successes.dims == ("model", "item")
    assert res.cluster.values.tolist() == ["c0", "c0", "c1", "c1", "c2", "c2"]
    assert res.cluster_sizes.tolist() == [2, 2, 2]
    np.testing.assert_allclose(res.scores().values, res.successes_array / 3)


def test_trials_column_and_booleans():
    df = pd.DataFrame({"item": [1, 2, 1, 2], "model": ["x", "x", "y", "y"],
                       "k": [2, 0, 1, 3], "n": [3, 3, 3, 3]})
    res = ItemResults.from_frame(df, correct="k", trials="n")
    assert res.successes_array.tolist() == [[2, 0], [1, 3]]
    flags = pd.DataFrame({"item": [1, 2], "model": "x", "correct": [True, False]})
    assert ItemResults.from_frame(flags).successes_array.tolist() == [[1, 0]]


def test_dask_frame_is_computed_once():
    dd = pytest.importorskip("dask.dataframe")
    df = _frame()
    res = ItemResults.from_frame(dd.from_pandas(df, npartitions=3), cluster="topic")
    assert res == ItemResults.from_frame(df, cluster="topic")


@pytest.mark.parametrize("change, match", [
    (lambda d: d.iloc[1:], "lacks 1 item"),
    (lambda d: pd.concat([d, d.iloc[:1]]), "Duplicate rows.*run="),
    (lambda d: d.assign(correct=d["correct"].replace(1, 2)), "0 or 1"),
    (lambda d: d.assign(correct=d["correct"].astype(float).where(d.index != 3)), "must hold"),
    (lambda d: d.assign(topic=np.where(d["model"] == "a", d["topic"], "other")),
     "constant within an item"),
    (lambda d: d.assign(item=d["item"].where(d.index != 2)), "missing values"),
])
def test_bad_frames_get_clear_errors(change, match):
    with pytest.raises(CountsError, match=match):
        ItemResults.from_frame(change(_frame()), cluster="topic")


def test_other_errors():
    with pytest.raises(CountsError, match="not in the data"):
        ItemResults.from_frame(_frame(), correct="score")
    with pytest.raises(CountsError, match="not both"):
        ItemResults.from_frame(_frame(), run="run", trials="run")
    with pytest.raises(CountsError, match="empty"):
        ItemResults.from_frame(_frame().iloc[:0])
    bad = pd.DataFrame({"item": [1], "model": "x", "k": [4], "n": [3]})
    with pytest.raises(CountsError, match="0 <= k <= n"):
        ItemResults.from_frame(bad, correct="k", trials="n")
    with pytest.raises(CountsError, match="at least one run"):
        ItemResults([[0, 1]], [[0, 1]])
    with pytest.raises(CountsError, match="unique"):
        ItemResults([[0], [1]], [[1], [1]], models=["a", "a"])


def test_records_round_trip_and_immutability():
    res = ItemResults.from_frame(_frame(2), run="run", cluster="topic")
    assert ItemResults.from_dict(res.to_dict()) == res
    assert pickle.loads(pickle.dumps(res)) == res
    with pytest.raises(AttributeError):
        res.foo = 1
    with pytest.raises(ValueError):
        res.successes_array[0, 0] = 5
    assert "2 model(s) x 6 item(s) in 3 clusters" in repr(res)
    assert bcm.ItemResults is ItemResults
    frame = res.to_frame()
    assert list(frame.columns) == ["model", "item", "cluster", "correct", "trials"]


def test_names_that_print_alike_are_refused_and_other_ids_become_text():
    """Models 1 and "1" would be one model (their rows taken for runs of it): refused,
    as items 1 and "1" are.  Timestamps and tuples as item ids fit, as text."""
    df = pd.DataFrame({"item": [1, 2, 1, 2], "model": [1, 1, "1", "1"], "correct": [1, 0, 1, 1]})
    with pytest.raises(CountsError, match="'model' has 1 and '1'"):
        ItemResults.from_frame(df)
    df = pd.DataFrame({"item": [1, "1", 1, "1"], "model": ["a", "a", "b", "b"],
                       "correct": [1, 0, 1, 1]})
    with pytest.raises(CountsError, match=r"'item' has 1 and '1'.*astype\(str\)"):
        ItemResults.from_frame(df)
    for ids, text in (([(1, 2), (3, 4)], ["(1, 2)", "(3, 4)"]),
                      (list(pd.to_datetime(["2020-01-01", "2020-01-02"])),
                       ["2020-01-01 00:00:00", "2020-01-02 00:00:00"])):
        res = ItemResults.from_frame(pd.DataFrame({"item": ids * 2, "model": ["a"] * 2 + ["b"] * 2,
                                                   "correct": [1, 0, 0, 1]}))
        assert list(res.items) == text
        model = bcm.models.items(res)
        assert list(model.coords["item"]) == text


def test_a_column_named_twice_is_a_clear_error():
    df = pd.DataFrame([[0, "a", 1, 0], [1, "a", 0, 1]], columns=["item", "model", "correct",
                                                                   "correct"])
    with pytest.raises(CountsError, match=r"\['correct'\] appear more than once"):
        ItemResults.from_frame(df)


def test_a_number_of_runs_beyond_exact_counting_is_refused():
    df = pd.DataFrame({"item": [0, 1], "model": ["a", "a"], "correct": [1, 2], "n": [1e30, 3]})
    with pytest.raises(CountsError, match=r"1 <= n <= 2\*\*53; rows \[0\]"):
        ItemResults.from_frame(df, trials="n")
    # an int64 column: 2**53 + 1 as a float is 2**53, which passed the limit
    with pytest.raises(CountsError, match=r"'n' has numbers above 2\*\*53 in rows \[0\]"):
        ItemResults.from_frame(df.assign(n=[2**53 + 1, 3]), trials="n")


@pytest.mark.parametrize("build, error, match", [
    (lambda d: ItemResults.from_frame(d, item=None), TypeError, "item= names a column"),
    (lambda d: ItemResults.from_frame(d.assign(item=[[k] for k in d["item"]])), CountsError,
     r"'item' must hold labels .* hold \[\['q0'\], "),
    (lambda d: ItemResults.from_frame(d.assign(topic=[{"t": 1}] * len(d)), cluster="topic"),
     CountsError, "'topic' must hold labels"),
    (lambda d: ItemResults([[1, 0]], [[1, 1]], items=[[1], [2]]), CountsError,
     r"Item names must be labels .* got \[1\]"),
    (lambda d: ItemResults([[1, 0]], [[1, 1]], clusters=[[1], [2]]), CountsError,
     r"Cluster labels must be labels .* got \[1\]"),
    (lambda d: ItemResults.from_dict({}), CountsError, "keys 'successes', 'trials'"),
    # complex scores were read as their real part, with NumPy's ComplexWarning
    (lambda d: ItemResults.from_frame(d.assign(correct=d["correct"] + 1j)), CountsError,
     r"'correct' must hold scores 0 or 1; rows \[0, 1"),
    # dates were shown as their integer (0 at the epoch): "have [0, 0]"
    (lambda d: ItemResults.from_frame(d.assign(correct=pd.Series(
        [np.datetime64("1970-01-01")] * len(d), dtype=object))), CountsError,
     r"have \['1970-01-01', '1970-01-01'"),
    # clusters 1 and "1" were two clusters of one name
    (lambda d: ItemResults.from_frame(d.assign(topic=[1 if i == "q0" else "1" for i in d["item"]]),
                                      cluster="topic"), CountsError, "'topic' has 1 and '1'"),
    (lambda d: ItemResults([[1, 0]], [[1, 1]], clusters=[1, "1"]), CountsError,
     "has 1 and '1'"),
])
def test_labels_and_numbers_that_cannot_be_read_get_counts_errors(build, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no NumPy or pandas warning on the way
        with pytest.raises(error, match=match):
            build(_frame())
