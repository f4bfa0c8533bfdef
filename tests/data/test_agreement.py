import itertools

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.data.agreement import pattern_index, pattern_matrix, patterns
from bayescm.data.confusion import CountsError


def test_patterns_and_index():
    assert patterns(3)[:3] == ("+++", "++-", "+-+")
    calls = np.array([[True, False, True], [False, False, False]])
    assert [patterns(3)[i] for i in pattern_index(calls)] == ["+-+", "---"]


def test_constructors_agree():
    a = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    b = bcm.AgreementTable([40, 3, 7, 100])
    c = bcm.AgreementTable.from_frame(pd.DataFrame([[40, 3, 7, 100]], index=["all"],
                                                   columns=["++", "+-", "-+", "--"]))
    assert a == b == c
    assert a.to_xarray().dims == ("population", "pattern")
    y_a = ["pos"] * 43 + ["neg"] * 107
    y_b = ["pos"] * 40 + ["neg"] * 3 + ["pos"] * 7 + ["neg"] * 100
    d = bcm.AgreementTable.from_predictions(y_a, y_b, positive="pos")
    assert d == a


def test_populations_from_predictions():
    tab = bcm.AgreementTable.from_predictions(
        {"rf": [1, 1, 0, 0, 1], "knn": [1, 0, 0, 1, 1]}, population=["x", "x", "y", "y", "y"])
    assert tab.classifiers == ("rf", "knn") and tab.populations == ("x", "y")
    assert tab.to_frame().loc["y"].tolist() == [1, 0, 1, 1]


@pytest.mark.parametrize(("make", "words"), [
    (lambda: bcm.AgreementTable.from_predictions(), "predictions of a classifier"),
    (lambda: bcm.AgreementTable([[1, 2, 3, 4]], classifiers=["A"]), "2 outcome patterns"),
    (lambda: bcm.AgreementTable([3]), "2**T"),
    (lambda: bcm.AgreementTable.from_counts({"++": 1, "+-": 2, "-+": 3, "--+": 4}),
     "different lengths"),
    (lambda: bcm.AgreementTable.from_counts({"++": 1, "+-": 2, "-+": 3}), "lacks pattern"),
    (lambda: bcm.AgreementTable.from_counts({"+x": 1, "+-": 2, "-+": 3, "--": 1}),
     "'+', '-' or '?'"),
    (lambda: bcm.AgreementTable.from_counts({"++|D": 1, "+-": 2, "-+": 3, "--": 1}),
     "'|D+'"),
    (lambda: bcm.AgreementTable([[1, 2]], patterns=["+?", "+?"]), "unique"),
    (lambda: bcm.AgreementTable([[1, 2]], patterns=["+"]), "1 pattern names"),
    (lambda: bcm.AgreementTable.from_predictions([None, None], [None, None]),
     "Every prediction is missing"),
    (lambda: bcm.AgreementTable.from_predictions([1, 0], [1, 1], y_true=[1]), "y_true"),
    (lambda: bcm.AgreementTable([1, 2, 3, 4, 5]), "2**T"),
    (lambda: bcm.AgreementTable([1, -2, 3, 4]), "negative"),
    (lambda: bcm.AgreementTable([1, 2.5, 3, 4]), "whole number"),
    (lambda: bcm.AgreementTable([1, np.nan, 3, 4]), "finite"),
    (lambda: bcm.AgreementTable([[1, 2, 3, 4], [0, 0, 0, 0]], populations=["a", "b"]),
     "population 'b'"),
    (lambda: bcm.AgreementTable.from_predictions([1, 0, 0], [1, 1]), "same cases"),
])
def test_bad_tables_get_clear_errors(make, words):
    with pytest.raises(CountsError, match=None) as err:
        make()
    assert words in str(err.value)


# -- missing results, verified cases, one classifier ------------------------------------
def _brute_cell_prob(cell, se, sp, prev):
    """Pr(cell) by enumerating the class and every classifier's result (independent of
    bayescm.data.agreement_cells): a '?' accepts either result; '|D+'/'|D-' fixes the class."""
    calls, _, truth = cell.partition("|D")
    total = 0.0
    for d in ("+", "-"):
        if truth and truth != d:
            continue
        w = prev if d == "+" else 1 - prev
        for results in itertools.product("+-", repeat=len(calls)):
            if any(c != "?" and c != r for c, r in zip(calls, results, strict=True)):
                continue
            p = w
            for t, r in enumerate(results):
                pos = se[t] if d == "+" else 1 - sp[t]
                p *= pos if r == "+" else 1 - pos
            total += p
    return total


def test_cell_design_sums_missing_results_out_and_fixes_the_verified_class():
    rng = np.random.default_rng(3)
    se, sp, prev = rng.uniform(0.5, 1, 3), rng.uniform(0.5, 1, 3), 0.3
    tab = bcm.AgreementTable.from_counts(
        {**{p: 1 for p in patterns(3)}, "+?-": 2, "??+": 1, "-+-|D+": 1, "???|D-": 4})
    d = tab.design()
    r = pattern_matrix(3)
    ppos = np.prod(np.where(r == 1, se, 1 - se), axis=1)
    pneg = np.prod(np.where(r == 1, 1 - sp, sp), axis=1)
    got = prev * d.pos @ ppos + (1 - prev) * d.neg @ pneg
    want = [_brute_cell_prob(c, se, sp, prev) for c in tab.patterns]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # each block's cells are one multinomial: their probabilities sum to one
    sums = np.bincount(d.block, weights=got)
    np.testing.assert_allclose(sums, 1.0, rtol=1e-12)
    assert len(d.blocks) == 5 and not d.complete
    assert bcm.AgreementTable.from_counts({p: 1 for p in patterns(3)}).design().complete


def test_from_predictions_with_missing_results_and_labels_matches_a_hand_count():
    rng = np.random.default_rng(5)
    n = 400
    a = rng.integers(0, 2, n).astype(object)
    b = rng.integers(0, 2, n).astype(object)
    y = rng.integers(0, 2, n).astype(object)
    a[rng.random(n) < 0.2] = None
    b[rng.random(n) < 0.1] = np.nan
    y[rng.random(n) < 0.7] = None
    pop = np.where(rng.random(n) < 0.5, "s1", "s2")
    tab = bcm.AgreementTable.from_predictions(a, b, population=pop, y_true=y)

    def char(v):
        return "?" if v is None or v != v else ("+" if v == 1 else "-")

    hand = {}
    for i in range(n):
        cell = char(a[i]) + char(b[i]) + ("" if y[i] is None else ("|D+" if y[i] == 1 else "|D-"))
        hand[(pop[i], cell)] = hand.get((pop[i], cell), 0) + 1
    frame = tab.to_frame()
    for (p, cell), k in hand.items():
        assert frame.loc[p, cell] == k
    assert frame.to_numpy().sum() == n
    # the same table from counts, and through the constructor with cells in another order
    same = bcm.AgreementTable.from_counts({p: frame.loc[p].to_dict() for p in frame.index})
    assert same == tab
    cols = list(reversed(tab.patterns))
    assert bcm.AgreementTable(frame[cols].to_numpy(), patterns=cols,
                              populations=list(frame.index)) == tab
    assert bcm.AgreementTable.from_frame(frame) == tab


def test_one_classifier_table():
    tab = bcm.AgreementTable.from_counts({"+": 90, "-": 10})
    assert tab.classifiers == ("A",) and tab.patterns == ("+", "-") and tab.complete
    assert bcm.AgreementTable.from_predictions([1] * 9 + [0]) == bcm.AgreementTable([9, 1])
