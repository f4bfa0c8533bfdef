"""Probabilistic leaderboards: rank probabilities against closed forms, invariants, inputs.

Tolerances follow from Monte Carlo error: a rank probability estimated from S
independent draws has standard error sqrt(p (1 - p) / S); tests allow 4 of them.
"""

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import bayescm as bcm
from bayescm.analysis.leaderboard import (
    LOWER_IS_BETTER,
    Leaderboard,
    leaderboard,
    leaderboard_from_accuracy,
)

DRAWS = 4000


def se(p: float, draws: int = DRAWS) -> float:
    return float(np.sqrt(max(p * (1 - p), 1e-4) / draws))


def p_first(betas: list[tuple[float, float]]) -> float:
    """P(X_0 > X_j for every j > 0) for independent Beta(a, b): int f_0(x) prod_j F_j(x) dx."""
    first, *rest = (stats.beta(a, b) for a, b in betas)
    value, _ = integrate.quad(
        lambda x: first.pdf(x) * np.prod([d.cdf(x) for d in rest]), 0, 1,
        points=[first.mean()], limit=200)
    return value


def test_two_submissions_match_numerical_integration():
    # tpr of the three-Beta model with Beta(1, 1) priors: Beta(tp + 1, fn + 1)
    cms = bcm.ConfusionMatrix(tp=[30, 27], fn=[10, 13], fp=[5, 5], tn=[20, 20],
                              classifier=["A", "B"])
    board = leaderboard(cms, "tpr", draws=DRAWS, random_seed=3)
    p = p_first([(31, 11), (28, 14)])
    assert 0.6 < p < 0.8  # a genuinely uncertain ranking
    probs = board.rank_probabilities
    assert list(probs.index) == ["A", "B"]
    assert probs.loc["A", 1] == pytest.approx(p, abs=4 * se(p))
    assert probs.loc["B", 1] == pytest.approx(1 - probs.loc["A", 1], abs=1e-12)
    assert board.summary.loc["A", "p_best"] == probs.loc["A", 1]
    assert board.n_draws == DRAWS and board.higher_is_better


def test_kaggle_accuracies_three_way_first_place():
    n = 15123
    acc = [97.1, 97.0, 96.5]
    board = leaderboard_from_accuracy(acc, n, names=["A", "B", "C"], random_seed=5)
    k = np.rint(np.array(acc) / 100 * n)
    beta = [(kk + 1, n - kk + 1) for kk in k]
    p_best = board.summary["p_best"]
    assert list(board.summary.index) == ["A", "B", "C"]
    assert p_best["A"] > p_best["B"] > p_best["C"]
    for i, name in enumerate("ABC"):
        others = beta[:i] + beta[i + 1:]
        p = p_first([beta[i], *others])
        assert p_best[name] == pytest.approx(p, abs=4 * se(p)), name
    # acc posterior is Beta(k + 1, n - k + 1): its mean within 4 MC standard errors
    a, b = beta[0]
    sd = stats.beta(a, b).std()
    assert board.summary.loc["A", "mean"] == pytest.approx(a / (a + b), abs=4 * sd / DRAWS**0.5)
    assert board.metric == "acc" and board.summary.index.name == "submission"
    # the same function is reachable as leaderboard.from_accuracy
    again = leaderboard.from_accuracy(acc, n, names=["A", "B", "C"], random_seed=5)
    pd.testing.assert_frame_equal(again.rank_probabilities, board.rank_probabilities)


def test_table_invariants_and_prizes():
    acc = [95.2, 95.0, 94.9, 94.8, 94.3, 93.0]
    prizes = [10_000, 2_000, 1_000]
    board = leaderboard_from_accuracy(acc, 2000, prizes=prizes, random_seed=2)
    probs = board.rank_probabilities.to_numpy()
    assert probs.shape == (6, 6)
    np.testing.assert_allclose(probs.sum(axis=0), 1, atol=1e-12)
    np.testing.assert_allclose(probs.sum(axis=1), 1, atol=1e-12)
    ranks = np.arange(1, 7)
    np.testing.assert_allclose(board.summary["expected_rank"], probs @ ranks, atol=1e-12)
    np.testing.assert_allclose(board.summary["p_best"], probs[:, 0], atol=0)
    share = board.summary["prize_share"]
    assert share.sum() == pytest.approx(sum(prizes), rel=1e-12)
    np.testing.assert_allclose(share, probs[:, :3] @ prizes, rtol=1e-12)
    # Tötsch & Hoffmann: submissions outside the top three win something
    assert (share.iloc[3:5] > 0).all()
    assert board.prizes == (10_000.0, 2_000.0, 1_000.0)
    assert list(board.summary.columns) == ["mean", "hdi_lower", "hdi_upper", "p_best",
                                           "expected_rank", "prize_share"]
    assert (board.summary["hdi_lower"] < board.summary["mean"]).all()
    assert (board.summary["mean"] < board.summary["hdi_upper"]).all()
    assert board.summary["mean"].is_monotonic_decreasing


def test_clearly_separated_submissions_rank_deterministically():
    cms = bcm.ConfusionMatrix(tp=[300, 900, 600], fn=[700, 100, 400], fp=[50, 50, 50],
                              tn=[950, 950, 950], classifier=["low", "high", "mid"])
    board = leaderboard(cms, "tpr", draws=1000, random_seed=0)
    assert list(board.rank_probabilities.index) == ["high", "mid", "low"]
    np.testing.assert_array_equal(board.rank_probabilities.to_numpy(), np.eye(3))
    np.testing.assert_array_equal(board.summary["expected_rank"], [1.0, 2.0, 3.0])


def test_inference_data_agrees_with_confusion_matrix_path():
    # small test sets, where accuracy's three-Beta posterior is visibly not
    # Beta(tp + tn + 1, fp + fn + 1)
    cms = bcm.ConfusionMatrix(tp=[26, 14, 9], fn=[0, 1, 2], fp=[2, 1, 1], tn=[6, 9, 11],
                              classifier=["A", "B", "C"])
    idata = bcm.fit(bcm.models.three_beta(cms), sampler="exact", random_seed=1)
    s_idata = idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"]
    from_idata = leaderboard(idata, "acc")
    from_counts = leaderboard(cms, "acc", draws=DRAWS, random_seed=2)
    assert from_idata.n_draws == s_idata
    a = from_idata.rank_probabilities
    b = from_counts.rank_probabilities.reindex(index=a.index)
    p = (a.to_numpy() + b.to_numpy()) / 2
    tol = 4 * np.sqrt(np.maximum(p * (1 - p), 1e-4) * (1 / s_idata + 1 / DRAWS))
    assert (np.abs(a.to_numpy() - b.to_numpy()) <= tol).all()
    sd = idata.posterior["acc"].std(("chain", "draw")).to_series()
    mean_tol = 4 * sd * np.sqrt(1 / s_idata + 1 / DRAWS)
    diff = (from_idata.summary["mean"] - from_counts.summary["mean"]).abs()
    assert (diff <= mean_tol.reindex(diff.index)).all()
    # the direct Beta(tp + tn + 1, fp + fn + 1) would be ~16 standard errors off for "A"
    direct = (26 + 6 + 1) / (34 + 2)
    assert abs(from_counts.summary.loc["A", "mean"] - direct) > 3 * mean_tol["A"]


def test_lower_is_better_metric_ranks_lowest_first():
    assert {"fpr", "fnr", "err"} <= LOWER_IS_BETTER
    cms = bcm.ConfusionMatrix(tp=[40, 40, 40], fn=[10, 10, 10], fp=[12, 2, 6],
                              tn=[38, 48, 44], classifier=["noisy", "clean", "fair"])
    board = leaderboard(cms, "fpr", random_seed=4)
    assert not board.higher_is_better
    assert list(board.summary.index) == ["clean", "fair", "noisy"]
    assert board.summary["mean"].is_monotonic_increasing
    assert board.summary.loc["clean", "p_best"] > 0.9
    # fpr = 1 - tnr draw by draw: the same seed gives exactly the same ranks
    tnr = leaderboard(cms, "tnr", random_seed=4)
    pd.testing.assert_frame_equal(board.rank_probabilities, tnr.rank_probabilities)
    err = leaderboard(cms, "error_rate", random_seed=4)  # alias, through theta
    assert err.metric == "err" and err.summary.index[0] == "clean"


def test_ties_are_broken_at_random():
    # discrete draws: three classifiers with identical values in every draw
    draws = np.zeros((2, 1000, 3))
    draws[..., :] = np.random.default_rng(0).integers(0, 3, size=(2, 1000, 1)) / 2
    idata = az.from_dict(posterior={"acc": draws}, dims={"acc": ["classifier"]},
                         coords={"classifier": ["x", "y", "z"]})
    board = leaderboard(idata, "acc", random_seed=1)
    probs = board.rank_probabilities.to_numpy()
    assert np.abs(probs - 1 / 3).max() <= 4 * se(1 / 3, 2000)
    np.testing.assert_allclose(board.summary["expected_rank"], 2, atol=4 * 0.8165 / 2000**0.5)
    # partial ties: z is strictly best, x and y tie below it
    draws[..., 2] += 1
    board = leaderboard(idata.map(lambda ds: ds.copy(data={"acc": draws}), groups="posterior"),
                        "acc", random_seed=1)
    assert board.summary.loc["z", "p_best"] == 1
    assert board.rank_probabilities.loc["x", 2] == pytest.approx(0.5, abs=4 * se(0.5, 2000))


def test_ten_thousand_submissions_keep_top_ranks():
    k, draws = 10_000, 200
    acc = np.random.default_rng(7).uniform(90, 97, size=k)
    board = leaderboard_from_accuracy(acc, 15123, draws=draws, random_seed=1,
                                      prizes=[5, 3, 2] + [1] * 200)
    probs = board.rank_probabilities
    assert probs.shape == (k, 203)  # default top=100, widened to the 203 prize ranks
    np.testing.assert_allclose(probs.sum(axis=0), 1, atol=1e-5)
    assert board.summary["p_best"].sum() == pytest.approx(1)
    # every draw's ranks are a permutation of 1..K
    assert board.summary["expected_rank"].mean() == pytest.approx((k + 1) / 2, rel=1e-12)
    assert board.summary["prize_share"].sum() == pytest.approx(210, rel=1e-9)
    small = leaderboard_from_accuracy(acc, 15123, draws=draws, random_seed=1, top=5)
    assert small.rank_probabilities.shape == (k, 5) and small.top == 5
    np.testing.assert_allclose(small.summary["p_best"], board.summary["p_best"])
    default = leaderboard_from_accuracy(acc[:3000], 15123, draws=50, random_seed=1)
    assert default.rank_probabilities.shape == (3000, 100)


def test_ten_thousand_submissions_match_brute_force_ranks():
    # known draws through the InferenceData path, against scipy's ranks draw by draw
    k, draws = 10_000, 200
    x = np.random.default_rng(3).normal(np.linspace(0, 3, k), 1.0, size=(1, draws, k))
    names = [f"c{i}" for i in range(k)]
    idata = az.from_dict(posterior={"mcc": x}, dims={"mcc": ["classifier"]},
                         coords={"classifier": names})
    board = leaderboard(idata, "mcc", random_seed=1, chunk=37)
    ranks = stats.rankdata(-x[0], axis=1).astype(int)  # rank 1 = largest
    expected = pd.Series(ranks.mean(axis=0), index=names)
    pd.testing.assert_series_equal(board.summary["expected_rank"], expected.reindex(
        board.summary.index), check_names=False, rtol=0, atol=1e-12)
    top = board.top
    assert top == 100
    ref = np.zeros((k, top))
    d, i = np.nonzero(ranks <= top)
    np.add.at(ref, (i, ranks[d, i] - 1), 1 / draws)
    got = board.rank_probabilities.reindex(names).to_numpy()
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(board.summary["mean"], x[0].mean(axis=0)[
        [names.index(n) for n in board.summary.index]], rtol=1e-12)


def test_reproducible_and_chunk_independent_shapes():
    cms = bcm.ConfusionMatrix(tp=[45, 40, 30, 42], fn=[5, 10, 20, 8], fp=[3, 4, 9, 5],
                              tn=[47, 46, 41, 45], classifier=list("abcd"))
    one = leaderboard(cms, "mcc", draws=500, random_seed=9, chunk=64)
    two = leaderboard(cms, "mcc", draws=500, random_seed=9, chunk=64)
    pd.testing.assert_frame_equal(one.summary, two.summary)
    other = leaderboard(cms, "mcc", draws=500, random_seed=9)
    assert other.rank_probabilities.shape == one.rank_probabilities.shape
    frame = leaderboard(cms.to_frame(), "mcc", draws=500, random_seed=9, chunk=64)
    pd.testing.assert_frame_equal(frame.summary, one.summary)


def test_accuracy_inputs():
    series = pd.Series([96.0, 97.0], index=["p", "q"])
    board = leaderboard_from_accuracy(series, 500, random_seed=1)
    assert list(board.summary.index) == ["q", "p"]
    board = leaderboard_from_accuracy({"p": 96.0, "q": 97.0}, [500, 800], random_seed=1)
    assert set(board.summary.index) == {"p", "q"}
    frame = leaderboard_from_accuracy(series.to_frame("accuracy"), 500, random_seed=1)
    assert list(frame.summary.index) == ["q", "p"]
    with pytest.warns(UserWarning, match="fractions"):
        leaderboard_from_accuracy([0.97, 0.96], 500, random_seed=1)


@pytest.mark.parametrize(
    ("acc", "n", "kwargs", "match"),
    [
        ([97.0, 101.0], 100, {}, "'s1' is 101, outside"),
        ([97.0, -1.0], 100, {}, "'s1' is -1, outside"),
        ([97.0, np.nan], 100, {"names": ["a", "b"]}, "'b' is NaN"),
        ([97.0, 96.0], 0, {}, "n of submission 's0' is 0"),
        ([97.0, 96.0], [100, 50.5], {}, "n of submission 's1' is 50.5"),
        ([97.0, 96.0], [100, np.nan], {}, "'s1' is nan"),
        ([97.0, 96.0], [1, 2, 3], {}, "one per submission"),
        ([97.0], 100, {}, "at least 2 submissions"),
        ([97.0, 96.0], 100, {"names": ["a"]}, "1 names given for 2"),
        ([97.0, 96.0], 100, {"names": ["a", "a"]}, "unique"),
        (pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}), 100, {}, "accuracy column alone"),
        ([97.0, 96.0], 100, {"prizes": [10, -1]}, "rank 2 is -1"),
        ([97.0, 96.0], 100, {"prizes": [np.inf]}, "rank 1 is inf"),
        ([97.0, 96.0], 100, {"prizes": []}, "non-empty"),
        ([97.0, 96.0], 100, {"hdi_prob": 1.2}, "hdi_prob"),
        ([97.0, 96.0], 100, {"draws": 0}, "draws must be"),
        ([97.0, 96.0], 100, {"top": 0}, "top must be"),
        ([97.0, 96.0], 100, {"chunk": 2.5}, "chunk must be"),
    ],
)
def test_accuracy_errors(acc, n, kwargs, match):
    with pytest.raises(ValueError, match=match):
        leaderboard_from_accuracy(acc, n, **kwargs)


def test_leaderboard_errors():
    cms = bcm.ConfusionMatrix(tp=[5, 6], fn=[1, 2], fp=[1, 0], tn=[4, 5])
    with pytest.raises(KeyError, match=r"Unknown metric 'auc'\. Known metrics: prevalence"):
        leaderboard(cms, "auc")
    only_tpr = bcm.fit(bcm.models.three_beta(cms), sampler="exact", random_seed=1,
                       metrics=["tpr"], prior=False, predictive=False)
    with pytest.raises(KeyError, match=r"refit with bcm.fit\(..., metrics=None\)"):
        leaderboard(only_tpr, "mcc")
    no_dim = az.from_dict(posterior={"acc": np.full((2, 50), 0.5)})
    with pytest.raises(ValueError, match="no 'classifier' dim"):
        leaderboard(no_dim, "acc")
    with pytest.raises(ValueError, match="at least 2 submissions"):
        leaderboard(cms[0], "acc")
    with pytest.raises(ValueError, match="finite and >= 0"):
        leaderboard(cms, "acc", prizes=[np.nan])
    with pytest.raises(TypeError, match="leaderboard_from_accuracy"):
        leaderboard({"a": 97.0, "b": 96.0})
    with pytest.raises(TypeError, match="pass the whole InferenceData"):
        leaderboard(only_tpr.posterior["tpr"], "tpr")
    nan = az.from_dict(posterior={"ppv": np.full((1, 20, 2), np.nan)},
                       dims={"ppv": ["classifier"]}, coords={"classifier": ["u", "v"]})
    with pytest.raises(ValueError, match=r"NaN draws for \['u', 'v'\]"):
        leaderboard(nan, "ppv")
    with pytest.warns(UserWarning, match="never awarded"):
        board = leaderboard(cms, "acc", prizes=[3, 2, 1], draws=200, random_seed=1)
    assert board.summary["prize_share"].sum() == pytest.approx(5)


def test_repr_and_html():
    board = leaderboard_from_accuracy(np.linspace(90, 95, 12), 1000, prizes=[3, 2, 1],
                                      random_seed=1)
    assert isinstance(board, Leaderboard)
    text = repr(board)
    assert text.startswith("Leaderboard of 12 submissions by Accuracy (acc, higher is better)")
    assert "prize_share" in text and "... 2 more" in text and "s11" in text
    html = board._repr_html_()
    assert "<table" in html and "Rank probabilities" in html and "first 10 rows" in html


# -- issue 25: classifiers scored on one test set ----------------------------------------
def test_one_test_set_is_noted_and_warned_about_only_where_pairing_could_decide():
    """Same class sizes: the leaderboard says it ranks them as independent and points to
    compare_paired (a note in the result, its repr and to_frame); it warns only where
    the most favourable pairing of the counts would settle an order the independent
    ranking leaves open."""
    import warnings

    from bayescm.analysis.leaderboard import DECISIVE, NotedLeaderboard, SameCasesWarning

    close = bcm.ConfusionMatrix(tp=[45, 41, 30], fn=[5, 9, 20], fp=[3, 4, 9],
                                tn=[47, 46, 41], classifier=["a", "b", "c"])
    with pytest.warns(SameCasesWarning, match="compare_paired") as caught:
        board = leaderboard(close, "acc", random_seed=1)
    assert isinstance(board, NotedLeaderboard) and isinstance(board, Leaderboard)
    assert "compare_paired" in board.note and "independent" in board.note
    assert "Note:" in repr(board) and board.to_frame().attrs["note"] == board.note
    assert "'a' and 'b'" in str(caught[0].message)
    # the warning's claim: paired as favourably as the counts allow, P(a better) >= 0.95
    counts = pd.DataFrame({"11": [41, 46], "10": [4, 1], "01": [0, 0], "00": [5, 3]},
                          index=["positive", "negative"])
    paired = bcm.analysis.paired.paired_binary(counts, "acc", draws=4000, random_seed=1)
    assert paired.probability >= DECISIVE > board.summary.loc["a", "p_best"]
    # far apart: settled either way, a note and no warning
    apart = bcm.ConfusionMatrix(tp=[45, 20], fn=[5, 30], fp=[3, 20], tn=[47, 30],
                                classifier=["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SameCasesWarning)
        noted = leaderboard(apart, "acc", random_seed=1)
    assert isinstance(noted, NotedLeaderboard)
    # different test sets: neither
    other = bcm.ConfusionMatrix(tp=[45, 41], fn=[5, 10], fp=[3, 4], tn=[47, 46],
                                classifier=["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SameCasesWarning)
        plain = leaderboard(other, "acc", random_seed=1)
    assert type(plain) is Leaderboard and "Note" not in repr(plain)
    # K classes with the same class sizes: the note
    mc = bcm.MulticlassConfusionMatrix(
        [[[50, 3, 2], [4, 40, 6], [1, 2, 30]], [[45, 8, 2], [6, 38, 6], [3, 2, 28]]],
        labels=["cat", "dog", "bird"], classifier=["a", "b"])
    assert "compare_paired" in leaderboard(mc, "f1_macro", random_seed=1).note
    assert "compare_paired" in bcm.analysis.leaderboard.__doc__
