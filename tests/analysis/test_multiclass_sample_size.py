"""Sample-size planning for K-class metrics (analysis.sample_size with K-class data)."""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import bayescm as bcm
from bayescm.analysis import sample_size
from bayescm.analysis.sample_size.multiclass import multinomial_ppf
from bayescm.stats import hdi

K = 3
SHARES = [0.5, 0.3, 0.2]
RECALL = 0.8
ROWS = np.full((K, K), (1 - RECALL) / (K - 1))
np.fill_diagonal(ROWS, RECALL)
PILOT = bcm.MulticlassConfusionMatrix([[50, 3, 2], [4, 40, 6], [1, 2, 30]],
                                      labels=["cat", "dog", "bird"])


def exact_width(a: float, b: float, prob: float = 0.95) -> float:
    """Width of the HDI of Beta(a, b), a, b > 1: the narrowest interval of mass prob."""
    res = optimize.minimize_scalar(
        lambda t: stats.beta.ppf(t + prob, a, b) - stats.beta.ppf(t, a, b),
        bounds=(0, 1 - prob), method="bounded", options={"xatol": 1e-10})
    return float(res.fun)


def beta_rate_reference(trials: int, a0: float, b0: float, draws: int, target: float,
                        reps: int = 2000):
    r"""Exact E[w] of the Beta(a0 + c, b0 + trials - c) HDI width, c ~ Binomial(trials,
    RECALL), by summing over c; and an independent simulation of the HDI of ``draws``
    Beta draws (the estimator the plan uses) for its bias and the assurance."""
    c = np.arange(trials + 1)
    pmf = stats.binom.pmf(c, trials, RECALL)
    keep = pmf > 1e-12
    widths = np.zeros(trials + 1)
    widths[keep] = [exact_width(a0 + ci, b0 + trials - ci) for ci in c[keep]]
    mean = float(np.sum(pmf * widths))
    sd = float(np.sqrt(np.sum(pmf * widths**2) - mean**2))
    rng = np.random.default_rng(12)
    ci = rng.binomial(trials, RECALL, size=reps)
    lo, hi = hdi(rng.beta((a0 + ci)[:, None], (b0 + trials - ci)[:, None],
                          size=(reps, draws)), 0.95)
    err = (hi - lo) - widths[ci]
    return mean, sd, err, float(np.mean(hi - lo <= target))


@pytest.mark.parametrize("model, metric, label, trials, a0, b0", [
    # multiclass_cells: acc = sum of the K diagonal cells of Dirichlet(4/K^2 + C) over K^2
    # cells (the default: four pseudo-cases), exactly Beta(4/K + correct, 4 (K - 1)/K +
    # wrong); correct ~ Binomial(N, 0.8) because every class has recall 0.8 (whatever the
    # class sizes)
    ("multiclass_cells", "acc", None, 150, 4 / K, 4 * (K - 1) / K),
    # multiclass_rows: bird's recall is Beta(2/K + C_kk, 2 (K - 1)/K + n_k - C_kk) (the
    # default row: two pseudo-cases) with its n_k = 0.2 * 150 = 30 cases fixed by the
    # test-set shares
    ("multiclass_rows", "tpr", 2, 30, 2 / K, 2 * (K - 1) / K),
])
def test_expected_width_and_assurance_match_the_exact_beta_posterior(model, metric, label,
                                                                      trials, a0, b0):
    n, draws, sims, target = 150, 1000, 1000, 0.13 if metric == "acc" else 0.27
    plan = sample_size(target, metric=metric, label=label, prevalence=SHARES, rows=ROWS,
                       model=getattr(bcm.models, model), n_grid=[n], n_sims=sims,
                       draws=draws, random_seed=1)
    row = plan.curve.loc[n]
    mean, sd, err, share = beta_rate_reference(trials, a0, b0, draws, target)
    # each simulated width = exact width of its study + the draws-HDI estimator's error
    # (bias err.mean(), a few thousandths too narrow; spread err.std()): the plan's mean
    # width has s.e. sqrt((sd^2 + err.std()^2) / sims), the bias estimate err.std() /
    # sqrt(len(err)); 4 s.e. of the two
    se = np.sqrt((sd**2 + err.var()) / sims + err.var() / err.size)
    assert row["mean_width"] == pytest.approx(mean + err.mean(), abs=4 * se)
    assert abs(err.mean()) > se  # the estimator's bias is visible: the check has teeth
    # assurance: two binomial shares (plan and independent simulation), 4 s.e.
    a_se = np.sqrt(share * (1 - share) * (1 / sims + 1 / err.size))
    assert 0.2 < share < 0.8 and row["assurance"] == pytest.approx(share, abs=4 * a_se)


def test_two_classes_agree_with_the_binary_plan():
    # K = 2 rows with its default priors (Dirichlet(1, 1): Beta(1, 1)) is the three-Beta
    # model: pilot posterior, binomial
    # class counts and the analysis of each study are the same in distribution
    cm = bcm.ConfusionMatrix(tp=40, fn=10, fp=8, tn=42)
    mc = bcm.MulticlassConfusionMatrix.from_binary(cm)
    kw = {"n_grid": [60, 120], "n_sims": 400, "draws": 300, "assurance": 0.99}
    for metric, label, target in (("mcc", None, 0.3), ("f1", 1, 0.2)):
        binary = sample_size(target, metric=metric, pilot=cm, random_seed=2, **kw).curve
        multi = sample_size(target, metric=metric, label=label, pilot=mc, random_seed=3,
                            **kw).curve
        for n in kw["n_grid"]:
            b, m = binary.loc[n], multi.loc[n]
            # independent simulations: the difference of two binomial shares
            assert abs(b["assurance"] - m["assurance"]) <= 4 * np.hypot(
                b["assurance_se"], m["assurance_se"]) + 1e-12
            # median of S widths: s.e. ~ 1.2533 sigma / sqrt(S), sigma from the spread
            # between the median and the 99% quantile (2.326 sigma for a normal)
            sigma = (b["width_quantile"] - b["median_width"]) / 2.326
            se = 1.2533 * sigma / np.sqrt(kw["n_sims"])
            assert m["median_width"] == pytest.approx(b["median_width"], abs=4 * np.sqrt(2) * se)


def test_widths_shrink_with_n_and_every_class_needs_more_than_one():
    grid = [50, 100, 200, 400, 800]
    kw = {"pilot": PILOT, "n_grid": grid, "n_sims": 100, "draws": 200, "random_seed": 4}
    macro = sample_size(0.1, metric="f1_macro", **kw)
    w = macro.curve.loc[grid, "mean_width"].to_numpy()
    assert (np.diff(w) < 0).all()
    # width ~ 1 / sqrt(N): quadrupling N halves it (within 10%)
    assert w[0] / w[2] == pytest.approx(2, rel=0.1) and w[2] / w[4] == pytest.approx(2, rel=0.1)
    a = macro.curve.loc[grid, "assurance"].to_numpy()
    assert a[0] == 0 and a[-1] == 1 and macro.reached
    assert macro.curve.loc[macro.n_required, "assurance"] >= 0.95
    assert macro.curve.loc[macro.n_required - 1, "assurance"] < 0.95
    # the widest class is at least as wide as bird's, study by study (same studies)
    every = sample_size(0.15, metric="tpr", **kw)
    bird = sample_size(0.15, metric="tpr", label="bird", **kw)
    assert (every.curve.loc[grid, "assurance"] <= bird.curve.loc[grid, "assurance"]).all()
    assert every.n_required >= bird.n_required
    assert bird.label == "bird" and "of class 'bird'" in repr(bird)
    assert "widest class" in every.note
    assert "mean_width" in every.to_frame() and "<table" in every._repr_html_()


def test_truth_by_label_equals_truth_by_position():
    labels = ["cat", "dog", "bird"]
    frame = pd.DataFrame(ROWS, index=labels, columns=labels)
    kw = {"metric": "ppv", "label": "bird", "n_grid": [40, 80], "n_sims": 20, "draws": 50,
          "random_seed": 5}
    plan = sample_size(0.3, prevalence=SHARES, rows=ROWS, **{**kw, "label": 2})
    shuffled = frame.loc[:, ["bird", "cat", "dog"]]  # columns matched to rows by label
    by_label = sample_size(0.3, prevalence=dict(zip(labels, SHARES, strict=True)),
                           rows=shuffled, **kw)
    # the same truth, columns in another order: the same studies
    pd.testing.assert_frame_equal(plan.curve, by_label.curve)
    assert "bird: 0.2" in by_label.generating
    with pytest.raises(ValueError, match="columns"):
        sample_size(0.3, prevalence=SHARES, rows=frame.rename(columns={"cat": "lion"}), **kw)


def test_pilot_fit_and_multinomial_by_inverse_cdf():
    idata = bcm.fit(bcm.models.multiclass_cells(PILOT), sampler="exact", draws=200, chains=2,
                    random_seed=1, metrics=["acc"], predictive=False, prior=False)
    plan = sample_size(0.1, metric="kappa", pilot=idata, n_grid=[100, 400], n_sims=50,
                       draws=100, random_seed=1)
    w = plan.curve["mean_width"]
    assert "pilot fit" in plan.generating and w[100] / w[400] == pytest.approx(2, rel=0.15)
    # the inverse-CDF multinomial has the multinomial's mean and covariance
    rng = np.random.default_rng(0)
    p = np.array([0.5, 0.2, 0.3])
    x = multinomial_ppf(40, np.broadcast_to(p, (20_000, 3)), rng.random((20_000, 2)))
    assert (x.sum(axis=1) == 40).all()
    cov = 40 * (np.diag(p) - np.outer(p, p))
    se = np.sqrt(np.diag(cov) / x.shape[0])
    assert np.all(np.abs(x.mean(axis=0) - 40 * p) < 4 * se)
    np.testing.assert_allclose(np.cov(x.T), cov, rtol=0.05, atol=0.1)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"rows": ROWS}, ValueError, "prevalence"),
    ({"rows": ROWS * 2, "prevalence": SHARES}, ValueError, "summing to 1"),
    ({"rows": [[0.8, 0.2], [0.3, 0.7]], "prevalence": SHARES}, ValueError, "2 shares"),
    ({"rows": ROWS, "prevalence": [0.5, 0.6, 0.2]}, ValueError, "sum to 1"),
    ({"pilot": PILOT, "metric": "kappa", "label": "cat"}, ValueError, "one number per table"),
    ({"pilot": PILOT, "metric": "tpr", "label": "fish"}, ValueError, "not one of the classes"),
    ({"pilot": PILOT, "generating": (0.8, 10)}, ValueError, "K-class plan"),
    ({"pilot": PILOT, "rows": ROWS, "prevalence": SHARES}, ValueError, "not both"),
    ({"pilot": PILOT, "model": bcm.models.three_beta}, ValueError, "no exact posterior"),
    ({"pilot": PILOT, "model": len}, TypeError, "K-class builder"),
    ({"pilot": bcm.MulticlassConfusionMatrix(np.ones((2, 3, 3), int))}, ValueError,
     "pass one"),
    ({"pilot": PILOT, "metric": "auc"}, KeyError, "Unknown multiclass metric"),
    ({"metric": "f1_macro"}, ValueError, "K-class metric"),
    ({"label": "cat"}, ValueError, "label= belongs to K-class plans"),
    ({"prevalence": SHARES}, ValueError, "for K classes"),
])
def test_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        sample_size(0.1, n_grid=[10], n_sims=10, draws=20, **kwargs)
