import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.agreement import pattern_index, patterns
from bayescm.data import CountsError


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
    (lambda: bcm.AgreementTable.from_predictions([1, 0, 1]), "at least two"),
    (lambda: bcm.AgreementTable([[1, 2, 3, 4]], classifiers=["A"]), "at least two"),
    (lambda: bcm.AgreementTable.from_counts({"++": 1, "+-": 2, "-+": 3, "--+": 4}),
     "different lengths"),
    (lambda: bcm.AgreementTable.from_counts({"++": 1, "+-": 2, "-+": 3}), "lacks pattern"),
    (lambda: bcm.AgreementTable.from_counts({"+x": 1, "+-": 2, "-+": 3, "--": 1}), "'+' and '-'"),
    (lambda: bcm.AgreementTable([1, 2, 3, 4, 5]), "2**T"),
    (lambda: bcm.AgreementTable([1, -2, 3, 4]), "negative"),
    (lambda: bcm.AgreementTable([1, 2.5, 3, 4]), "whole number"),
    (lambda: bcm.AgreementTable([1, np.nan, 3, 4]), "finite"),
    (lambda: bcm.AgreementTable([[1, 2, 3, 4], [0, 0, 0, 0]], populations=["a", "b"]),
     "population 'b'"),
    (lambda: bcm.AgreementTable.from_predictions([1, None, 0], [1, 1, 0]), "lack a prediction"),
    (lambda: bcm.AgreementTable.from_predictions([1, 0, 0], [1, 1]), "same cases"),
])
def test_bad_tables_get_clear_errors(make, words):
    with pytest.raises(CountsError, match=None) as err:
        make()
    assert words in str(err.value)
