"""The Compare page's logic (bayescm.app.compare_logic), without a browser.

Numbers are checked against closed forms (numerical integration of Beta posteriors,
the conjugate posterior mean of a paired difference) with tolerances of four Monte
Carlo standard deviations, and against the library's own functions for the same input.
"""

from __future__ import annotations

import numpy as np
import pandas.testing as pd_testing
import pytest
from scipy import integrate, stats

import bayescm as bcm
from bayescm.app import compare_logic as cl
from bayescm.app.pages_common import InputError


def _beta(cm: dict[str, int], rate: str) -> stats.rv_continuous:
    """The exact three-Beta posterior of TPR or TNR under Beta(1, 1)."""
    hit, miss = ("tp", "fn") if rate == "tpr" else ("tn", "fp")
    return stats.beta(cm[hit] + 1, cm[miss] + 1)


def _rows(text: str) -> dict[str, dict[str, int]]:
    cms = cl.parse_counts(text)
    return {n: {k: int(v) for k, v in cms.to_frame().loc[n].items()} for n in cms.classifiers}


def test_independent_probability_and_leaderboard_match_integrals() -> None:
    state = cl.CompareState(metric="tpr", margin=0.02)
    res = cl.run(state)
    cms = _rows(state.counts)
    a, b, c = (_beta(cms[n], "tpr") for n in "ABC")
    # P(TPR_A - TPR_B > 0.02) = int f_A(x) F_B(x - 0.02) dx
    exact = integrate.quad(lambda x: a.pdf(x) * b.cdf(x - 0.02), 0, 1)[0]
    # 20,000 i.i.d. draws: sd of the share <= sqrt(0.25 / 20000) = 0.0035; 4 sd
    assert res.comparison.probability == pytest.approx(exact, abs=0.015)
    assert res.comparison.event == "A - B > 0.02"
    # P(A ranks first) = int f_A(x) F_B(x) F_C(x) dx; 4000 joint draws: 4 sd = 0.032
    p_best = integrate.quad(lambda x: a.pdf(x) * b.cdf(x) * c.cdf(x), 0, 1)[0]
    assert res.board.summary.loc["A", "p_best"] == pytest.approx(p_best, abs=0.032)
    assert res.board.rank_probabilities.sum(axis=0).to_numpy() == pytest.approx(1.0)
    assert list(res.leaderboard_table.index) == list(res.board.summary.index)


def test_lower_is_better_metric_and_chosen_pair() -> None:
    res = cl.run(cl.CompareState(metric="fpr", margin=0.05, a="C", b="B"))
    cms = _rows(cl.DEFAULT_COUNTS)
    tnr_c, tnr_b = _beta(cms["C"], "tnr"), _beta(cms["B"], "tnr")
    # FPR_C - FPR_B < -0.05  <=>  TNR_C - TNR_B > 0.05
    exact = integrate.quad(lambda x: tnr_c.pdf(x) * tnr_b.cdf(x - 0.05), 0, 1)[0]
    assert (res.a, res.b, res.comparison.event) == ("C", "B", "A - B < -0.05")
    assert res.comparison.probability == pytest.approx(exact, abs=0.015)
    table = res.comparison_table
    assert table.loc[("C", "B"), "metric"] == "fpr"


def test_paired_difference_matches_its_conjugate_mean_and_the_library() -> None:
    state = cl.CompareState(design="paired", metric="acc")
    res = cl.run(state)
    y, preds = cl.parse_predictions(state.cases)
    counts = bcm.analysis.paired_counts(y, preds["A"], preds["B"])
    n_pos, n_neg = counts.loc["positive"].sum(), counts.loc["negative"].sum()
    # acc_A - acc_B = phi (psi+_10 - psi+_01) + (1 - phi)(psi-_10 - psi-_01), phi and the
    # psi independent: E = E[phi] E[.] + E[1 - phi] E[.] with Dirichlet(1 + n) means
    e_phi = (1 + n_pos) / (2 + n_pos + n_neg)

    def gap(c: str) -> float:
        row = counts.loc[c]
        return (row["10"] - row["01"]) / (4 + row.sum())

    exact = e_phi * gap("positive") + (1 - e_phi) * gap("negative")
    d = res.comparison.difference.values.reshape(-1)
    assert d.mean() == pytest.approx(exact, abs=4 * d.std() / np.sqrt(d.size))
    assert res.comparison.design == "paired"
    # the leaderboard is the library's on the same confusion matrices and seed
    seed_board = cl.seeds(state.seed)[1]
    batch = bcm.ConfusionMatrix.from_predictions(y.to_numpy(), {c: preds[c].to_numpy()
                                                               for c in preds.columns})
    board = bcm.analysis.leaderboard(batch, "acc", draws=cl.BOARD_DRAWS,
                                     random_seed=seed_board)
    assert res.board.summary.equals(board.summary)
    assert res.notes  # the page says the ranks ignore the pairing


def test_paired_three_classes_uses_the_k_class_model() -> None:
    text = "y_true, A, B\n" + "\n".join(
        f"{y}, {a}, {b}" for y, a, b in [("x", "x", "x")] * 20 + [("y", "y", "x")] * 15
        + [("z", "z", "z")] * 12 + [("z", "y", "z")] * 3 + [("y", "y", "y")] * 5)
    res = cl.run(cl.CompareState(design="paired", cases=text, metric="f1_macro"))
    assert res.comparison.difference.attrs["labels"] == ["x", "y", "z"]
    assert res.comparison.probability > 0.95  # B calls 15 of 20 y's x: A is better
    assert len(res.board.summary) == 2


@pytest.mark.parametrize(("state", "where", "library"), [
    (cl.CompareState(counts="name, tp, fn, fp, tn\nA, -1, 2, 3, 4\nB, 1, 2, 3, 4"), "counts",
     lambda: bcm.ConfusionMatrix(tp=[-1, 1], fn=[2, 2], fp=[3, 3], tn=[4, 4],
                                 classifier=["A", "B"])),
    (cl.CompareState(counts="name, tp, fn, fp, tn\nA, 1.5, 2, 3, 4\nB, 1, 2, 3, 4"), "counts",
     lambda: bcm.ConfusionMatrix(tp=[1.5, 1], fn=[2, 2], fp=[3, 3], tn=[4, 4],
                                 classifier=["A", "B"])),
    (cl.CompareState(metric="nonsense"), "metric",
     lambda: bcm.metrics.get("nonsense")),
])
def test_bad_input_shows_the_library_message_at_its_field(state, where, library) -> None:
    with pytest.raises(InputError) as caught:
        cl.run(state)
    with pytest.raises((ValueError, KeyError)) as direct:
        library()
    assert caught.value.field == where
    expected = direct.value.args[0] if isinstance(direct.value, KeyError) else str(direct.value)
    assert caught.value.message == expected


@pytest.mark.parametrize(("state", "where", "words"), [
    (cl.CompareState(counts="A, 1, 2, 3, 4"), "counts", "header"),
    (cl.CompareState(counts="name, tp, fn, fp\nA, 1, 2, 3"), "counts", "four cells"),
    (cl.CompareState(counts="name, tp, fn, fp, tn\nA, 1, 2, x, 4\nB, 1, 1, 1, 1"), "counts",
     "number"),
    (cl.CompareState(a="A", b="A"), "b", "two different"),
    (cl.CompareState(a="Z"), "a", "No classifier named 'Z'"),
    (cl.CompareState(design="paired", cases="A, B\n1, 0"), "cases", "y_true"),
    (cl.CompareState(design="paired", positive="7"), "positive", "'7'"),
    (cl.CompareState(margin=float("inf")), "margin", "finite"),
    (cl.CompareState(hdi_prob=1.5), "hdi_prob", "1.5"),
])
def test_page_checks_say_what_to_fix(state, where, words) -> None:
    with pytest.raises(InputError) as caught:
        cl.run(state)
    assert caught.value.field == where
    assert words in caught.value.message


def test_state_round_trips_through_the_url() -> None:
    assert cl.CompareState().to_query() == {}
    state = cl.CompareState(design="paired", metric="mcc", margin=0.015, a="B", b="A",
                            counts=cl.DEFAULT_COUNTS + "\nD, 1, 2, 3, 4", seed=7)
    query = state.to_query()
    assert set(query) == {"design", "metric", "margin", "a", "b", "counts", "seed"}
    assert cl.CompareState.from_query(query) == state
    # a query as a web framework hands it over: lists of bytes
    assert cl.CompareState.from_query({k: [v.encode()] for k, v in query.items()}) == state
    # the page's param mirror restores from the same query (bayescm.app.state.restore)
    from bayescm.app.state import restore

    params = cl.CompareState().params()
    assert restore(params, query, list(query)) == []
    assert cl.CompareState.from_params(params) == state


def test_downloads_are_csv_png_and_svg() -> None:
    from bayescm.app.downloads import to_bytes

    res = cl.run(cl.CompareState())
    csv = res.comparison_table.to_csv()
    assert csv.splitlines()[0].startswith("a,b,metric,design,margin,mean")
    assert to_bytes(res.difference_figure(), "png")[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in to_bytes(res.leaderboard_figure(), "svg")[:400]


KCLASS = ("A: cat,dog,bird; 50,3,2; 4,40,6; 1,2,30\n"
          "B: cat,dog,bird; 45,8,2; 6,38,6; 3,2,28\n"
          "C: cat,dog,bird; 30,10,15; 12,30,8; 6,6,21")


@pytest.mark.parametrize(("metric", "label"), [("f1_macro", ""), ("tpr", "bird")])
def test_independent_k_class_matrices_are_the_library_comparison(metric, label) -> None:
    state = cl.CompareState(counts=KCLASS, metric=metric, label=label, b="C",
                                       seed=3)
    res = cl.run(state)
    labels = ["cat", "dog", "bird"]
    mats = [np.array(m) for m in ([[50, 3, 2], [4, 40, 6], [1, 2, 30]],
                                  [[45, 8, 2], [6, 38, 6], [3, 2, 28]],
                                  [[30, 10, 15], [12, 30, 8], [6, 6, 21]])]
    seed_ab, seed_board = cl.seeds(3)
    cls = label or None
    batch = bcm.MulticlassConfusionMatrix(np.stack(mats), labels, classifier=["A", "B", "C"])
    comp = bcm.analysis.compare((batch, "A"), (batch, "C"), metric, label=cls,
                                draws=cl.COMPARE_DRAWS, random_seed=seed_ab)
    # same draws from the same seeds: the same probability, to the last digit
    assert res.comparison.probability == comp.probability
    assert res.comparison.class_label == cls
    board = bcm.analysis.leaderboard(batch, metric, label=cls, draws=cl.BOARD_DRAWS,
                                     random_seed=seed_board)
    pd_testing.assert_frame_equal(res.leaderboard_table, board.to_frame())


@pytest.mark.parametrize(("change", "where", "words"), [
    ({"metric": "f1"}, "metric", "label="),
    ({"metric": "f1", "label": "cow"}, "label", "cow"),
    ({"counts": KCLASS.replace("cat,dog,bird; 45", "cat,dog,cow; 45")}, "counts", "same classes"),
])
def test_k_class_input_errors_name_their_field(change, where, words) -> None:
    with pytest.raises(InputError) as err:
        cl.run(cl.CompareState(counts=KCLASS).replace(**change))
    assert err.value.field == where and words in err.value.message
