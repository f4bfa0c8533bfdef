"""compare and leaderboard on K-class confusion matrices and multiclass fits.

References are brute force in the test itself: independent Dirichlet draws of the
``multiclass_rows`` posterior with its default priors, Dirichlet(2/K) for the class mix
and every row (NumPy's ``Generator.dirichlet``, not
bayescm's gamma construction), the metrics written out below from the K x K cell
probabilities, and ranks by ``argsort``.

Tolerances follow from Monte Carlo error.  A probability p estimated from S
independent draws has standard error sqrt(p (1 - p) / S); two independent estimates
(bayescm's and the brute force's, S_1 and S_2 draws) differ with standard error
sqrt(p (1 - p) (1 / S_1 + 1 / S_2)), p their common value, estimated by pooling the two
(either one alone understates p (1 - p) when it happens to fall low near 0).  Tests allow 4
of them (a floor of p (1 - p) >= 1e-4 keeps probabilities near 0 or 1 from demanding
exact equality).
"""

import warnings

import numpy as np
import pytest

import bayescm as bcm
from bayescm.analysis import compare, leaderboard

LABELS = ["cat", "dog", "bird"]
A = [[50, 3, 2], [4, 40, 6], [1, 2, 30]]
B = [[45, 8, 2], [6, 38, 6], [3, 2, 28]]
BATCH = np.array([[[30, 5, 3], [4, 25, 6], [2, 3, 22]],
                  [[28, 7, 3], [5, 26, 4], [3, 2, 22]],
                  [[25, 8, 5], [6, 22, 7], [4, 4, 19]],
                  [[31, 4, 3], [8, 20, 7], [1, 6, 20]]])
NAMES = ["m0", "m1", "m2", "m3"]


def tol(p1: float, p2: float, s1: int, s2: int) -> float:
    """4 standard errors of the difference of two independent estimates p1, p2 of p
    (from s1 and s2 draws), p pooled."""
    p = (p1 * s1 + p2 * s2) / (s1 + s2)
    return 4 * float(np.sqrt(max(p * (1 - p), 1e-4) * (1 / s1 + 1 / s2)))


def rows_posterior(counts, draws: int, rng: np.random.Generator) -> np.ndarray:
    """theta draws (draws, ..., K, K) of multiclass_rows with its default priors, by brute
    force: prevalence ~ Dirichlet(2/K + row sums), row a ~ Dirichlet(2/K + C[a]),
    theta = pi_a rho_ap."""
    counts = np.asarray(counts, dtype=float)
    flat = counts.reshape(-1, *counts.shape[-2:])
    a = 2 / counts.shape[-1]  # two pseudo-cases on the class mix and on every row
    out = []
    for c in flat:
        pi = rng.dirichlet(a + c.sum(axis=1), size=draws)
        rows = np.stack([rng.dirichlet(a + row, size=draws) for row in c], axis=1)
        out.append(pi[:, :, None] * rows)
    return np.stack(out, axis=1).reshape(draws, *counts.shape)


def brute_metric(theta: np.ndarray, metric: str, label: int | None = None) -> np.ndarray:
    """The metric of K x K cell probabilities (last two axes), written out here."""
    diag = np.diagonal(theta, axis1=-2, axis2=-1)
    r, c = theta.sum(axis=-1), theta.sum(axis=-2)   # actual and predicted margins
    acc = diag.sum(axis=-1)
    pe = (r * c).sum(axis=-1)
    f1 = 2 * diag / (r + c)
    values = {
        "acc": acc,
        "kappa": (acc - pe) / (1 - pe),
        "mcc": (acc - pe) / np.sqrt((1 - (r**2).sum(-1)) * (1 - (c**2).sum(-1))),
        "f1_macro": f1.mean(axis=-1),
        "fnr_macro": (1 - diag / r).mean(axis=-1),
        "f1": f1, "ppv": diag / c, "fpr": (c - diag) / (1 - r),
    }[metric]
    return values if label is None else values[..., label]


def brute_rank_probabilities(values: np.ndarray, higher: bool = True) -> np.ndarray:
    """P(classifier i has rank r): (classifiers, ranks) from (draws, classifiers)."""
    order = np.argsort(-values if higher else values, axis=1)
    ranks = np.argsort(order, axis=1)            # 0-based rank of every classifier
    k = values.shape[1]
    return np.stack([(ranks == r).mean(axis=0) for r in range(k)], axis=1)


# -- compare --------------------------------------------------------------------------


@pytest.mark.parametrize(("metric", "label", "margin"), [
    ("f1_macro", None, 0.0), ("kappa", None, 0.05), ("mcc", None, 0.0),
    ("f1", "bird", 0.0), ("fnr_macro", None, 0.02), ("fpr", "dog", 0.0),
])
def test_compare_matches_brute_force_dirichlet_draws(metric, label, margin):
    a = bcm.MulticlassConfusionMatrix(A, LABELS)
    b = bcm.MulticlassConfusionMatrix(B, LABELS)
    s = 20_000
    res = compare(a, b, metric, margin, label=label, draws=s, random_seed=3)
    rng = np.random.default_rng(11)
    k = None if label is None else LABELS.index(label)
    diff = (brute_metric(rows_posterior(A, s, rng), metric, k)
            - brute_metric(rows_posterior(B, s, rng), metric, k))
    higher = not metric.startswith(("fnr", "fpr"))
    expected = float(np.mean(diff > margin if higher else diff < -margin))
    assert res.higher_is_better is higher
    assert abs(res.probability - expected) < tol(res.probability, expected, s, s)
    # the mean difference: within 4 standard errors of a difference of two means
    se = float(np.std(diff) * np.sqrt(2 / s))
    assert abs(float(res.difference.mean()) - float(diff.mean())) < 4 * se
    assert res.class_label == label
    assert res.to_frame().loc[0, "metric"] == (res.metric if label is None
                                               else f"{res.metric}[{label}]")


def test_compare_on_multiclass_fits_of_both_families():
    # multiclass_rows and multiclass_cells fits with their default priors; one batch, two rows
    mc = bcm.MulticlassConfusionMatrix(np.stack([A, B]), LABELS, classifier=["a", "b"])
    rng = np.random.default_rng(5)
    s = 4 * 2000
    brute = {
        # rows: Dirichlet prevalence and rows; cells: theta ~ Dirichlet(4/K^2 + C) over the
        # K^2 cells (four pseudo-cases)
        "multiclass_rows": rows_posterior(np.stack([A, B]), s, rng),
        "multiclass_cells": np.stack([rng.dirichlet(4 / 9 + np.ravel(c), size=s)
                                      .reshape(s, 3, 3) for c in (A, B)], axis=1),
    }
    for family, theta in brute.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no stray warnings
            idata = bcm.fit(getattr(bcm.models, family)(mc), sampler="exact", draws=2000,
                            random_seed=1, metrics=["kappa", "ppv"])
        for metric, label in (("kappa", None), ("precision", "cat")):
            res = compare((idata, "a"), (idata, "b"), metric, label=label)
            k = None if label is None else 0
            m = brute_metric(theta, "ppv" if label else metric, k)
            expected = float(np.mean(m[:, 0] > m[:, 1]))
            assert abs(res.probability - expected) < tol(res.probability, expected, s, s), (
                family, metric)


def test_compare_lower_is_better_is_the_complement():
    # fnr_macro = 1 - ba draw by draw: P(fnr_A - fnr_B < -m) = P(ba_A - ba_B > m) exactly
    a = bcm.MulticlassConfusionMatrix(A, LABELS)
    b = bcm.MulticlassConfusionMatrix(B, LABELS)
    fnr = compare(a, b, "fnr_macro", 0.01, draws=5000, random_seed=2)
    ba = compare(a, b, "recall_macro", 0.01, draws=5000, random_seed=2)  # alias of ba
    assert ba.metric == "ba" and fnr.metric == "fnr_macro"
    assert not fnr.higher_is_better and ba.higher_is_better
    np.testing.assert_allclose(fnr.difference.values, -ba.difference.values, atol=1e-12)
    assert fnr.probability == pytest.approx(ba.probability, abs=2 / 5000)  # float rounding
    assert "A - B < -0.01" in repr(fnr)


def test_compare_says_what_is_wrong_with_classes_and_kinds():
    a = bcm.MulticlassConfusionMatrix(A, LABELS)
    b = bcm.MulticlassConfusionMatrix(B, LABELS)
    with pytest.raises(ValueError, match=r"one value per class \['cat', 'dog', 'bird'\].*"
                                         r"label=.*f1_macro"):
        compare(a, b, "f1")
    with pytest.raises(KeyError, match=r"'cow' is not among the labels \['cat', 'dog', 'bird'\]"):
        compare(a, b, "f1", label="cow")
    with pytest.raises(ValueError, match="'kappa' has one value per classifier; drop label="):
        compare(a, b, "kappa", label="cat")
    with pytest.raises(ValueError, match="A is multiclass and B is binary"):
        compare(a, bcm.ConfusionMatrix(tp=5, fn=1, fp=2, tn=7), "acc")
    with pytest.raises(KeyError, match="averages are offered for tpr"):
        compare(a, b, "err_macro")
    with pytest.raises(ValueError, match="drop label="):  # binary metrics have no classes
        compare(bcm.ConfusionMatrix(tp=5, fn=1, fp=2, tn=7),
                bcm.ConfusionMatrix(tp=4, fn=2, fp=2, tn=7), "tpr", label=1)


# -- leaderboard ----------------------------------------------------------------------


@pytest.mark.parametrize(("metric", "label"), [("f1_macro", None), ("kappa", None),
                                               ("ppv", "bird"), ("fpr", "dog")])
def test_leaderboard_rank_probabilities_match_brute_force(metric, label):
    mc = bcm.MulticlassConfusionMatrix(BATCH, LABELS, classifier=NAMES)
    s = 4000
    board = leaderboard(mc, metric, label=label, prizes=[10, 3], draws=s, random_seed=7)
    k = None if label is None else LABELS.index(label)
    higher = metric != "fpr"
    values = brute_metric(rows_posterior(BATCH, s, np.random.default_rng(8)), metric, k)
    brute = brute_rank_probabilities(values, higher)
    got = board.rank_probabilities.reindex(NAMES).to_numpy()
    for i in range(len(NAMES)):
        for r in range(len(NAMES)):
            assert abs(got[i, r] - brute[i, r]) < tol(got[i, r], brute[i, r], s, s), (i, r)
    # expected rank, p_best and prizes follow from the same table
    ranks = np.arange(1, len(NAMES) + 1)
    summary = board.summary.reindex(NAMES)
    np.testing.assert_allclose(summary["expected_rank"], got @ ranks, atol=1e-9)
    np.testing.assert_allclose(summary["p_best"], got[:, 0], atol=1e-12)
    np.testing.assert_allclose(summary["prize_share"], got[:, :2] @ [10, 3], atol=1e-9)
    assert board.higher_is_better is higher and board.class_label == label
    assert board.n_draws == s and list(board.summary.index.names) == ["classifier"]
    # the means: within 4 standard errors of a difference of two means
    se = np.std(values, axis=0) * np.sqrt(2 / s)
    assert np.all(np.abs(summary["mean"].to_numpy() - values.mean(axis=0)) < 4 * se)


def test_leaderboard_of_a_multiclass_fit_is_its_draws_ranked():
    mc = bcm.MulticlassConfusionMatrix(BATCH, LABELS, classifier=NAMES)
    idata = bcm.fit(bcm.models.multiclass_cells(mc), sampler="exact", draws=1000,
                    random_seed=2, metrics=["f1_macro", "tpr"])
    for metric, label, var in (("f1_macro", None, "f1_macro"), ("recall", "dog", "tpr")):
        board = leaderboard(idata, metric, label=label, random_seed=1)
        da = idata.posterior[var]
        if label is not None:
            da = da.sel({"class": label})
        values = da.transpose("chain", "draw", "classifier").values.reshape(-1, len(NAMES))
        # continuous draws have no ties: the counts are exactly argsort's
        expected = brute_rank_probabilities(values)
        np.testing.assert_allclose(board.rank_probabilities.reindex(NAMES).to_numpy(),
                                   expected, atol=1e-12)
        assert board.n_draws == 4000
    assert "of class 'dog'" in repr(board)
    assert board.to_frame().attrs["class_label"] == "dog"


def test_k2_multiclass_leaderboard_is_the_binary_one_in_distribution():
    cms = bcm.ConfusionMatrix(tp=[45, 40, 30, 38], fn=[5, 10, 20, 9], fp=[3, 4, 9, 6],
                              tn=[47, 46, 41, 44], classifier=["a", "b", "c", "d"])
    mc = bcm.MulticlassConfusionMatrix.from_binary(cms, labels=("pos", "neg"))
    s = 6000
    pairs = [(leaderboard(cms, "acc", draws=s, random_seed=1),
              leaderboard(mc, "acc", draws=s, random_seed=2)),
             # the positive class's recall is the binary TPR
             (leaderboard(cms, "tpr", draws=s, random_seed=3),
              leaderboard(mc, "tpr", label="pos", draws=s, random_seed=4))]
    for binary, multi in pairs:
        p = binary.rank_probabilities.to_numpy()
        q = multi.rank_probabilities.reindex(binary.rank_probabilities.index).to_numpy()
        for i in range(p.shape[0]):
            for r in range(p.shape[1]):
                assert abs(p[i, r] - q[i, r]) < tol(p[i, r], q[i, r], s, s), (i, r)
        assert multi.metric == binary.metric


def test_leaderboard_says_what_is_wrong_with_classes():
    mc = bcm.MulticlassConfusionMatrix(BATCH, LABELS, classifier=NAMES)
    with pytest.raises(ValueError, match=r"one value per class \['cat', 'dog', 'bird'\]"):
        leaderboard(mc, "f1")
    with pytest.raises(KeyError, match=r"'owl' is not among the labels"):
        leaderboard(mc, "f1", label="owl")
    with pytest.raises(ValueError, match="drop label="):
        leaderboard(mc, "acc", label="cat")
    cms = bcm.ConfusionMatrix(tp=[4, 5], fn=[1, 2], fp=[2, 2], tn=[6, 5])
    with pytest.raises(ValueError, match="drop label="):
        leaderboard(cms, "tpr", label="cat")
    with pytest.raises(KeyError, match="Unknown multiclass metric"):
        leaderboard(mc, "auc")
    with pytest.raises(ValueError, match="at least 2 submissions"):
        leaderboard(bcm.MulticlassConfusionMatrix(A, LABELS), "acc")
