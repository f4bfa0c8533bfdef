"""Paired comparison of two classifiers on one test set (issue 12 item 5): the K-class
joint-outcome model against brute force and closed forms, its errors, and the
calibration of its intervals when the two classifiers' errors are correlated."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import confusion_matrix

import bayescm as bcm
from bayescm.analysis import compare_paired, paired
from bayescm.stats import hdi

# -- a K = 3 test set with string labels ----------------------------------------------------


def three_class(n=240, seed=3):
    """A errs on 15% of cases (to the next class), B on A's errors and 10% more."""
    rng = np.random.default_rng(seed)
    classes = np.array(["a", "b", "c"])
    y = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    a = np.where(rng.random(n) < 0.15, (y + 1) % 3, y)
    b = np.where(rng.random(n) < 0.10, (y + 2) % 3, a)
    return classes[y], classes[a], classes[b]


def discordant(y, a, b):
    """n10 (A right, B wrong) and n01 (A wrong, B right), by hand."""
    ra, rb = np.asarray(a) == np.asarray(y), np.asarray(b) == np.asarray(y)
    return int(np.sum(ra & ~rb)), int(np.sum(~ra & rb))


def test_paired_table_margins_are_the_confusion_matrices():
    y, a, b = three_class()
    t = bcm.analysis.paired_table(y, a, b)
    assert t.dims == ("actual", "predicted_a", "predicted_b") and int(t.sum()) == y.size
    order = ["a", "b", "c"]
    np.testing.assert_array_equal(t.sum("predicted_b"), confusion_matrix(y, a, labels=order))
    np.testing.assert_array_equal(t.sum("predicted_a"), confusion_matrix(y, b, labels=order))
    # labels= fixes the order and keeps an unseen class (zeros)
    t4 = bcm.analysis.paired_table(y, a, b, labels=["c", "d", "a", "b"])
    assert list(t4["actual"].values) == ["c", "d", "a", "b"]
    assert int(t4.sel(actual="d").sum()) == 0
    assert int(t4.sel(actual="c", predicted_a="a", predicted_b="a")) == \
        int(np.sum((y == "c") & (a == "a") & (b == "a")))


def accuracy_difference_moments(n10, n01, n, k, total):
    """Exact mean, sd and P(> 0) of acc_A - acc_B = p10 - p01 under the posterior with
    ``total`` pseudo-cases spread evenly over the K^3 cells.

    Aggregating a Dirichlet sums its concentrations: (p10, p01, rest) ~ Dirichlet(a10,
    a01, s - a10 - a01) with a10 = n10 + total (K - 1) / K^2 (the K (K - 1) cells where
    A is right and B wrong), and p10 / (p10 + p01) ~ Beta(a10, a01), so
    P(p10 > p01) = P(Beta(a10, a01) > 1/2)."""
    prior = total * (k - 1) / k**2
    a10, a01, s = n10 + prior, n01 + prior, n + total
    mean = (a10 - a01) / s
    var = (a10 * (s - a10) + a01 * (s - a01) + 2 * a10 * a01) / (s**2 * (s + 1))
    return mean, np.sqrt(var), float(stats.beta(a10, a01).sf(0.5))


@pytest.mark.parametrize(("k", "n", "prior_counts"), [(3, 240, None), (10, 200, None),
                                                       (10, 200, 1000.0), (4, 150, 0.5)])
def test_accuracy_difference_matches_its_closed_form(k, n, prior_counts):
    """The difference of accuracies depends only on the discordant cells: its mean, sd and
    P(A better) are closed forms of (n10, n01, N, prior weight).  With D i.i.d. draws
    (20,000; 8,000 at K = 10, where a draw is 1,000 cells) the mean is within 4 standard
    errors (sd / sqrt(D)), the sd within 4 standard errors of a sample sd
    (sd / sqrt(2 D), near-normal draws), P within 4 binomial SEs.
    The flat Dirichlet(1) on every cell (prior_counts = 1,000 at K = 10) shrinks the
    difference by N / (N + K^3): the check that the default does not."""
    rng = np.random.default_rng(k)
    y = rng.integers(0, k, n)
    hard = rng.random(n) < 0.2
    a = np.where(hard | (rng.random(n) < 0.05), (y + 1) % k, y)
    b = np.where(hard | (rng.random(n) < 0.12), (y + 1 + (k > 3)) % k, y)
    draws = 8000 if k == 10 else 20_000
    res = compare_paired(y, a, b, "acc", prior_counts=prior_counts, draws=draws,
                         random_seed=2)
    total = k if prior_counts is None else prior_counts
    n10, n01 = discordant(y, a, b)
    mean, sd, p = accuracy_difference_moments(n10, n01, n, k, total)
    d = res.difference.values.ravel()
    assert abs(d.mean() - mean) < 4 * sd / np.sqrt(draws)
    assert d.std() == pytest.approx(sd, rel=4 / np.sqrt(2 * draws))
    assert abs(res.probability - p) < 4 * np.sqrt(p * (1 - p) / draws) + 1 / draws
    assert res.difference.attrs["prior_counts"] == pytest.approx(total)
    if prior_counts is None:  # shrinkage N / (N + K) only
        assert mean == pytest.approx((n10 - n01) / (n + k))
    elif prior_counts == 1000.0:  # the flat prior: a third of the observed difference
        assert mean < 0.25 * (n10 - n01) / n


def test_brute_force_k3():
    """Probability and mean difference against an independent computation: NumPy's own
    Dirichlet draws of the 27-cell table (concentration 1/9 + counts, the default prior)
    and metrics written out by hand (accuracy, macro recall, macro F1, F1 of class "b").
    Two independent Monte Carlo estimates of 20,000 draws each: the means differ by less
    than 4 sqrt(2) sd / sqrt(20,000), the probabilities by 4 sqrt(2 p (1 - p) / 20,000)."""
    y, a, b = three_class()
    order = ["a", "b", "c"]
    counts = bcm.analysis.paired_table(y, a, b).values
    draws = 20_000
    pi = np.random.default_rng(99).dirichlet(1 / 9 + counts.ravel(), size=draws)
    pi = pi.reshape(draws, 3, 3, 3)

    def by_hand(tab):
        diag = np.einsum("dkk->dk", tab)
        rows, cols = tab.sum(2), tab.sum(1)
        recall, precision = diag / rows, diag / cols
        f1 = 2 * precision * recall / (precision + recall)
        return {"acc": diag.sum(1), "ba": recall.mean(1), "f1_macro": f1.mean(1),
                "f1[b]": f1[:, 1]}

    ref_a, ref_b = by_hand(pi.sum(3)), by_hand(pi.sum(2))
    for metric, name, label in (("acc", "acc", None), ("recall_macro", "ba", None),
                                ("f1_macro", "f1_macro", None), ("f1", "f1[b]", "b")):
        res = compare_paired(y, a, b, metric, label=label, labels=order, draws=draws,
                             random_seed=5)
        assert (res.metric, res.class_label) == (name.split("[")[0], label)
        ref = ref_a[name] - ref_b[name]
        d = res.difference.values.ravel()
        assert abs(d.mean() - ref.mean()) < 4 * np.sqrt(2) * ref.std() / np.sqrt(draws), name
        p = float(np.mean(ref > 0))
        assert abs(res.probability - p) < 4 * np.sqrt(2 * p * (1 - p) / draws) + 2 / draws
        assert d.std() == pytest.approx(ref.std(), rel=4 * np.sqrt(2 / (2 * draws)))


def test_which_model_answers():
    """Two labels and a binary metric: today's two-class model, draw for draw (its draws
    rebuilt here with NumPy's own Beta and Dirichlet generators in the same order);
    more labels, a multiclass-only metric, labels=, label= or prior_counts=: the K-class
    model."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    a = np.where(rng.random(300) < 0.1, 1 - y, y)
    b = np.where(rng.random(300) < 0.2, 1 - y, y)
    res = compare_paired(y, a, b, "acc", draws=3000, random_seed=4)
    counts = bcm.analysis.paired_counts(y, a, b)
    gen = np.random.default_rng(4)
    phi = gen.beta(1 + counts.loc["positive"].sum(), 1 + counts.loc["negative"].sum(),
                   size=3000)
    pos = gen.dirichlet(1.0 + counts.loc["positive"].to_numpy(float), size=3000)
    neg = gen.dirichlet(1.0 + counts.loc["negative"].to_numpy(float), size=3000)
    acc_a = phi * (pos[:, 0] + pos[:, 1]) + (1 - phi) * (neg[:, 0] + neg[:, 1])
    acc_b = phi * (pos[:, 0] + pos[:, 2]) + (1 - phi) * (neg[:, 0] + neg[:, 2])
    np.testing.assert_allclose(res.difference.values.ravel(), acc_a - acc_b, rtol=1e-10)
    assert "labels" not in res.difference.attrs
    for kwargs in ({"labels": [0, 1]}, {"prior_counts": 2.0}):
        assert compare_paired(y, a, b, "acc", draws=500, random_seed=4, **kwargs) \
            .difference.attrs["labels"] == [0, 1]
    res = compare_paired(y, a, b, "tpr", label=1, draws=500)
    assert (res.metric, res.class_label) == ("tpr", 1) and "tpr[1]" in repr(res)
    assert compare_paired(y, a, b, "f1_macro", draws=500).difference.attrs["labels"] == [0, 1]
    y3 = np.where(rng.random(300) < 0.3, 2, y)
    three = compare_paired(y3, a, b, "acc", draws=500, random_seed=4)
    assert three.difference.attrs["labels"] == [0, 1, 2]
    # lower is better is honoured: fnr_macro = 1 - ba is ba's mirror image, event and all
    ba = compare_paired(y3, a, b, "ba", draws=500, random_seed=4)
    fnr = compare_paired(y3, a, b, "fnr_macro", draws=500, random_seed=4)
    np.testing.assert_allclose(fnr.difference.values, -ba.difference.values, atol=1e-12)
    assert not fnr.higher_is_better and fnr.probability == pytest.approx(ba.probability)


def test_chunks_do_not_change_the_draws(monkeypatch):
    """Draws are made in chunks of at most _CHUNK_VALUES cells; the random stream is the
    same, so the result is identical whatever the chunk size."""
    y, a, b = three_class()
    whole = compare_paired(y, a, b, "kappa", draws=2000, random_seed=8)
    monkeypatch.setattr(paired, "_CHUNK_VALUES", 27 * 7)  # chunks of 7 draws
    chunked = compare_paired(y, a, b, "kappa", draws=2000, random_seed=8)
    np.testing.assert_array_equal(whole.difference.values, chunked.difference.values)


def test_errors():
    y, a, b = three_class(n=30)
    with pytest.raises(bcm.CountsError, match="paired case by case"):
        compare_paired(y, a, b[:-1], "acc")
    with pytest.raises(bcm.CountsError, match="missing"):
        compare_paired(np.r_[y[:-1], None], a, b, "acc")
    with pytest.raises(bcm.CountsError, match="missing"):
        compare_paired([0.0, 1.0, 2.0], [0.0, np.nan, 2.0], [0, 1, 2], "acc")
    with pytest.raises(bcm.CountsError, match="not in labels"):
        compare_paired(y, a, b, "acc", labels=["a", "b"])
    with pytest.raises(ValueError, match=r"label=.*'f1_macro'"):
        compare_paired(y, a, b, "f1")
    with pytest.raises(ValueError, match=r"label= \(one of \['a', 'b', 'c'\]\)\.$"):
        compare_paired(y, a, b, "err")
    with pytest.raises(ValueError, match="only for per-class"):
        compare_paired(y, a, b, "f1_macro", label="a")
    with pytest.raises(ValueError, match="not one of the classes"):
        compare_paired(y, a, b, "f1", label="z")
    with pytest.raises(ValueError, match="positive="):
        compare_paired(y, a, b, "acc", positive="a")
    with pytest.raises(ValueError, match="prior_counts"):
        compare_paired(y, a, b, "acc", prior_counts=-1.0)
    with pytest.raises(ValueError, match=r"\(3, 3, 3\)"):
        compare_paired(y, a, b, "acc", prior_counts=np.ones((3, 3)))
    with pytest.raises(KeyError, match="Unknown multiclass metric"):
        compare_paired(y, a, b, "auc")
    with pytest.raises(ValueError, match="margin"):
        compare_paired(y, a, b, "acc", margin=float("nan"))


# -- calibration: correlated errors, paired against independent ---------------------------


def true_joint(k, prevalence, hard, err_a, err_b):
    """True probabilities of (actual, A, B).  On a shared hard case (probability ``hard``)
    both classifiers predict the next class; otherwise A errs with probability ``err_a``
    and B with ``err_b``, independently, uniformly among the other classes."""
    eye = np.eye(k)

    def own(err):
        return (1 - err) * eye + err * (1 - eye) / (k - 1)   # [actual, predicted]

    nxt = np.roll(eye, 1, axis=1)                              # actual k -> k + 1
    joint = hard * nxt[:, :, None] * nxt[:, None, :] + \
        (1 - hard) * own(err_a)[:, :, None] * own(err_b)[:, None, :]
    return np.asarray(prevalence)[:, None, None] * joint


def coverage_study(n_sims, *, k=4, n=300, metrics=("acc", "f1_macro"), prior_counts=None,
                   hdi_prob=0.9, draws=2000, seed=0, independent=True):
    """Coverage and mean width of the HDI of metric_A - metric_B over ``n_sims`` test sets
    of ``n`` cases drawn from :func:`true_joint`, paired and (optionally) independent.

    The independent analysis gives each classifier its own K×K posterior, Dirichlet with
    the paired prior's marginal (``prior_counts / K^2`` per cell) plus its counts, drawn
    separately: the same model except for the pairing.  The true difference is the
    registry's metric of the true tables."""
    prevalence = np.linspace(2, 1, k) / np.linspace(2, 1, k).sum()
    pi = true_joint(k, prevalence, hard=0.2, err_a=0.05, err_b=0.12)
    truth = {m: float(np.diff(bcm.metrics.evaluate_multiclass(
        m, np.stack([pi.sum(1), pi.sum(2)])))[0]) for m in metrics}   # A - B
    total = k if prior_counts is None else prior_counts
    rng = np.random.default_rng(seed)
    cells = np.array(np.unravel_index(np.arange(k**3), (k, k, k)))
    out = {m: {d: [] for d in ("paired", "independent")} for m in metrics}
    for i in range(n_sims):
        y, a, b = np.repeat(cells, rng.multinomial(n, pi.ravel()), axis=1)
        for m in metrics:
            res = compare_paired(y, a, b, m, labels=range(k), prior_counts=prior_counts,
                                 hdi_prob=hdi_prob, draws=draws, random_seed=seed * 100_000 + i)
            out[m]["paired"].append(res.hdi)
        if not independent:
            continue
        tabs = [confusion_matrix(y, p, labels=range(k)) + total / k**2 for p in (a, b)]
        theta = np.stack([rng.dirichlet(t.ravel(), size=draws).reshape(draws, k, k)
                          for t in tabs])
        for m in metrics:
            va, vb = bcm.metrics.evaluate_multiclass(m, theta)
            lo, hi = hdi(va - vb, hdi_prob)
            out[m]["independent"].append((float(lo), float(hi)))
    figures = {}
    for m in metrics:
        for design, intervals in out[m].items():
            if intervals:
                lo, hi = np.array(intervals).T
                hits = int(np.sum((lo <= truth[m]) & (truth[m] <= hi)))
                figures[m, design] = {"hits": hits, "coverage": hits / n_sims,
                                      "width": float(np.mean(hi - lo)), "truth": truth[m]}
    return figures


def format_study(figures, n_sims, hdi_prob):
    se = np.sqrt(hdi_prob * (1 - hdi_prob) / n_sims)
    lines = [f"{n_sims} test sets; nominal {hdi_prob:.0%}, binomial SE of a coverage at "
             f"nominal {se:.4f}"]
    for (m, design), f in figures.items():
        lines.append(f"{m:>9} {design:>11}: coverage {f['coverage']:.3f}  mean width "
                     f"{f['width']:.4f}  (true difference {f['truth']:+.4f})")
    return "\n".join(lines)


def check_study(figures, n_sims, hdi_prob, alpha=1e-3):
    """Paired: the two-sided binomial test of nominal coverage passes (level 0.001).
    Independent: over-covers (one-sided binomial test at level ``alpha``) with intervals
    at least 1.4 times as wide."""
    for (m, design), f in figures.items():
        if design == "paired":
            assert stats.binomtest(f["hits"], n_sims, hdi_prob).pvalue > 1e-3, (m, f)
        else:
            assert stats.binomtest(f["hits"], n_sims, hdi_prob,
                                   alternative="greater").pvalue < alpha, (m, f)
            assert f["width"] > 1.4 * figures[m, "paired"]["width"], (m, f)


def test_true_joint_is_the_simulation():
    """The true table is a distribution whose accuracies are the closed forms
    (1 - hard)(1 - err): A 0.8 * 0.95, B 0.8 * 0.88."""
    pi = true_joint(4, [0.4, 0.3, 0.2, 0.1], hard=0.2, err_a=0.05, err_b=0.12)
    assert pi.sum() == pytest.approx(1.0) and (pi >= 0).all()
    acc = bcm.metrics.evaluate_multiclass("acc", np.stack([pi.sum(2), pi.sum(1)]))
    np.testing.assert_allclose(acc, [0.8 * 0.95, 0.8 * 0.88])


def test_paired_intervals_calibrate_small():
    """100 simulated K = 4 test sets of 300 cases.  With 100 replications the binomial
    SE of a 90% coverage is 0.03.  The independent intervals are about 1.8 times as
    wide, so they cover with probability about P(|Z| < 1.645 * 1.8) = 0.997; the
    one-sided test at level 0.01 needs >= 97 of 100, which that gives with probability
    0.9995 (at level 0.001 it would need 99, too close to call with 100 test sets)."""
    figures = coverage_study(100, draws=1000, seed=1)
    print("\n" + format_study(figures, 100, 0.9))
    check_study(figures, 100, 0.9, alpha=0.01)


@pytest.mark.slow
def test_paired_intervals_calibrate():
    """The full study: 1,000 K = 4 test sets of 300 cases (binomial SE of a 90% coverage
    0.0095), accuracy, macro F1 and MCC; and at K = 10 (N = 300, 400 test sets) the
    default prior against the flat Dirichlet(1) on all 1,000 cells, which shrinks the
    difference by N / (N + 1000) and misses it far more often than 10%."""
    figures = coverage_study(1000, metrics=("acc", "f1_macro", "mcc"), seed=2)
    print("\nK = 4, N = 300\n" + format_study(figures, 1000, 0.9))
    check_study(figures, 1000, 0.9)
    default = coverage_study(400, k=10, metrics=("acc", "f1_macro"), seed=3)
    print("\nK = 10, N = 300, default prior (10 pseudo-cases)\n"
          + format_study(default, 400, 0.9))
    check_study(default, 400, 0.9)
    flat = coverage_study(400, k=10, metrics=("acc",), prior_counts=1000.0, seed=3,
                          independent=False)
    print("\nK = 10, N = 300, flat Dirichlet(1) on every cell (1,000 pseudo-cases)\n"
          + format_study(flat, 400, 0.9))
    assert stats.binomtest(flat["acc", "paired"]["hits"], 400, 0.9,
                           alternative="less").pvalue < 1e-3


def test_the_result_names_a_and_b():
    """Issue 25: compare_paired never named A and B.  The result does (``.a``, ``.b``),
    its repr and ``to_frame`` do; the names come from ``names=`` or the Series."""
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, 200)
    rf = pd.Series(np.where(rng.random(200) < 0.1, 1 - y, y), name="forest")
    lr = pd.Series(np.where(rng.random(200) < 0.25, 1 - y, y), name="logistic")
    res = compare_paired(y, rf, lr, "acc", draws=500, random_seed=1)
    assert (res.a, res.b) == ("forest", "logistic")
    assert "A = 'forest', B = 'logistic'" in repr(res)
    assert res.to_frame()[["a", "b"]].iloc[0].tolist() == ["forest", "logistic"]
    assert isinstance(res, bcm.analysis.Comparison) and res.design == "paired"
    named = compare_paired(y, rf.to_numpy(), lr.to_numpy(), "f1_macro", draws=500,
                           names=("rf", "lr"))
    assert (named.a, named.b) == ("rf", "lr") and "A = 'rf'" in repr(named)
    plain = compare_paired(y, rf.to_numpy(), lr.to_numpy(), "acc", draws=500, random_seed=1)
    assert (plain.a, plain.b) == ("A", "B")
    np.testing.assert_array_equal(plain.difference.values, res.difference.values)  # same draws
    with pytest.raises(ValueError, match="names"):
        compare_paired(y, rf, lr, "acc", names=("only one",))
