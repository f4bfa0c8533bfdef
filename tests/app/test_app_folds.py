"""The Compare page's "across folds / data sets" mode (bayescm.app.folds_logic), without
a browser.

The per-fold batches read from the page's CSV are checked against the library's own
matrices of the same rows; the page's comparisons against
:func:`bayescm.analysis.compare_folds` and :func:`bayescm.analysis.compare_datasets`
called directly with the same inputs and seed (reproducible draws: the numbers agree
to float precision).
"""

from __future__ import annotations

import types
import urllib.parse
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import strategies as st

import bayescm as bcm
from bayescm.app import fitjob, state
from bayescm.app import folds_logic as fl
from bayescm.app.compare_logic import CompareState
from bayescm.app.pages_common import InputError
from tests.app.test_state_properties import page_value
from tests.bounded import refused_fast
from tests.test_properties import BOUND, prop
from tests.timebound import time_bound


def several(n_datasets: int = 3, runs: int = 2, k: int = 5, seed: int = 0) -> str:
    """A CSV of A and B on ``n_datasets`` data sets, ``runs`` x ``k`` folds, rows shuffled."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_datasets):
        for alg, acc in (("A", 0.86), ("B", 0.82)):
            for r in range(1, runs + 1):
                for f in range(1, k + 1):
                    tp, tn = rng.binomial(40, acc), rng.binomial(40, acc)
                    rows.append(f"set{d}, {alg}, {r}, {f}, {tp}, {40 - tp}, {40 - tn}, {tn}")
    order = rng.permutation(len(rows))
    return "dataset, algorithm, run, fold, tp, fn, fp, tn\n" + "\n".join(rows[i] for i in order)


def _frame(text: str) -> pd.DataFrame:
    return pd.read_csv(pd.io.common.StringIO(text), skipinitialspace=True)


def test_default_folds_are_the_library_batches_in_fold_order() -> None:
    table = fl.parse_folds(fl.DEFAULT_FOLDS)
    assert table.algorithms == ("A", "B") and table.datasets == ("",) and table.runs == 1
    frame = _frame(fl.DEFAULT_FOLDS)
    for alg in ("A", "B"):
        rows = frame[frame["algorithm"] == alg].sort_values("fold")
        direct = bcm.ConfusionMatrix.from_frame(rows[list(bcm.CELLS)].reset_index(drop=True))
        got = table.folds[""][alg]
        np.testing.assert_array_equal(got.to_frame().to_numpy(), direct.to_frame().to_numpy())
    # folds numbered 1..10 are ordered by value (10 last), not as text
    assert table.folds[""]["A"].classifiers[-1] == "run 1 fold 10"


def test_shuffled_rows_are_ordered_runs_by_folds() -> None:
    text = several(n_datasets=2, runs=2, k=5)
    table = fl.parse_folds(text)
    assert table.datasets == ("set0", "set1")  # in order, whatever the rows' order
    assert table.runs == 2
    frame = _frame(text)
    rows = frame[(frame["dataset"] == "set1") & (frame["algorithm"] == "B")].sort_values(
        ["run", "fold"])
    got = table.folds["set1"]["B"]
    np.testing.assert_array_equal(got.to_frame()["tp"].to_numpy(), rows["tp"].to_numpy())
    assert got.classifiers[:6] == tuple(f"run {r} fold {f}" for r, f in
                                        [(1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (2, 1)])


@pytest.mark.parametrize("plug_in", [False, True])
def test_one_data_set_is_compare_folds_with_the_same_seed(plug_in) -> None:
    state = CompareState(mode="folds", metric="mcc", rope=0.02, plug_in=plug_in, seed=7,
                         a="B", b="A")
    res = fl.analyse(state)
    table = fl.parse_folds(fl.DEFAULT_FOLDS)
    lib = bcm.analysis.compare_folds(table.folds[""]["B"], table.folds[""]["A"], "mcc",
                                     rope=0.02, plug_in=plug_in, draws=fl.FOLD_DRAWS,
                                     random_seed=7, names=("B", "A"))
    got = res.comparison
    assert (got.p_a_better, got.p_rope, got.p_b_better) == (
        lib.p_a_better, lib.p_rope, lib.p_b_better)
    np.testing.assert_array_equal(got.difference, lib.difference)
    assert got.names == ("B", "A") and got.folds == 10 and got.runs == 1
    pd.testing.assert_frame_equal(res.summary, lib.summary(0.95))
    assert res.figure().axes[0].get_xlabel()  # the library's plot, drawn on the page's figure


def test_runs_reach_compare_folds() -> None:
    text = several(n_datasets=1, runs=2, k=5).replace("set0, ", "").replace("dataset, ", "")
    res = fl.analyse(CompareState(mode="folds", folds=text, metric="acc", seed=3, a="A", b="B"))
    assert (res.comparison.runs, res.comparison.folds) == (2, 5)
    table = fl.parse_folds(text)
    lib = bcm.analysis.compare_folds(table.folds[""]["A"], table.folds[""]["B"], "acc",
                                     runs=2, rope=0.01, draws=fl.FOLD_DRAWS, random_seed=3)
    assert res.comparison.p_a_better == lib.p_a_better


KCLASS = """algorithm, fold, actual, cat, dog, fox
A, 1, cat, 20, 2, 1
A, 1, dog, 3, 18, 2
A, 1, fox, 1, 1, 15
A, 2, cat, 19, 3, 1
A, 2, dog, 2, 20, 1
A, 2, fox, 2, 0, 16
A, 3, cat, 21, 1, 0
A, 3, dog, 4, 17, 2
A, 3, fox, 1, 2, 14
B, 1, cat, 17, 4, 2
B, 1, dog, 3, 16, 4
B, 1, fox, 2, 2, 13
B, 2, dog, 5, 16, 2
B, 2, cat, 18, 3, 2
B, 2, fox, 2, 1, 15
B, 3, cat, 18, 3, 1
B, 3, dog, 3, 18, 2
B, 3, fox, 3, 1, 13"""


def test_k_class_folds_are_crosstabs_read_by_from_frame() -> None:
    table = fl.parse_folds(KCLASS)
    b = table.folds[""]["B"]
    assert isinstance(b, bcm.MulticlassConfusionMatrix) and b.labels == ("cat", "dog", "fox")
    frame = _frame(KCLASS)
    fold2 = frame[(frame["algorithm"] == "B") & (frame["fold"] == 2)].set_index("actual")
    direct = bcm.MulticlassConfusionMatrix.from_frame(fold2[["cat", "dog", "fox"]],
                                                      labels=["cat", "dog", "fox"])
    np.testing.assert_array_equal(b.counts[1], direct.counts[0])  # rows matched by label
    res = fl.analyse(CompareState(mode="folds", folds=KCLASS, metric="f1_macro", seed=2))
    lib = bcm.analysis.compare_folds(table.folds[""]["A"], b, "f1_macro", rope=0.01,
                                     draws=fl.FOLD_DRAWS, random_seed=2, names=("A", "B"))
    assert res.comparison.p_a_better == lib.p_a_better


@pytest.mark.parametrize(("text", "words"), [
    ("", "header line"),
    ("algorithm, tp, fn, fp, tn\nA, 1, 2, 3, 4", "No column 'fold'"),
    ("algorithm, fold, tp, fn\nA, 1, 1, 2", "missing fp, tn"),
    ("algorithm, fold, tp, fn, fp, tn, extra\nA, 1, 1, 2, 3, 4, 5", "unknown extra"),
    ("algorithm, fold, tp, fn, fp, tn\nA, 1, 1, 2, 3, 4\nA, 2, 1, 2, 3, 4", "at least two"),
    ("algorithm, fold, tp, fn, fp, tn\nA, 1, 1, 2, 3, 4\nA, 1, 1, 2, 3, 4\nB, 1, 1, 2, 3, 4",
     "given twice"),
    ("algorithm, fold, tp, fn, fp, tn\nA, 1, 1, 2, 3, 4\nA, 2, 1, 2, 3, 4\nB, 1, 1, 2, 3, 4\n"
     "B, 3, 1, 2, 3, 4", "different folds"),
    ("algorithm, run, fold, tp, fn, fp, tn\nA, 1, 1, 1, 2, 3, 4\nA, 1, 2, 1, 2, 3, 4\n"
     "A, 2, 1, 1, 2, 3, 4\nB, 1, 1, 1, 2, 3, 4\nB, 1, 2, 1, 2, 3, 4\nB, 2, 1, 1, 2, 3, 4",
     "different numbers of folds"),
    ("algorithm, fold, tp, fn, fp, tn\nA, 1, x, 2, 3, 4\nB, 1, 1, 2, 3, 4", "x"),
    ("algorithm, fold, tp, fn, fp, tn\nA, 1, -1, 2, 3, 4\nB, 1, 1, 2, 3, 4", "negative"),
    ("algorithm, fold, tp, fn, fp, tn\n, 1, 1, 2, 3, 4\nB, 1, 1, 2, 3, 4", "is empty"),
])
def test_bad_csvs_get_a_message_under_the_folds_field(text, words) -> None:
    with pytest.raises(InputError) as err:
        fl.parse_folds(text)
    assert err.value.field == "folds" and words in err.value.message, err.value.message


@pytest.mark.parametrize(("changes", "name", "words"), [
    ({"rope": -0.1}, "rope", ">= 0"),
    ({"a": "Z"}, "a", "No algorithm named 'Z'"),
    ({"b": "A"}, "b", "two different"),
    ({"metric": "nope"}, "metric", "Unknown metric"),
    ({"metric": "tpr", "folds": KCLASS}, "metric", "an average such as"),
    ({"metric": "ppv", "plug_in": True, "folds": fl.DEFAULT_FOLDS.replace(
        "B, 3, 23, 7, 7, 33", "B, 3, 0, 30, 0, 40")}, "metric", "undefined on fold"),
])
def test_bad_options_get_their_fields_message(changes, name, words) -> None:
    with pytest.raises(InputError) as err:
        fl.analyse(CompareState(mode="folds", **changes))
    assert err.value.field == name and words in err.value.message, err.value.message


def test_too_many_rows_or_data_sets_are_refused_before_reading() -> None:
    header = "dataset, algorithm, fold, tp, fn, fp, tn\n"
    rows = header + "\n".join(f"d{i}, A, 1, 1, 1, 1, 1" for i in range(fl.MAX_ROWS + 1))
    err = refused_fast(lambda: fl.parse_folds(rows), InputError)
    assert "at most 20,000" in err.message
    sets = header + "\n".join(f"d{i}, {a}, {f}, 1, 1, 1, 1" for i in range(fl.MAX_DATASETS + 1)
                              for a in "AB" for f in (1, 2))
    err = refused_fast(lambda: fl.parse_folds(sets), InputError)
    assert "at most 100" in err.message


def test_several_data_sets_are_checked_before_the_fit() -> None:
    text = several()
    prepared = fl.prepare(CompareState(mode="folds", folds=text, metric="acc"))
    assert prepared.several and len(prepared.table.datasets) == 3
    with pytest.raises(InputError) as err:  # the sampler's bounds, under their fields
        fl.prepare(CompareState(mode="folds", folds=text, chains=17))
    assert err.value.field == "chains"
    with pytest.raises(InputError) as err:  # 200,000 x 4 draws of 30 data sets: 24 M values
        fl.prepare(CompareState(mode="folds", folds=several(n_datasets=30, runs=1),
                                draws=200_000))
    assert err.value.field == "draws" and "values this server keeps" in err.value.message
    with pytest.raises(InputError) as err:  # one data set needs no fit
        fl.datasets_job(CompareState(mode="folds"))
    assert err.value.field == "folds"


def test_the_fit_calls_compare_datasets_with_the_pages_inputs(monkeypatch, tmp_path) -> None:
    """What the job runs passes the page's folds and options on (fast: the library's
    function recorded, not sampled; its numbers are compared in the slow test below)."""
    calls = []
    monkeypatch.setattr(bcm.analysis, "compare_datasets",
                        lambda *args, **kwargs: calls.append((args, kwargs)) or "fit")
    text = several(n_datasets=3, runs=2, k=5, seed=4)
    state = CompareState(mode="folds", folds=text, metric="accuracy", rope=0.02, draws=300,
                         tune=250, chains=3, seed=9, a="B", b="A")
    got = fl._datasets_task(state, tmp_path / "fit.nc", None)
    (cms_a, cms_b, metric), kwargs = calls[0]
    table = fl.parse_folds(text)
    assert list(cms_a) == ["set0", "set1", "set2"] and metric == "acc"
    for d in cms_a:
        assert cms_a[d] == table.folds[d]["B"] and cms_b[d] == table.folds[d]["A"]
    assert kwargs == {"rope": 0.02, "runs": 2, "draws": 300, "tune": 250, "chains": 3,
                      "random_seed": 9, "names": ("B", "A")}
    assert (got.a, got.b, got.comparison) == ("B", "A", "fit")


@pytest.mark.slow
def test_several_data_sets_are_compare_datasets_with_the_same_seed(tmp_path) -> None:
    """Slow: the hierarchical model's first fit in a process compiles it (20-60 s)."""
    text = several(n_datasets=3, runs=1, k=5, seed=4)
    state = CompareState(mode="folds", folds=text, metric="acc", rope=0.01, draws=200,
                         tune=200, chains=2, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fl._datasets_task(state, tmp_path / "fit.nc", None)  # what the job runs
        table = fl.parse_folds(text)
        cms_a, cms_b = table.pair("A", "B")
        lib = bcm.analysis.compare_datasets(cms_a, cms_b, "acc", rope=0.01, draws=200,
                                            tune=200, chains=2, random_seed=5,
                                            names=("A", "B"))
    c = got.comparison
    assert (c.p_a_better, c.p_rope, c.p_b_better) == (lib.p_a_better, lib.p_rope,
                                                       lib.p_b_better)
    np.testing.assert_allclose(c.delta, lib.delta, rtol=1e-12)
    pd.testing.assert_frame_equal(got.per_dataset, lib.to_frame(0.95))
    # the shrinkage shown: per data set the observed mean next to the posterior's
    np.testing.assert_allclose(got.per_dataset["observed_mean"], lib.observed_mean)
    probs = got.probabilities
    assert probs.loc["decision"].tolist() == [lib.p_a_better, lib.p_rope, lib.p_b_better]
    assert probs.loc["new data set"].tolist() == pytest.approx(list(lib.predictive_probs))
    assert got.simplex_figure().axes and got.forest_figure().axes


def test_folds_state_round_trips_through_the_url() -> None:
    s = CompareState(mode="folds", folds=several(n_datasets=2), rope=0.02, plug_in=True,
                     metric="f1", a="B", b="A", draws=300, tune=400, chains=2, fitted=True)
    query = s.to_query()
    assert {"mode", "folds", "rope", "plug_in", "draws", "fitted"} <= set(query)
    assert CompareState.from_query(query) == s
    # and through a real query string, as a link carries it
    assert CompareState.from_query(state.parse(urllib.parse.urlencode(query))) == s


def _opened(monkeypatch, query: dict):
    from bayescm.app.pages.compare import Compare

    location = types.SimpleNamespace(search="?" + urllib.parse.urlencode(query))
    monkeypatch.setattr(state, "_session_location", lambda: location)
    page = Compare()
    page.view()
    page.update()
    return page, location


def test_the_page_opened_from_a_folds_link_shows_the_library_numbers(monkeypatch) -> None:
    page, location = _opened(monkeypatch, {"mode": "folds", "metric": "acc", "seed": "3"})
    lib = fl.analyse(CompareState(mode="folds", metric="acc", seed=3)).comparison
    assert f">{lib.p_a_better:.3f}<" in page.folds_headline.object
    assert page.one_out.visible and not page.several_out.visible and not page.outputs.visible
    page.state.rope = -1.0  # a bad edit: its field's message, no result
    assert "ROPE" in page.notes["rope"].text and page.folds_result is None
    assert "rope=-1.0" in location.search


def test_a_link_over_the_bounds_starts_no_fit(monkeypatch) -> None:
    started = []
    monkeypatch.setattr(fitjob.FitJob, "start", lambda self: started.append(self) or self)
    query = {"mode": "folds", "folds": several(n_datasets=2, runs=1), "fitted": "1",
             "tune": "100000000"}
    page, _ = _opened(monkeypatch, query)
    assert "400,004,000 steps" in page.notes["tune"].text and not page.runner.ready
    page.runner.start()
    assert started == []
    page.state.tune = 200  # within the bounds: the Fit button is ready
    assert page.runner.ready and page.several_out.visible


FOLD_FIELDS = ["mode", "folds", "rope", "plug_in", "metric", "a", "b", "draws", "tune",
               "chains", "seed", "fitted"]
fold_value = st.one_of(page_value, st.sampled_from(
    ["folds", "classifiers", "0.02", "-0.1", "nan", "acc", "f1_macro", several(2, 1, 3),
     KCLASS, "algorithm, fold\nA, 1", "dataset, algorithm, fold, tp, fn, fp, tn\n"
     + "\n".join(f"d{i}, A, 1, 1, 1, 1, 1" for i in range(300))]))


@prop(query=st.dictionaries(st.sampled_from(FOLD_FIELDS), fold_value, max_size=4))
def test_a_folds_page_opened_from_any_link_shows_messages_not_errors(query):
    """As tests/app/test_state_properties.py does for the other pages."""
    query = {"mode": "folds", **query}
    with time_bound(BOUND, "opening compare in folds mode"), \
            pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        page, _ = _opened(mp, query)
    for text in (n.text for n in page.notes.values() if n.text):
        assert "Unexpected error" not in text and "Traceback" not in text, text
        assert "/work/" not in text and ".py" not in text, text
