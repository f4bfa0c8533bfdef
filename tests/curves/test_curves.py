"""ROC and precision-recall curves against scikit-learn, exact Beta HDIs and bootstraps."""

import matplotlib
import numpy as np
import pytest
from scipy import optimize, stats

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from sklearn.metrics import average_precision_score, roc_auc_score

from bayescm import curves
from bayescm.curves import sweep

TRUE_AUC = stats.norm.cdf(1 / np.sqrt(2))  # binormal N(1, 1) vs N(0, 1): 0.7602


def binormal(seed, n_pos=200, n_neg=200):
    rng = np.random.default_rng(seed)
    y = np.repeat([1, 0], [n_pos, n_neg])
    return rng.normal(y, 1.0), y


@pytest.fixture(scope="module")
def data():
    return binormal(2024)


@pytest.fixture(scope="module")
def roc(data):
    return curves.roc(*data, random_seed=1)


def trapezoid(y, x):
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2))


def beta_hdi(a, b, prob):
    """HDI bounds of Beta(a, b) by direct minimisation of the width (independent code)."""
    d = stats.beta(a, b)
    res = optimize.minimize_scalar(lambda p: d.ppf(p + prob) - d.ppf(p), bounds=(0, 1 - prob),
                                   method="bounded", options={"xatol": 1e-12})
    return d.ppf(res.x), d.ppf(res.x + prob)


def test_auc_posterior_against_sklearn_and_the_classical_bootstrap(data, roc):
    scores, y = data
    empirical = roc_auc_score(y, scores)
    assert roc.auc_point == pytest.approx(empirical, abs=1e-12)
    # the default thresholds give the whole curve: its trapezoidal area is the same number
    assert trapezoid(roc.tpr, roc.fpr) == pytest.approx(empirical, abs=1e-12)
    assert (roc.fpr[0], roc.tpr[0], roc.fpr[-1], roc.tpr[-1]) == (0, 0, 1, 1)
    assert np.all(np.diff(roc.thresholds) < 0)
    # the bootstrap weights have mean 1/n, so the posterior mean is the empirical AUC
    # up to Monte Carlo error (sd / sqrt(draws))
    assert abs(roc.auc_mean - empirical) < 2 * roc.auc_sd
    assert abs(roc.auc_mean - empirical) < 4 * roc.auc_sd / np.sqrt(roc.auc.size)
    lo, hi = roc.auc_hdi
    assert lo < empirical < hi and roc.auc.dims == ("chain", "draw") and roc.auc.size == 4000
    # classical bootstrap of roc_auc_score, stratified by class
    rng = np.random.default_rng(7)
    pos, neg = scores[y == 1], scores[y == 0]
    labels = np.repeat([1, 0], [pos.size, neg.size])
    boot = [roc_auc_score(labels, np.concatenate([rng.choice(pos, pos.size),
                                                  rng.choice(neg, neg.size)]))
            for _ in range(1000)]
    # Monte Carlo error of both sds is about 2%; the methods agree to O(1/n)
    assert roc.auc_sd == pytest.approx(np.std(boot, ddof=1), rel=0.15)


def test_each_draw_is_the_area_of_a_weighted_empirical_curve():
    # ties and zero weights included: one draw's AUC is roc_auc_score with its weights
    # (the trapezoid under the weighted ROC), its AP is average_precision_score
    rng = np.random.default_rng(3)
    y = np.repeat([1, 0], [40, 60])
    scores = np.round(rng.normal(y, 1.0), 1)
    pos, neg = np.sort(scores[y == 1]), np.sort(scores[y == 0])
    w = rng.exponential(size=(3, 40)) * (rng.random((3, 40)) > 0.2)
    v = rng.exponential(size=(3, 60)) * (rng.random((3, 60)) > 0.2)
    pi = np.array([0.2, 0.4, 0.7])
    auc, ap = sweep._areas(pos, neg, w, v, pi)
    for k in range(3):
        weight = np.concatenate([pi[k] * w[k] / w[k].sum(), (1 - pi[k]) * v[k] / v[k].sum()])
        s = np.concatenate([pos, neg])
        assert auc[k] == pytest.approx(roc_auc_score(y, s, sample_weight=weight), abs=1e-12)
        assert ap[k] == pytest.approx(average_precision_score(y, s, sample_weight=weight),
                                      abs=1e-12)


def test_auc_hdi_covers_the_true_auc():
    hits, n = 0, 100
    for seed in range(n):
        scores, y = binormal(10_000 + seed)
        # one threshold keeps the bands cheap; the AUC posterior uses every case anyway
        curve = curves.roc(scores, y, thresholds=[0.5], draws=1000, random_seed=seed)
        lo, hi = curve.auc_hdi
        hits += lo <= TRUE_AUC <= hi
    assert stats.binomtest(hits, n, 0.95).pvalue > 0.001, hits


def test_bands_are_exact_beta_hdis(data, roc):
    a, b = roc.priors["tpr"].params
    assert roc.priors["fpr"].params == (a, b)
    for i in (50, 250):  # two interior thresholds
        for key, (hit, miss) in (("tpr", ("tp", "fn")), ("fpr", ("fp", "tn"))):
            alpha, beta = a + getattr(roc, hit)[i], b + getattr(roc, miss)[i]
            lo, hi = roc.band(key)
            ref_lo, ref_hi = beta_hdi(alpha, beta, 0.95)
            assert lo[i] == pytest.approx(ref_lo, abs=1e-6)
            assert hi[i] == pytest.approx(ref_hi, abs=1e-6)
            d = stats.beta(alpha, beta)
            assert d.cdf(hi[i]) - d.cdf(lo[i]) == pytest.approx(0.95, abs=1e-9)
            assert d.logpdf(lo[i]) == pytest.approx(d.logpdf(hi[i]), abs=1e-6)
    # at threshold +inf TPR ~ Beta(1, 201): decreasing density, the HDI starts at 0
    lo, hi = roc.band("tpr")
    assert lo[0] == 0 and hi[0] == pytest.approx(stats.beta(1, 201).ppf(0.95), rel=1e-10)
    # with a flat prior the HDI holds the mode, which is the observed rate
    for key in ("tpr", "fpr"):
        lo, hi = roc.band(key)
        point = roc.rate(key)
        assert np.all((lo <= point + 1e-12) & (point <= hi + 1e-12))
        assert np.all((lo >= 0) & (hi <= 1))
    # fewer cases, wider bands
    scores, y = data
    keep = np.r_[0:20, 200:220]
    small = curves.roc(scores[keep], y[keep], thresholds=[0.5], draws=100, random_seed=1)
    large = curves.roc(scores, y, thresholds=[0.5], draws=100, random_seed=1)
    for key in ("tpr", "fpr"):
        width = [np.subtract(*c.band(key)[::-1])[0] for c in (small, large)]
        assert width[0] > 2 * width[1]


def test_tpr_band_agrees_with_the_bootstrap(data):
    scores, y = data
    curve = curves.roc(scores, y, thresholds=[0.5], draws=100)
    alpha, beta = 1 + curve.tp[0], 1 + curve.fn[0]
    rng = np.random.default_rng(11)
    pos = scores[y == 1]
    boot = (rng.choice(pos, (4000, pos.size)) >= 0.5).mean(axis=1)
    assert stats.beta(alpha, beta).std() == pytest.approx(boot.std(ddof=1), rel=0.15)


def test_the_area_between_band_corners_is_not_the_auc_posterior(roc):
    # band edges are pointwise, no draw follows them: the curves through the band
    # corners (Morais's reading of an AUROC interval) enclose far more than the HDI
    lo, hi = roc.auc_hdi
    (tpr_lo, tpr_hi), (fpr_lo, fpr_hi) = roc.band("tpr"), roc.band("fpr")
    edge_lo, edge_hi = trapezoid(tpr_lo, fpr_hi), trapezoid(tpr_hi, fpr_lo)
    assert edge_lo < lo < hi < edge_hi
    assert edge_hi - edge_lo > 1.5 * (hi - lo)


def test_precision_recall(data, roc):
    scores, y = data
    pr = curves.precision_recall(scores, y, random_seed=1)
    empirical = average_precision_score(y, scores)
    assert pr.kind == "pr" and pr.auc.name == "average_precision"
    assert pr.auc_point == pytest.approx(empirical, abs=1e-12)
    assert abs(pr.auc_mean - empirical) < 2 * pr.auc_sd
    lo, hi = pr.auc_hdi
    assert 0 < lo < empirical < hi < 1
    np.testing.assert_array_equal(pr.recall, roc.tpr)
    np.testing.assert_array_equal(pr.band("recall")[0], roc.band("tpr")[0])
    assert np.isnan(pr.precision[0]) and pr.precision[-1] == pytest.approx(0.5)
    for key in ("recall", "precision"):
        b_lo, b_hi = pr.band(key)
        assert np.all((0 <= b_lo) & (b_lo <= b_hi) & (b_hi <= 1))
        point = pr.rate(key)
        ok = np.isfinite(point)
        assert np.all((b_lo[ok] <= point[ok] + 1e-12) & (point[ok] <= b_hi[ok] + 1e-12))
    a, b = pr.priors["ppv"].params
    i = 30
    ref = beta_hdi(a + pr.tp[i], b + pr.fp[i], 0.95)
    np.testing.assert_allclose([pr.band("ppv")[0][i], pr.band("ppv")[1][i]], ref, atol=1e-6)
    with pytest.raises(KeyError, match="bands for"):
        pr.band("fpr")


def test_plot_draws_curve_band_and_reference(roc, data):
    ax = roc.plot(label="model")
    assert len(ax.lines) == 2 and len(ax.collections) == 2
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith("model: AUC") and "95% HDI" in t for t in texts)
    pr = curves.precision_recall(*data, draws=200, random_seed=1)
    ax2 = pr.plot(color="C3")
    assert len(ax2.lines) == 2 and len(ax2.collections) == 2
    assert np.isfinite(ax2.lines[0].get_ydata()).all()  # precision carried back to recall 0
    assert any(t.get_text().startswith("AP ") for t in ax2.get_legend().get_texts())
    same = roc.plot(ax=ax, band=False, reference=False)
    assert same is ax and len(ax.lines) == 3
    plt.close("all")


def test_to_frame_repr_and_options(roc):
    frame = roc.to_frame()
    assert list(frame.columns) == ["tp", "fp", "fn", "tn", "fpr", "fpr_lower", "fpr_upper",
                                   "tpr", "tpr_lower", "tpr_upper"]
    assert frame.index.name == "threshold" and len(frame) == roc.thresholds.size == 401
    assert (frame[["tp", "fn"]].sum(axis=1) == 200).all()
    text = repr(roc)
    assert "ROC curve of 400 cases (200 positive, 200 negative)" in text
    assert "AUC" in text and "Beta(1 + tp, 1 + fn)" in text
    with pytest.raises(ValueError, match="read-only"):
        roc.tp[0] = 5
    # string labels, user thresholds, reproducible seeds
    y = np.array(["ill", "well", "ill", "well", "ill", "well"])
    s = [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]
    c1 = curves.roc(s, y, positive="ill", thresholds=[0.5, 0.85, np.inf], draws=500,
                    random_seed=5)
    c2 = curves.roc(s, y, positive="ill", thresholds=[0.5, 0.85, np.inf], draws=500,
                    random_seed=5)
    np.testing.assert_array_equal(c1.thresholds, [np.inf, 0.85, 0.5])
    np.testing.assert_array_equal(c1.tp, [0, 1, 2])
    np.testing.assert_array_equal(c1.fp, [0, 0, 1])
    np.testing.assert_array_equal(c1.auc.values, c2.auc.values)
    assert c1.auc_point == pytest.approx(roc_auc_score(y == "ill", s))
    jeffreys = curves.roc(s, y, positive="ill", hdi_prob=0.9, draws=500,
                          priors={"tpr": (0.5, 0.5), "fpr": (0.5, 0.5)})
    assert "Beta(0.5 + tp, 0.5 + fn)" in repr(jeffreys) and "90% HDI" in repr(jeffreys)


def test_bad_input_says_what_to_do():
    s, y = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    with pytest.raises(ValueError, match="needs both classes"):
        curves.roc(s, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="only negative"):
        curves.roc(s, ["a", "a", "a", "a"], positive="b")
    with pytest.raises(ValueError, match="one label per score"):
        curves.roc(s, y[:3])
    with pytest.raises(ValueError, match="NaN or infinite"):
        curves.roc([0.1, np.nan, 0.3, 0.5], y)
    with pytest.raises(ValueError, match="at most two labels"):
        curves.precision_recall(s, [0, 1, 2, 1])
    with pytest.raises(ValueError, match="positive="):
        curves.roc(s, ["a", "b", "a", "b"])
    with pytest.raises(ValueError, match="missing labels"):
        curves.roc(s, np.array([0, 1, None, 1], dtype=object))
    with pytest.raises(ValueError, match="numbers"):
        curves.roc(["x", "y", "z", "w"], y)
    with pytest.raises(ValueError, match="1-d"):
        curves.roc(np.ones((2, 2)), y)
    with pytest.raises(ValueError, match="hdi_prob"):
        curves.roc(s, y, hdi_prob=95)
    with pytest.raises(ValueError, match="draws"):
        curves.roc(s, y, draws=10)
    with pytest.raises(ValueError, match="prior"):
        curves.roc(s, y, priors={"fpr": (0, 1)})
    with pytest.raises(ValueError, match="thresholds"):
        curves.roc(s, y, thresholds=[0.5, np.nan])


def test_several_curves_on_one_axes_share_one_legend_entry_per_kind_of_line():
    """Three ROC curves on one Axes gave 12 legend entries (curve, band, bars and the
    chance line, each three times): now each curve once, band, bars and chance once."""
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(3)
    y = np.repeat([1, 0], 60)
    _, ax = plt.subplots()
    for i in range(3):
        curves.roc(rng.normal(y * (i + 1) / 2, 1.0), y, draws=200, random_seed=i).plot(
            ax=ax, label=f"model {i}")
    labels = ax.get_legend_handles_labels()[1]
    plt.close("all")
    assert len(labels) == 6
    assert sum(label.startswith("model") for label in labels) == 3
    assert labels.count("chance") == 1
