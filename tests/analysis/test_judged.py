"""Judge-assisted evaluation (issue 26 item 4): structure, numbers against independent
computations, K = 3, errors, and (slow) calibration against PPI++ (ppi_py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

import bayescm as bcm
from bayescm.data.counts import CountsError
from bayescm.models import IdentifiabilityWarning
from bayescm.models.dawid_skene import default_priors_for
from bayescm.stats import hdi
from tests.conftest import load_script

FAST = {"draws": 500, "tune": 500, "chains": 2}


def _simulate(rng, n_items, prevalence, model_rows, judge_rows):
    """True classes and labels of a model and judges given each class's row of label
    probabilities (conditionally independent raters)."""
    k = len(prevalence)
    z = rng.choice(k, size=n_items, p=prevalence)

    def rate(rows):
        cum = np.cumsum(np.asarray(rows)[z], axis=1)
        return (rng.random(n_items)[:, None] > cum).sum(axis=1)

    return z, rate(model_rows), [rate(rows) for rows in judge_rows]


@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(11)
    z, y_pred, (judge,) = _simulate(rng, 600, [0.6, 0.4], [[0.85, 0.15], [0.25, 0.75]],
                                    [[[0.9, 0.1], [0.15, 0.85]]])
    gold = np.full(600, None, dtype=object)
    gold[:80] = z[:80]
    res = bcm.analysis.judge_assisted(y_pred, {"llm": judge}, gold, random_seed=3,
                                      metrics=("acc", "tpr", "ppv", "f1", "f1_macro"), **FAST)
    return res, y_pred


def test_result_structure_and_the_confusion_matrix_identities(binary):
    res, y_pred = binary
    assert isinstance(res, bcm.analysis.JudgedEvaluation)
    assert (res.model, res.judges, res.labels, res.n_items, res.n_gold) == \
        ("model", ("llm",), (0, 1), 600, 80)
    assert set(res.confusion.data_vars) == {"joint", "counts"}
    for da in (res.joint, res.counts):
        assert da.dims == ("chain", "draw", "actual", "predicted")
        assert da.shape == (2, 500, 2, 2)
    # the joint probabilities are a distribution; their rows are the class prevalence
    np.testing.assert_allclose(res.joint.sum(["actual", "predicted"]), 1.0, atol=1e-12)
    prev = res.idata.posterior["prevalence"].rename({"class": "actual"})
    xr.testing.assert_allclose(res.joint.sum("predicted"), prev.transpose(*prev.dims))
    # expected counts: every item once, each column the model's predictions, exactly
    np.testing.assert_allclose(res.counts.sum(["actual", "predicted"]), 600, rtol=1e-12)
    np.testing.assert_allclose(res.counts.sum("actual").mean(["chain", "draw"]),
                               np.bincount(y_pred, minlength=2), rtol=1e-12)
    np.testing.assert_allclose(res.counts.sum("actual").std(["chain", "draw"]), 0, atol=1e-9)
    # the metrics are the registry's of the model's rater in the fit
    post = res.idata.posterior
    for key in ("acc", "tpr", "ppv", "f1", "f1_macro"):
        xr.testing.assert_allclose(res.metrics[key], post[key].sel(classifier="model",
                                                                   drop=True))
    acc = (res.joint.sel(actual=0, predicted=0) + res.joint.sel(actual=1, predicted=1))
    np.testing.assert_allclose(res.metrics["acc"], acc, rtol=1e-12)


def test_summary_and_frames(binary):
    res, _ = binary
    table = res.summary()
    assert list(table.columns) == ["mean", "sd", "hdi_lower", "hdi_upper", "mcse_mean"]
    assert table.index.names == ["metric", "class"]
    assert table.index.tolist() == [("acc", ""), ("tpr", 0), ("tpr", 1), ("ppv", 0),
                                    ("ppv", 1), ("f1", 0), ("f1", 1), ("f1_macro", "")]
    draws = res.metrics["ppv"].sel({"class": 1}).values.ravel()
    row = table.loc[("ppv", 1)]
    assert row["mean"] == pytest.approx(draws.mean())
    lo, hi = hdi(draws, 0.95)
    assert (row["hdi_lower"], row["hdi_upper"]) == pytest.approx((float(lo), float(hi)))
    assert 0 < row["mcse_mean"] < row["sd"] / 5  # 1,000 draws: ESS above 25
    assert table.attrs["hdi_prob"] == 0.95
    narrow = res.summary(hdi_prob=0.5)
    assert (narrow["hdi_upper"] - narrow["hdi_lower"] < table["hdi_upper"]
            - table["hdi_lower"]).all()
    frame = res.to_frame()
    assert len(frame) == 8 + 4 + 4 and set(frame["quantity"]) == {"metric", "joint", "counts"}
    counts = res.confusion_matrix("counts")
    assert counts.index.name == "actual" and counts.columns.name == "predicted"
    cells = frame[frame["quantity"] == "counts"].set_index(["actual", "predicted"])["mean"]
    assert cells.loc[(1, 0)] == pytest.approx(counts.loc[1, 0])
    assert "Judge-assisted evaluation of 'model'" in repr(res)
    assert "<table" in res._repr_html_()
    with pytest.raises(ValueError, match="kind"):
        res.confusion_matrix("rows")
    with pytest.raises(ValueError, match="stat"):
        res.confusion_matrix("joint", stat="median")


def test_all_gold_posterior_is_the_exact_dirichlet_one():
    """Every item gold: the model's rows and the prevalence have conjugate Dirichlet
    posteriors (the judge drops out), drawn here independently with NumPy; the expected
    counts are the observed confusion matrix at every draw."""
    rng = np.random.default_rng(5)
    n = 1500
    z, y_pred, (judge,) = _simulate(rng, n, [0.3, 0.7], [[0.7, 0.3], [0.12, 0.88]],
                                    [[[0.8, 0.2], [0.2, 0.8]]])
    res = bcm.analysis.judge_assisted(y_pred, {"j": judge}, z, random_seed=7,
                                      metrics=("acc", "ppv"), **FAST)
    observed = np.zeros((2, 2))
    np.add.at(observed, (z, y_pred), 1)
    np.testing.assert_allclose(res.counts.values, np.broadcast_to(observed, res.counts.shape))
    priors = default_priors_for(2)
    alpha = np.asarray(priors["prevalence"].alpha, float)
    beta = np.asarray(priors["confusion"].alpha, float)
    exact = np.random.default_rng(0)
    m = 400_000
    prev = exact.dirichlet(alpha + observed.sum(axis=1), size=m)
    rows = np.stack([exact.dirichlet(beta[a] + observed[a], size=m) for a in range(2)], 1)
    joint = prev[:, :, None] * rows
    acc = joint[:, 0, 0] + joint[:, 1, 1]
    ppv1 = joint[:, 1, 1] / (joint[:, 0, 1] + joint[:, 1, 1])
    table = res.summary()
    # tolerance: 4 MCSE of the NUTS mean (the exact draws' own error is 100x smaller)
    for key, draws in (("acc", acc), (("ppv"), ppv1)):
        row = table.loc[(key, "" if key == "acc" else 1)]
        assert abs(row["mean"] - draws.mean()) < 4 * row["mcse_mean"]
        # sd of 1,000 NUTS draws (ESS > 300): relative error of the sd below 4/sqrt(2*300)
        assert row["sd"] == pytest.approx(draws.std(), rel=0.17)
    # and the posterior accuracy concentrates at the gold accuracy
    assert abs(table.loc[("acc", ""), "mean"] - np.mean(z == y_pred)) < 0.005


def test_three_classes_and_two_judges():
    rng = np.random.default_rng(8)
    prevalence = [0.5, 0.3, 0.2]
    model_rows = [[0.8, 0.1, 0.1], [0.15, 0.7, 0.15], [0.1, 0.2, 0.7]]
    judge_rows = [[[0.85, 0.1, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]]] * 2
    z, y_pred, judges = _simulate(rng, 400, prevalence, model_rows, judge_rows)
    labels = np.array(["neg", "neu", "pos"])
    gold = {i: labels[z[i]] for i in range(30)}
    res = bcm.analysis.judge_assisted(labels[y_pred], {"a": labels[judges[0]],
                                                       "b": labels[judges[1]]}, gold,
                                      random_seed=2, **FAST)
    assert res.labels == ("neg", "neu", "pos") and res.judges == ("a", "b")
    assert res.counts.shape[-2:] == (3, 3)
    np.testing.assert_allclose(res.counts.sum("actual").mean(["chain", "draw"]),
                               np.bincount(y_pred, minlength=3), rtol=1e-12)
    table = res.summary()
    assert table.loc["tpr"].index.tolist() == ["neg", "neu", "pos"]
    true_acc = float(np.sum(np.asarray(prevalence) * np.diag(model_rows)))  # 0.72
    acc = table.loc[("acc", "")]
    # a 4-sd check: fails with probability ~1e-4 for a calibrated posterior
    assert abs(acc["mean"] - true_acc) < 4 * acc["sd"]
    assert acc["sd"] < 0.05


def test_no_gold_and_one_judge_warns_in_plain_words():
    rng = np.random.default_rng(1)
    _, y_pred, (judge,) = _simulate(rng, 200, [0.5, 0.5], [[0.8, 0.2], [0.2, 0.8]],
                                    [[[0.85, 0.15], [0.15, 0.85]]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bcm.analysis.judge_assisted(y_pred, judge, draws=100, tune=100, chains=1,
                                    random_seed=1)
    ident = [w for w in caught if issubclass(w.category, IdentifiabilityWarning)]
    assert len(ident) == 1
    assert "no gold items and only 2 raters" in str(ident[0].message)
    assert "not identified" in str(ident[0].message)
    assert ident[0].filename == __file__  # points at the caller's line


def test_a_chain_in_the_mirror_image_is_refitted_with_the_next_seed(monkeypatch):
    """With gold items the labelling is known: a fit whose chain sits in the mirror-image
    mode (LabelSwitchingWarning) is repeated with the next seed; only the kept fit's
    warnings reach the user."""
    import bayescm.inference as inference
    from bayescm.models.dawid_skene import LabelSwitchingWarning

    real, seeds = inference.fit, []

    def flaky(model, **kwargs):
        seeds.append(kwargs["random_seed"])
        if len(seeds) == 1:
            warnings.warn("a chain in the mirror image", LabelSwitchingWarning, stacklevel=2)
        return real(model, **kwargs)

    monkeypatch.setattr(inference, "fit", flaky)
    rng = np.random.default_rng(4)
    z, y_pred, (judge,) = _simulate(rng, 300, [0.5, 0.5], [[0.8, 0.2], [0.2, 0.8]],
                                    [[[0.85, 0.15], [0.15, 0.85]]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bcm.analysis.judge_assisted(y_pred, judge, dict(enumerate(z[:40])),
                                          random_seed=10, **FAST)
    assert seeds == [10, 11]
    assert not [w for w in caught if issubclass(w.category, LabelSwitchingWarning)]
    assert res.idata.posterior.sizes["draw"] == 500


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"judges": {"j": [0, 1, 1]}}, CountsError, "3 labels for 4 items"),
    ({"judges": {"j": [0, 1, 2, 1]}, "labels": [0, 1]}, CountsError, "not among the labels"),
    ({"judges": {"j": [0, 1, 1, 0]}, "gold": [0, 1]}, CountsError, "2 labels for 4 items"),
    ({"judges": {"j": [0, 1, 1, 0]}, "metrics": ("acc", "nonsense")}, KeyError, "nonsense"),
    ({"judges": {"j": [0, 1, 1, 0]}, "hdi_prob": 95}, ValueError, "hdi_prob"),
])
def test_bad_inputs_fail_before_sampling(kwargs, error, match):
    gold = kwargs.pop("gold", None)
    with pytest.raises(error, match=match):
        bcm.analysis.judge_assisted([0, 1, 0, 1], kwargs.pop("judges"), gold, **kwargs)


@pytest.mark.slow
def test_calibration_against_ppi_plus_plus():
    """A reduced ``benchmarks/bench_judged_calibration.py``: R replications of 10,000
    judged items at n = 20 and n = 100 gold items.  Coverage of a 95% interval estimated
    from R replications has binomial sd sqrt(0.95 * 0.05 / R); a calibrated interval
    falls below 0.95 - 3 sd with probability ~0.001, so that is the bound asserted for
    bayescm's accuracy, PPV and F1 HDIs.  The width ratio is the issue's target at
    n = 100 (PPI++ from ppi_py on the same replications)."""
    bench = load_script("benchmarks/bench_judged_calibration.py", "bayescm_bench_judged")
    reps = 100
    bound = 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps)  # 0.885
    for n in (20, 100):
        tallies = bench.run(n, reps, seed=99)
        for key in ("bayescm_acc", "bayescm_ppv", "bayescm_f1"):
            assert tallies[key].coverage >= bound, (n, key, tallies[key].coverage)
        if n >= 100:
            assert tallies["bayescm_acc"].width <= 1.05 * tallies["ppi_acc"].width
