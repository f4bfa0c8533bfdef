"""Multiclass metrics (issue 12 item 3): plug-in values against scikit-learn and pycm.

Random labelings with K = 2..12, including classes nobody has (zero rows), classes
nobody predicts (zero columns) and classes in ``labels=`` that appear nowhere.
Convention under test: a per-class value with a zero denominator is NaN, and an
average runs over the classes where the metric is defined -- scikit-learn's values
with ``zero_division=np.nan``; its default puts 0 there instead, and pycm says
"None" (for an average that includes an undefined class, too).
"""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np
import pycm
import pytest
import xarray as xr
from sklearn import metrics as skm

import bayescm as bcm
from bayescm import metrics as M

NAN = np.nan


def labelings(seed: int = 0, count: int = 60):
    """(y_true, y_pred, labels) with K = 2..12, often with empty rows or columns."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        k = 2 + i % 11
        n = int(rng.integers(3, 120))
        labels = [f"c{j}" for j in range(k)]
        true_classes = labels if rng.random() < 0.5 else labels[: max(1, k - 2)]
        pred_classes = labels if rng.random() < 0.5 else labels[1:]
        y_true = rng.choice(true_classes, n, p=rng.dirichlet(np.ones(len(true_classes))))
        noise = rng.choice(pred_classes, n)
        y_pred = np.where(rng.random(n) < 0.6, y_true, noise)
        y_pred = np.where(np.isin(y_pred, pred_classes), y_pred, noise)
        yield y_true, y_pred, labels


CASES = list(labelings())


def plug_in(y_true, y_pred, labels) -> xr.Dataset:
    mc = bcm.MulticlassConfusionMatrix.from_predictions(y_true, y_pred, labels=labels)
    return M.compute_multiclass(mc).sel(classifier="cm")


def close(ours, theirs) -> None:
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=1e-10, atol=1e-12, equal_nan=True)


def test_the_random_labelings_have_empty_rows_and_columns():
    empty_rows = empty_cols = 0
    for y_true, y_pred, labels in CASES:
        c = bcm.MulticlassConfusionMatrix.from_predictions(y_true, y_pred, labels).counts[0]
        empty_rows += (c.sum(axis=1) == 0).any()
        empty_cols += (c.sum(axis=0) == 0).any()
    assert empty_rows > 10 and empty_cols > 10
    assert {len(c[2]) for c in CASES} == set(range(2, 13))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_plug_in_equals_scikit_learn_with_nan_zero_division(case):
    y_true, y_pred, labels = CASES[case]
    ds = plug_in(y_true, y_pred, labels)
    kw = {"labels": labels, "zero_division": NAN}
    close(ds["acc"], skm.accuracy_score(y_true, y_pred))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "y_pred contains classes not in y_true"
        close(ds["ba"], skm.balanced_accuracy_score(y_true, y_pred))
        close(ds["kappa"], skm.cohen_kappa_score(y_true, y_pred, labels=labels))
    mcc = skm.matthews_corrcoef(y_true, y_pred)
    if np.isnan(ds["mcc"]):  # constant prediction or one actual class: sklearn says 0
        assert mcc == 0.0
    else:
        close(ds["mcc"], mcc)
    p, r, f, support = skm.precision_recall_fscore_support(y_true, y_pred, average=None, **kw)
    close(ds["ppv"], p)
    close(ds["tpr"], r)
    close(ds["f1"], f)
    close(ds["prevalence"], support / len(y_true))
    close(ds["f2"], skm.fbeta_score(y_true, y_pred, beta=2, average=None, **kw))
    close(ds["f05"], skm.fbeta_score(y_true, y_pred, beta=0.5, average=None, **kw))
    # jaccard_score has no zero_division=nan: it is undefined exactly for the classes in
    # neither y_true nor y_pred, so compare over the classes present
    present = [c for c in labels if c in set(y_true) | set(y_pred)]
    jac = ds["jaccard"].sel({"class": present})
    close(jac, skm.jaccard_score(y_true, y_pred, average=None, labels=present))
    assert np.isnan(ds["jaccard"].drop_sel({"class": present})).all()
    for avg in ("macro", "weighted", "micro"):
        name = M.get_multiclass(f"jaccard_{avg}").key
        close(ds[name], skm.jaccard_score(y_true, y_pred, average=avg, labels=present))
    # averages: macro and micro always; weighted unless every class where the metric
    # is defined has no cases (sklearn then falls back to an unweighted mean; NaN here)
    counts = bcm.MulticlassConfusionMatrix.from_predictions(y_true, y_pred, labels).counts[0]
    has_cases = counts.sum(axis=1) > 0
    for key, fn in (("ppv", skm.precision_score), ("tpr", skm.recall_score),
                    ("f1", skm.f1_score)):
        name = {"tpr": "ba"}.get(key, f"{key}_macro")
        close(ds[name], fn(y_true, y_pred, average="macro", **kw))
        defined = ~np.isnan(ds[key].values)
        weighted = M.get_multiclass(f"{key}_weighted").key
        if (defined & has_cases).any():
            close(ds[weighted], fn(y_true, y_pred, average="weighted", **kw))
        else:
            assert np.isnan(ds[weighted])
        micro = M.get_multiclass(f"{key}_micro").key
        close(ds[micro], fn(y_true, y_pred, average="micro", **kw))
    close(ds["f2_macro"], skm.fbeta_score(y_true, y_pred, beta=2, average="macro", **kw))


def test_scikit_learn_default_puts_zero_where_bayescm_has_nan():
    # classes: a has cases, b is never predicted, c has no cases but is predicted
    y_true = ["a", "a", "b", "b", "a"]
    y_pred = ["a", "c", "a", "a", "a"]
    ds = plug_in(y_true, y_pred, ["a", "b", "c"])
    assert np.isnan(ds["ppv"].sel({"class": "b"})) and np.isnan(ds["tpr"].sel({"class": "c"}))
    with pytest.warns(UserWarning):  # sklearn: UndefinedMetricWarning, value 0
        p = skm.precision_score(y_true, y_pred, average=None, labels=["a", "b", "c"])
    assert p[1] == 0.0
    # macro over the defined classes: sklearn's default averages the 0 in
    defined_mean = np.nanmean(ds["ppv"].values)
    close(ds["ppv_macro"], defined_mean)
    with pytest.warns(UserWarning):
        assert skm.precision_score(y_true, y_pred, average="macro") < defined_mean
    # micro-F1 is accuracy: one variable
    assert M.get_multiclass("f1_micro").key == "acc"


def _pycm(counts: np.ndarray, labels) -> pycm.ConfusionMatrix:
    table = {a: {p: int(counts[i, j]) for j, p in enumerate(labels)}
             for i, a in enumerate(labels)}
    return pycm.ConfusionMatrix(matrix=table)


def _pycm_value(x):
    return NAN if x == "None" else float(x)


PYCM_CLASS = {"PPV": "ppv", "TPR": "tpr", "TNR": "tnr", "NPV": "npv", "FPR": "fpr",
              "FNR": "fnr", "FDR": "fdr", "FOR": "for", "F1": "f1", "F2": "f2",
              "F0.5": "f05", "J": "jaccard", "G": "fm", "ACC": "acc_ovr", "ERR": "err",
              "BM": "bm_ovr", "MK": "mk_ovr", "MCC": "mcc_ovr", "PRE": "prevalence",
              "PLR": "lr_pos", "NLR": "lr_neg"}
PYCM_OVERALL = {"Overall ACC": "acc", "Kappa": "kappa", "Overall MCC": "mcc",
                "PPV Macro": "ppv_macro", "TPR Macro": "ba", "F1 Macro": "f1_macro",
                "TNR Macro": "tnr_macro", "FPR Macro": "fpr_macro", "FNR Macro": "fnr_macro",
                "NPV Macro": "npv_macro", "PPV Micro": "acc", "TPR Micro": "acc",
                "F1 Micro": "acc"}


@pytest.mark.parametrize("case", range(0, len(CASES), 2))
def test_plug_in_equals_pycm(case):
    y_true, y_pred, labels = CASES[case]
    mc = bcm.MulticlassConfusionMatrix.from_predictions(y_true, y_pred, labels=labels)
    ds = M.compute_multiclass(mc).sel(classifier="cm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _pycm(mc.counts[0], labels)
    for theirs, ours in PYCM_CLASS.items():
        close(ds[ours], [_pycm_value(ref.class_stat[theirs][c]) for c in labels])
    for theirs, ours in PYCM_OVERALL.items():
        value = ref.overall_stat[theirs]
        if value == "None":
            # pycm: None when any class is undefined; here the defined classes' mean,
            # NaN only when nothing is defined
            base = M.get_multiclass(ours).base
            per_class = ds[base].values if base in ds else ds["tpr"].values
            assert np.isnan(per_class).any()
        else:
            close(ds[ours], float(value))
    overall_j = ref.overall_stat["Overall J"]
    if overall_j == "None":
        assert np.isnan(ds["jaccard"]).any()
    else:
        close(ds["jaccard_macro"], overall_j[1])


@pytest.mark.parametrize("seed", range(40))
def test_k2_per_class_metrics_are_the_binary_registry(seed):
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, 30, 4) * (rng.random(4) > 0.2)
    cells[rng.integers(4)] += 1
    cm = bcm.ConfusionMatrix(*cells)
    mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("pos", "neg"))
    ds = M.compute_multiclass(mc).sel(classifier="cm")
    binary = M.compute(cm.to_xarray()).sel(classifier="cm")
    for key in M.names():
        name = f"{key}_ovr" if key in M.OVERALL else key
        close(ds[name].sel({"class": "pos"}), binary[key])
    for key in ("acc", "kappa", "mcc", "bm", "mk"):  # overall equals binary at K = 2
        close(ds[key], binary[key])
    if cm.n_pos[0] and cm.n_neg[0]:
        close(ds["ba"], binary["ba"])


def test_counts_and_probabilities_give_the_same_values():
    counts = np.array([[31.0, 9, 2], [13, 20, 4], [1, 6, 17]])
    a = M.compute_multiclass(xr.DataArray(counts, dims=("actual", "predicted")))
    b = M.compute_multiclass(xr.DataArray(counts / counts.sum(), dims=("actual", "predicted")))
    for key in a.data_vars:
        close(a[key], b[key])


def theta_draws(chains=2, draws=50, classifiers=3, k=4, seed=0) -> xr.DataArray:
    rng = np.random.default_rng(seed)
    labels = [f"L{j}" for j in range(k)]
    theta = rng.dirichlet(np.ones(k * k), size=(chains, draws, classifiers))
    return xr.DataArray(theta.reshape(chains, draws, classifiers, k, k),
                        dims=("chain", "draw", "classifier", "actual", "predicted"),
                        coords={"classifier": ["a", "b", "c"][:classifiers],
                                "actual": labels, "predicted": labels})


def test_posterior_draws_vectorised_equal_one_table_at_a_time():
    theta = theta_draws()
    ds = M.compute_multiclass(theta)
    assert ds["f1"].dims == ("chain", "draw", "classifier", "class")
    assert ds["f1_macro"].dims == ds["mcc"].dims == ("chain", "draw", "classifier")
    assert list(ds["class"].values) == ["L0", "L1", "L2", "L3"]
    for c, d, clf in [(0, 0, "a"), (1, 49, "c"), (0, 17, "b")]:
        one = theta.isel(chain=c, draw=d).sel(classifier=clf).values
        for key in ("f1", "mcc", "bm", "mk", "ppv_weighted", "kappa_ovr", "jaccard_micro"):
            close(ds[key].isel(chain=c, draw=d).sel(classifier=clf),
                  M.evaluate_multiclass(key, one))
    assert all(np.isfinite(ds[k]).all() for k in ds.data_vars if k not in ("dor", "log_dor"))
    # compute dispatches K×K tables; the predicted axis is matched by label
    shuffled = theta.isel(predicted=[2, 0, 3, 1])
    again = M.compute(shuffled, ["f1", "mcc"])
    close(again["f1"], ds["f1"])
    close(again["mcc"], ds["mcc"])
    assert M.compute_multiclass(theta, "f1", dtype=np.float32)["f1"].dtype == np.float32


def test_powers_informedness_and_markedness_formulas():
    c = np.array([[50.0, 3, 2], [4, 40, 6], [1, 2, 30]])
    n, r, k = c.sum(), c.sum(axis=1), c.sum(axis=0)
    d = np.diag(c)
    bm_k = (n * d - r * k) / (r * (n - r))
    mk_k = (n * d - r * k) / (k * (n - k))
    close(M.evaluate_multiclass("bm", c), np.sum(k / n * bm_k))
    close(M.evaluate_multiclass("mk", c), np.sum(r / n * mk_k))
    close(M.evaluate_multiclass("bm_ovr", c), bm_k)
    # transposing the table swaps the roles of informedness and markedness
    close(M.evaluate_multiclass("bm", c.T), M.evaluate_multiclass("mk", c))


def test_coinciding_averages_are_aliases_and_nothing_is_reported_twice():
    for alias, target in [("f1_micro", "acc"), ("precision_micro", "acc"),
                          ("recall_micro", "acc"), ("recall_macro", "ba"),
                          ("tpr_weighted", "acc"), ("mk_weighted", "mk"),
                          ("F1_Score_macro", "f1_macro"), ("accuracy", "acc"),
                          ("matthews", "mcc"), ("recall", "tpr")]:
        assert M.get_multiclass(alias).key == target
    ds = M.compute_multiclass(theta_draws(), ["f1_micro", "acc", "recall_micro"])
    assert list(ds.data_vars) == ["acc"]
    with pytest.raises(KeyError, match="1 - acc"):
        M.get_multiclass("fnr_micro")
    with pytest.raises(KeyError, match="averages are offered for"):
        M.get_multiclass("dor_macro")
    # no two reported variables are equal on random tables
    rng = np.random.default_rng(3)
    tables = rng.integers(0, 20, (200, 5, 5)) + 1
    ds = M.compute_multiclass(xr.DataArray(tables, dims=("t", "actual", "predicted")))
    flat = {k: v.values.reshape(200, -1) for k, v in ds.data_vars.items()}
    for a, b in itertools.combinations(flat, 2):
        if flat[a].shape == flat[b].shape:
            assert not np.allclose(flat[a], flat[b], equal_nan=True), (a, b)


def test_registry_names_kinds_and_direction():
    assert M.multiclass_names("overall") == ["acc", "ba", "kappa", "mcc", "bm", "mk"]
    per_class = M.multiclass_names("class")
    assert len(per_class) == len(M.names())
    assert {"tpr", "ppv", "f1", "mcc_ovr", "acc_ovr"} <= set(per_class)
    assert set(M.multiclass_names("micro")) == {"jaccard_micro"}
    assert M.higher_is_better("f1_macro") and not M.higher_is_better("fpr_weighted")
    assert not M.higher_is_better("fnr") and M.higher_is_better("mcc")
    assert {"fpr_macro", "fnr_weighted", "fpr"} <= M.LOWER_IS_BETTER
    with pytest.raises(TypeError, match="compute_multiclass"):
        M.plug_in(bcm.MulticlassConfusionMatrix([[1, 2], [3, 4]]))


def test_a_thousand_classifiers_of_posterior_draws_compute_in_seconds():
    # 1,000 classifiers x 400 draws x K = 10: every metric (73 variables, 10 classes)
    # NumPy on blocks of tables, no loop over draws; the figure is printed, not asserted
    rng = np.random.default_rng(1)
    k = 10
    theta = rng.dirichlet(np.ones(k * k), size=(400, 1000)).reshape(1, 400, 1000, k, k)
    da = xr.DataArray(theta, dims=("chain", "draw", "classifier", "actual", "predicted"))
    start = time.perf_counter()
    ds = M.compute_multiclass(da, dtype=np.float32)
    seconds = time.perf_counter() - start
    print(f"\n{len(ds.data_vars)} multiclass metrics of 400,000 K=10 tables: {seconds:.2f} s")
    assert ds["f1"].shape == (1, 400, 1000, 10) and ds["mcc"].shape == (1, 400, 1000)
    assert np.isfinite(ds["f1_macro"]).all()
