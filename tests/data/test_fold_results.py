"""FoldResults: per-fold confusion matrices of algorithms on data sets (issue 21, item 1).

The matrices are checked against scikit-learn's ``confusion_matrix`` fold by fold, the
comparisons fed by ``pair``/``by_dataset`` against the same comparisons on batches built
by hand, Dask against pandas, counts frames against predictions; and every refusal
has its message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import confusion_matrix

import bayescm as bcm
from bayescm.data import CountsError, FoldResults


def predictions(seed=0, *, runs=2, k=5, n=60, classes=(0, 1), algorithms=("a", "b"),
                datasets=("d1",), acc=(0.85, 0.75)):
    """Long out-of-fold predictions: every algorithm on the same cases and folds."""
    rng = np.random.default_rng(seed)
    rows = []
    for ds in datasets:
        y = rng.choice(classes, size=n)
        for run in range(runs):
            fold = rng.permutation(np.arange(n) % k)
            for alg, p in zip(algorithms, acc, strict=False):
                wrong = rng.random(n) > p
                pred = np.where(wrong, rng.choice(classes, size=n), y)
                rows.append(pd.DataFrame({"dataset": ds, "run": run, "fold": fold,
                                          "algorithm": alg, "y_true": y, "y_pred": pred}))
    return pd.concat(rows, ignore_index=True)


def test_from_predictions_reproduces_sklearn_per_fold():
    df = predictions(1, runs=2, k=4, classes=("x", "y", "z"), datasets=("d1", "d2"))
    bin_df = predictions(2, runs=2, k=4, datasets=("d3",))
    df = pd.concat([df, bin_df], ignore_index=True)
    res = FoldResults.from_predictions(df, run="run", dataset="dataset")
    assert res.algorithms == ("a", "b") and res.datasets == ("d1", "d2", "d3")
    assert (res.n_runs, res.n_folds) == (2, 4)
    for ds in res.datasets:
        for alg in res.algorithms:
            batch = res.matrices(alg, ds)
            assert len(batch) == 8
            rows = df[(df.dataset == ds) & (df.algorithm == alg)]
            # runs × folds: run 0's folds 0..3, then run 1's
            for i, (run, fold) in enumerate((r, f) for r in range(2) for f in range(4)):
                assert batch.classifiers[i] == f"run={run}|fold={fold}"
                sel = rows[(rows.run == run) & (rows.fold == fold)]
                if ds == "d3":  # binary: labels 0/1, 1 positive
                    tn, fp, fn, tp = confusion_matrix(sel.y_true.astype(int),
                                                      sel.y_pred.astype(int),
                                                      labels=[0, 1]).ravel()
                    assert batch.counts[i].tolist() == [tp, fn, fp, tn]
                else:
                    ref = confusion_matrix(sel.y_true.astype(str), sel.y_pred.astype(str),
                                           labels=["x", "y", "z"])
                    np.testing.assert_array_equal(batch.counts[i], ref)
    assert isinstance(res.matrices("a", "d3"), bcm.ConfusionMatrix)
    assert res.matrices("a", "d1").labels == ("x", "y", "z")


def test_wide_predictions_labels_and_positive():
    df = predictions(3, runs=1, k=3, classes=("ill", "well"))
    wide = df[df.algorithm == "a"].drop(columns=["algorithm", "y_pred"]).reset_index(drop=True)
    wide["a"] = df.loc[df.algorithm == "a", "y_pred"].to_numpy()
    wide["b"] = df.loc[df.algorithm == "b", "y_pred"].to_numpy()
    long = FoldResults.from_predictions(df, positive="ill")
    res = FoldResults.from_predictions(wide, y_pred=["a", "b"], algorithm=None,
                                       positive="ill")
    assert res.algorithms == ("a", "b") and res.n_runs == 1 and res.n_folds == 3
    assert res.matrices("a") == long.matrices("a") and res.matrices("b") == long.matrices("b")
    sel = df[(df.algorithm == "b") & (df.fold == 2)]
    tp, fn, fp, tn = confusion_matrix(sel.y_true, sel.y_pred, labels=["ill", "well"]).ravel()
    assert res.matrices("b")["fold=2"].counts[0].tolist() == [tp, fn, fp, tn]
    # two labels without a positive one: a K = 2 matrix, the classes in the given order
    k2 = FoldResults.from_predictions(df, labels=["well", "ill"])
    assert k2.matrices("a").labels == ("well", "ill")
    single = FoldResults.from_predictions(wide, y_pred="a", algorithm=None, positive="ill")
    assert single.algorithms == ("a",) and single.matrices("a") == res.matrices("a")
    with pytest.raises(CountsError, match="also has an 'algorithm' column"):
        FoldResults.from_predictions(df, y_pred=["y_pred"])


def test_pair_feeds_compare_folds_as_batches_built_by_hand():
    df = predictions(4, runs=3, k=5, n=80)
    res = FoldResults.from_predictions(df, run="run")
    by_hand = {}
    for alg in ("a", "b"):
        cells = {c: [] for c in bcm.CELLS}
        for run in range(3):
            for fold in range(5):
                sel = df[(df.algorithm == alg) & (df.run == run) & (df.fold == fold)]
                tn, fp, fn, tp = confusion_matrix(sel.y_true, sel.y_pred, labels=[0, 1]).ravel()
                for c, v in zip(("tp", "fn", "fp", "tn"), (tp, fn, fp, tn), strict=True):
                    cells[c].append(v)
        by_hand[alg] = bcm.ConfusionMatrix(**cells)
    cms_a, cms_b = res.pair("a", "b")
    assert res.runs_of() == 3
    for plug_in in (True, False):
        ours = bcm.analysis.compare_folds(cms_a, cms_b, "acc", runs=3, plug_in=plug_in,
                                          random_seed=5, draws=500)
        ref = bcm.analysis.compare_folds(by_hand["a"], by_hand["b"], "acc", runs=3,
                                         plug_in=plug_in, random_seed=5, draws=500)
        # the same counts in the same order and seed: the same numbers, exactly
        assert (ours.p_a_better, ours.p_rope, ours.p_b_better) == \
            (ref.p_a_better, ref.p_rope, ref.p_b_better)
        np.testing.assert_array_equal(ours.difference, ref.difference)
    by_ds = res.by_dataset("a")
    assert list(by_ds) == ["data"] and by_ds["data"] is cms_a


def test_dask_equals_pandas():
    dd = pytest.importorskip("dask.dataframe")
    df = predictions(5, runs=2, k=3, classes=(0, 1, 2), datasets=("p", "q"))
    pandas = FoldResults.from_predictions(df, run="run", dataset="dataset")
    lazy = FoldResults.from_predictions(dd.from_pandas(df, npartitions=4), run="run",
                                        dataset="dataset")
    assert set(lazy.datasets) == set(pandas.datasets)
    for ds in pandas.datasets:
        for alg in pandas.algorithms:
            assert lazy.matrices(alg, ds) == pandas.matrices(alg, ds)
    counts = pandas.to_frame().reset_index()
    lazy_frame = FoldResults.from_frame(dd.from_pandas(_binary_counts(), npartitions=2),
                                        run="run")
    assert lazy_frame.matrices("a") == FoldResults.from_frame(_binary_counts(),
                                                              run="run").matrices("a")
    assert len(counts) == 2 * 2 * 6


def _binary_counts():
    rng = np.random.default_rng(6)
    rows = []
    for alg in ("a", "b"):
        for run in (1, 2):
            for fold in range(1, 11):  # fold ids 1..10: ordered as numbers, not as text
                tp, tn = rng.binomial(50, 0.8, 2)
                rows.append({"algorithm": alg, "run": run, "fold": fold, "TP": tp,
                             "FN": 50 - tp, "FP": 50 - tn, "TN": tn})
    return pd.DataFrame(rows)


def test_from_frame_binary_order_and_counts():
    df = _binary_counts()
    res = FoldResults.from_frame(df.sample(frac=1, random_state=0), run="run")
    assert (res.n_runs, res.n_folds) == (2, 10)
    batch = res.matrices("b")
    assert batch.classifiers[:3] == ("run=1|fold=1", "run=1|fold=2", "run=1|fold=3")
    assert batch.classifiers[10] == "run=2|fold=1"
    want = df[df.algorithm == "b"][["TP", "FN", "FP", "TN"]].to_numpy()
    np.testing.assert_array_equal(batch.counts, want)


def test_from_frame_multiclass_crosstab_rows_equal_predictions():
    df = predictions(7, runs=1, k=3, classes=(1, 2, 3))
    res = FoldResults.from_predictions(df)
    rows = []
    for alg in ("a", "b"):
        for fold in range(3):
            sel = df[(df.algorithm == alg) & (df.fold == fold)]
            tab = pd.crosstab(sel.y_true, sel.y_pred).reindex(index=[1, 2, 3],
                                                              columns=[1, 2, 3], fill_value=0)
            tab.columns = [str(c) for c in tab.columns]  # as a CSV's header would have them
            rows.append(tab.rename_axis("actual").reset_index().assign(algorithm=alg,
                                                                       fold=fold))
    frame = pd.concat(rows, ignore_index=True)
    from_counts = FoldResults.from_frame(frame)
    for alg in ("a", "b"):
        assert from_counts.matrices(alg) == res.matrices(alg)
    with pytest.raises(CountsError, match="classes are not shared"):
        FoldResults.from_frame(frame.drop(index=4))
    with pytest.raises(CountsError, match="Duplicate rows"):
        FoldResults.from_frame(pd.concat([frame, frame.iloc[[0]]]))


def test_the_constructor_and_views():
    a = bcm.ConfusionMatrix(tp=[9, 8, 7, 9], fn=[1, 2, 3, 1], fp=[2, 1, 2, 0], tn=[8, 9, 8, 10])
    b = bcm.ConfusionMatrix(tp=[7, 8, 7, 8], fn=[3, 2, 3, 2], fp=[2, 3, 1, 2], tn=[8, 7, 9, 8])
    res = FoldResults({("a", "x"): a, ("b", "x"): b, ("a", "y"): b, ("b", "y"): a},
                      runs={"x": 2, "y": 1})
    assert res.n_runs == {"x": 2, "y": 1} and res.n_folds == {"x": 2, "y": 4}
    assert res.pair("b", "a", "y") == (a, b)
    assert res.by_dataset("b") == {"x": b, "y": a}
    assert "2 algorithms" in repr(res)
    with pytest.raises(ValueError, match="name one with dataset="):
        res.matrices("a")
    with pytest.raises(KeyError, match="No algorithm 'c'"):
        res.matrices("c", "x")
    with pytest.raises(KeyError, match="No data set 'z'"):
        res.pair("a", "b", "z")
    with pytest.raises(AttributeError, match="immutable"):
        res.x = 1
    with pytest.raises(CountsError, match="have no results on data set 'y'"):
        FoldResults({("a", "x"): a, ("b", "x"): b, ("a", "y"): b})
    mc = bcm.MulticlassConfusionMatrix(np.ones((4, 2, 2)), labels=["p", "q"])
    with pytest.raises(CountsError, match="different classes"):
        FoldResults({"a": a, "b": mc})


def test_refusals_say_what_to_do():
    df = predictions(8, runs=2, k=4)
    with pytest.raises(CountsError, match=r"Column\(s\) \['batch'\] are not in the data"):
        FoldResults.from_predictions(df, run="batch")
    gone = df[~((df.algorithm == "b") & (df.run == 1) & (df.fold == 3))]
    with pytest.raises(CountsError, match=r"'b' lacks 1 fold\(s\): \['run 1, fold 3'\]"):
        FoldResults.from_predictions(gone, run="run")
    short = df[~((df.run == 1) & (df.fold == 3))]
    with pytest.raises(CountsError, match=r"unequal numbers of folds \{0: 4, 1: 3\}"):
        FoldResults.from_predictions(short, run="run")
    one = df.assign(fold=0)
    with pytest.raises(CountsError, match=r"rho = 1/k"):
        FoldResults.from_predictions(one, run="run")
    with pytest.raises(CountsError, match="not among the classes"):
        FoldResults.from_predictions(df, run="run", labels=[1, 2])
    with pytest.raises(CountsError, match="no fold"):
        FoldResults.from_predictions(df.assign(fold=df.fold.where(df.index != 5)), run="run")
    counts = _binary_counts()
    with pytest.raises(CountsError, match=r"Duplicate rows.*run="):
        FoldResults.from_frame(counts)
    with pytest.raises(CountsError, match="whole numbers >= 0"):
        FoldResults.from_frame(counts.assign(TP=counts.TP - 100), run="run")
    with pytest.raises(CountsError, match=r"tp, fn, fp, tn .*or an 'actual' column"):
        FoldResults.from_frame(counts.drop(columns="TN"), run="run")
    with pytest.raises(TypeError, match="pandas or Dask DataFrame"):
        FoldResults.from_predictions({"y_true": [1]})


def test_algorithms_tested_on_different_folds_are_flagged():
    df = predictions(9, runs=1, k=3)
    other = df.copy()
    mask = other.algorithm == "b"
    other.loc[mask, "fold"] = np.random.default_rng(0).permutation(other.loc[mask, "fold"])
    with pytest.warns(UserWarning, match="not tested on the same folds"):
        FoldResults.from_predictions(other)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), runs=st.integers(1, 3),
       n_classes=st.integers(2, 4))
def test_every_case_is_counted_once_in_its_fold(seed, k, runs, n_classes):
    df = predictions(seed, runs=runs, k=k, n=6 * k, classes=tuple(range(n_classes)))
    res = FoldResults.from_predictions(df, run="run")
    assert (res.n_runs, res.n_folds) == (runs, k)
    for alg in res.algorithms:
        batch = res.matrices(alg)
        # binary exactly when the labels seen are 0 and 1 (a class may go unseen)
        seen = set(df.y_true) | set(df.y_pred)
        assert isinstance(batch, bcm.ConfusionMatrix) == (seen <= {0, 1})
        sizes = df[df.algorithm == alg].groupby(["run", "fold"]).size().to_numpy()
        np.testing.assert_array_equal(batch.n, sizes)  # runs × folds, in order


def test_overview_counts_cases_per_run():
    df = predictions(11, runs=3, k=4, n=48, classes=("x", "y", "z"), datasets=("p", "q"))
    res = FoldResults.from_predictions(df, run="run", dataset="dataset")
    table = res.overview()
    assert table.loc["p"].tolist() == ["K=3", 3, 4, 48]
    assert "<table" in res._repr_html_() and "FoldResults(" in res._repr_html_()


def test_algorithms_that_print_alike_are_refused():
    """Algorithms 1 and "1" were merged (their counts added): refused with the fix."""
    df = pd.DataFrame({"algorithm": [1] * 3 + ["1"] * 3, "fold": [0, 1, 2] * 2,
                       "tp": [40, 42, 41, 1, 2, 3], "fn": [10, 8, 9, 1, 1, 1],
                       "fp": [5, 6, 4, 1, 1, 1], "tn": [45, 44, 46, 1, 1, 1]})
    with pytest.raises(bcm.CountsError, match="'algorithm' has 1 and '1'"):
        bcm.FoldResults.from_frame(df)
    ok = bcm.FoldResults.from_frame(df.assign(algorithm=df["algorithm"].astype(str)
                                              .where(df.index < 3, "one")))
    assert sorted(ok.algorithms) == ["1", "one"]


def test_wrong_prediction_columns_and_huge_counts_are_clear_errors():
    df = pd.DataFrame({"fold": [0, 0, 1, 1], "y_true": [1, 0, 1, 0], "y_pred": [1, 1, 0, 0]})
    with pytest.raises(CountsError, match="y_pred names no column"):
        bcm.FoldResults.from_predictions(df, y_pred=[], algorithm=None)
    for y_pred in ("y_true", "fold", ["y_pred", "y_pred"]):
        with pytest.raises(CountsError, match="Each role needs its own column"):
            bcm.FoldResults.from_predictions(df, y_pred=y_pred, algorithm=None)
    big = pd.DataFrame({"algorithm": ["x", "x"], "fold": [0, 1], "tp": [1e30, 3],
                        "fn": [1, 1], "fp": [1, 1], "tn": [1, 1]})
    with pytest.raises(CountsError, match=r"a count is 1e\+30, above 2\*\*53"):
        bcm.FoldResults.from_frame(big)
