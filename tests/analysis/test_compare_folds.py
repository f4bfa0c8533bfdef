"""compare_folds (issue 28): the correlated t-test on per-fold confusion matrices, side by
side with baycomp's two_on_single, the posterior-propagating mode against an independent
mixture, K-class folds, inputs, errors, and the null calibration (slow)."""

import baycomp
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.analysis import compare_folds


def cv_folds(seed, acc_a, acc_b, *, runs=1, k=10, n=100, fold_sd=0.0):
    """runs × k folds of two algorithms with fold-to-fold variation shared by both."""
    rng = np.random.default_rng(seed)
    m = runs * k
    shift = rng.normal(0, fold_sd, m)

    def one(acc):
        p = np.clip(acc + shift, 0.01, 0.99)
        pos = rng.binomial(n, 0.5, m)
        tp, tn = rng.binomial(pos, p), rng.binomial(n - pos, p)
        return bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=n - pos - tn, tn=tn,
                                   classifier=[f"r{i // k}f{i % k}" for i in range(m)])

    return one(acc_a), one(acc_b)


def acc(cms):
    return (cms.cell("tp") + cms.cell("tn")) / cms.n


@pytest.mark.parametrize(("seed", "runs", "rope", "gap"),
                         [(0, 1, 0.01, 0.02), (1, 3, 0.01, 0.0), (2, 2, 0.02, -0.03),
                          (3, 1, 0.0, 0.01)])
def test_plug_in_reproduces_baycomp_two_on_single(seed, runs, rope, gap):
    a, b = cv_folds(seed, 0.8 + gap, 0.8, runs=runs, fold_sd=0.02)
    res = compare_folds(a, b, "acc", rope=rope, runs=runs, plug_in=True)
    expected = baycomp.two_on_single(acc(a), acc(b), rope=rope, runs=runs)
    if rope == 0:  # baycomp returns (left, right) without a rope
        expected = (expected[0], 0.0, expected[1])
    # both are exact t CDFs: the brief's tolerance 0.01 is far wider than the agreement
    np.testing.assert_allclose((res.p_a_better, res.p_rope, res.p_b_better), expected,
                               atol=0.01)
    np.testing.assert_allclose((res.p_a_better, res.p_rope, res.p_b_better), expected,
                               atol=1e-9)
    # baycomp's posterior: same t (location and scale of its Posterior)
    post = baycomp.CorrelatedTTest(acc(a), acc(b), rope=rope, runs=runs)
    assert res.loc[0] == pytest.approx(-post.mean)
    assert res.scale[0] ** 2 == pytest.approx(post.var)
    assert res.df == post.df == len(acc(a)) - 1
    # the draws follow that t: mean within 4 MC standard errors (sd / sqrt(draws))
    assert abs(res.difference.mean() - res.loc[0]) < 4 * res.difference.std() / np.sqrt(4000)


def test_plug_in_any_metric_and_direction():
    """MCC is handed to baycomp as scores; for fpr (lower is better) 'a better' is baycomp's
    right-hand side when A is x."""
    a, b = cv_folds(5, 0.85, 0.8, fold_sd=0.02)
    mcc = compare_folds(a, b, "mcc", rope=0.01, plug_in=True)
    score = lambda c: bcm.metrics.binary.evaluate("mcc", *(c.cell(x) for x in bcm.CELLS))  # noqa: E731
    np.testing.assert_allclose((mcc.p_a_better, mcc.p_rope, mcc.p_b_better),
                               baycomp.two_on_single(score(a), score(b), rope=0.01), atol=1e-9)
    a, b = cv_folds(5, 0.9, 0.75, n=200)
    fpr = compare_folds(a, b, "fpr", rope=0.01, plug_in=True)
    fa = a.cell("fp") / (a.cell("fp") + a.cell("tn"))
    fb = b.cell("fp") / (b.cell("fp") + b.cell("tn"))
    left, rope, right = baycomp.two_on_single(fa, fb, rope=0.01)
    np.testing.assert_allclose((fpr.p_a_better, fpr.p_rope, fpr.p_b_better), (right, rope, left),
                               atol=1e-9)
    assert fpr.p_a_better > 0.9  # A, 15 points more accurate, has the lower fpr


def test_posterior_mode_is_the_mixture_of_t_posteriors():
    """plug_in=False for tpr, whose fold posteriors are Beta(1 + tp, 1 + fn) exactly: the
    probabilities equal an independent mixture over our own Beta draws within MC error."""
    a, b = cv_folds(7, 0.84, 0.8, k=5, fold_sd=0.02)
    res = compare_folds(a, b, "tpr", rope=0.01, draws=4000, random_seed=3)
    rng = np.random.default_rng(11)
    s = 20000
    ta = rng.beta(1 + a.cell("tp"), 1 + a.cell("fn"), size=(s, 5))
    tb = rng.beta(1 + b.cell("tp"), 1 + b.cell("fn"), size=(s, 5))
    d = ta - tb
    scale = np.sqrt((1 / 5 + 0.2 / 0.8) * d.var(axis=1, ddof=1))
    above = stats.t.sf(0.01, 4, d.mean(axis=1), scale)
    below = stats.t.cdf(-0.01, 4, d.mean(axis=1), scale)
    # the mixture average of S per-draw probabilities: MC sd <= 0.5/sqrt(S) per side, so
    # 4 * 0.5 * sqrt(1/4000 + 1/20000) = 0.035 is a safe bound (the real sd is smaller)
    assert res.p_a_better == pytest.approx(above.mean(), abs=0.035)
    assert res.p_b_better == pytest.approx(below.mean(), abs=0.035)
    assert res.p_a_better + res.p_rope + res.p_b_better == pytest.approx(1)
    # more cautious than the plug-in test (test-set noise counted in the fold draws)
    plug = compare_folds(a, b, "tpr", rope=0.01, plug_in=True)
    assert res.difference.std() > plug.difference.std()
    assert np.sign(res.difference.mean()) == np.sign(plug.difference.mean())


def test_k_class_folds_and_input_forms():
    rng = np.random.default_rng(2)

    def tables(err):
        out = []
        for _ in range(5):
            t = np.diag(rng.binomial(60, 1 - err, 3)).astype(int)
            t[0, 1], t[1, 2], t[2, 0] = 60 - t[0, 0], 60 - t[1, 1], 60 - t[2, 2]
            out.append(t)
        return out

    ta, tb = tables(0.1), tables(0.2)
    mc_a = bcm.MulticlassConfusionMatrix(np.stack(ta), classifier=[f"f{i}" for i in range(5)])
    res = compare_folds(ta, tb, "f1_macro", rope=0.01, draws=2000, random_seed=1)
    again = compare_folds(mc_a, tb, "f1_macro", rope=0.01, draws=2000, random_seed=1)
    assert res.p_a_better == again.p_a_better and res.p_a_better > 0.9
    assert res.metric == "f1_macro"
    # a frame of binary counts, and a list of single matrices, give the batch's answer
    a, b = cv_folds(4, 0.85, 0.8, k=5)
    frame = pd.DataFrame({c: a.cell(c) for c in bcm.CELLS}, index=list(a.classifiers))
    frame.index.name = "classifier"
    singles = [bcm.ConfusionMatrix(**{c: int(a.cell(c)[i]) for c in bcm.CELLS}) for i in range(5)]
    ref = compare_folds(a, b, plug_in=True)
    for form in (frame, singles):
        assert compare_folds(form, b, plug_in=True).p_a_better == pytest.approx(ref.p_a_better)


def test_result_tables_and_plot():
    import matplotlib.pyplot as plt

    a, b = cv_folds(8, 0.85, 0.8, runs=2, k=5)
    res = compare_folds(a, b, "acc", runs=2, plug_in=True, names=("rf", "lr"))
    row = res.summary().loc["acc"]
    assert row["p_rf_better"] == res.p_a_better and row["rho"] == pytest.approx(0.2)
    assert row["hdi_lower"] < row["mean"] < row["hdi_upper"]
    frame = res.to_frame()
    assert list(frame["run"]) == [0] * 5 + [1] * 5 and list(frame["fold"]) == list(range(5)) * 2
    np.testing.assert_allclose(frame["difference"], acc(a) - acc(b))
    ax = res.plot()
    assert ax.get_xlabel() == "acc: rf − lr"
    assert any("P(rf better)" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close("all")


def test_errors_say_what_to_do():
    a, b = cv_folds(0, 0.8, 0.8, k=5)
    with pytest.raises(ValueError, match="rho = 1/k"):
        compare_folds(a, b, runs=5)
    with pytest.raises(ValueError, match="5 folds and cms_b 4"):
        compare_folds(a, bcm.ConfusionMatrix(**{c: b.cell(c)[:4] for c in bcm.CELLS}))
    with pytest.raises(ValueError, match="variance is zero"):
        compare_folds(a, a, plug_in=True)
    with pytest.raises(ValueError, match="f1_macro"):
        compare_folds([np.eye(3, dtype=int) * 5 + 1] * 3, [np.eye(3, dtype=int) * 4 + 1] * 3,
                      "f1")
    with pytest.raises(ValueError, match="Unknown metric"):
        compare_folds(a, b, "nope")
    with pytest.raises(ValueError, match="cannot be 2 runs"):
        compare_folds(a, b, runs=2)
    with pytest.raises(TypeError, match="one confusion matrix per fold"):
        compare_folds("a", b)


@pytest.mark.slow
@pytest.mark.parametrize("plug_in", [True, False])
def test_null_of_equal_algorithms_rarely_declares_a_better(plug_in):
    """Equal algorithms, folds differing by sd 0.03: P(a better) > 0.95 in at most 5% of
    200 data sets (binomial sd of the rate at 0.05: 0.015; allow 0.05 + 2 sd = 0.08)."""
    hits = 0
    for seed in range(200):
        a, b = cv_folds(1000 + seed, 0.8, 0.8, k=10, fold_sd=0.03)
        res = compare_folds(a, b, "acc", rope=0.01, plug_in=plug_in, draws=1000,
                            random_seed=seed)
        hits += res.p_a_better > 0.95
    assert hits / 200 <= 0.08
