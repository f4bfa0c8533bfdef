import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.data.confusion import CountsError


def test_counts_and_views(cocaine):
    assert cocaine.to_dict() == {"tp": 26, "fn": 0, "fp": 2, "tn": 6}
    assert cocaine.n.tolist() == [34]
    assert cocaine.n_pos.tolist() == [26]
    assert cocaine.n_neg.tolist() == [8]
    da = cocaine.to_xarray()
    assert da.dims == ("classifier", "cell")
    assert da.sel(cell="fp").item() == 2


def test_immutable(cocaine):
    with pytest.raises(AttributeError):
        cocaine.tp = 3
    with pytest.raises(ValueError):
        cocaine.counts[0, 0] = 1


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(tp=-1, fn=0, fp=2, tn=6), ["'tp'", "negative"]),
        (dict(tp=2.5, fn=0, fp=2, tn=6), ["'tp'", "whole number"]),
        (dict(tp=1, fn=float("nan"), fp=2, tn=6), ["'fn'", "finite"]),
        (dict(tp=1, fn=0, fp=float("inf"), tn=6), ["'fp'", "finite"]),
        (dict(tp=0, fn=0, fp=0, tn=0), ["zero", "empty"]),
        (dict(tp=[1, 2], fn=[0], fp=[1, 1], tn=[1, 1]), ["lengths"]),
        (dict(tp=[[1, 2]], fn=0, fp=1, tn=1), ["'tp'", "shape"]),
        (dict(tp="a", fn=0, fp=1, tn=1), ["'tp'"]),
    ],
)
def test_bad_counts_are_named(kwargs, words):
    with pytest.raises(CountsError) as err:
        bcm.ConfusionMatrix(**kwargs)
    for w in words:
        assert w in str(err.value)


def test_error_names_the_classifier():
    with pytest.raises(CountsError, match=r"'fn' of classifier 'b' is negative"):
        bcm.ConfusionMatrix(tp=[1, 2], fn=[0, -3], fp=[1, 1], tn=[1, 1], classifier=["a", "b"])
    with pytest.raises(CountsError, match="classifier 'b'"):
        bcm.ConfusionMatrix(tp=[1, 0], fn=[0, 0], fp=[1, 0], tn=[1, 0], classifier=["a", "b"])
    with pytest.raises(CountsError, match="unique"):
        bcm.ConfusionMatrix(tp=[1, 2], fn=[0, 0], fp=[1, 1], tn=[1, 1], classifier=["a", "a"])


def test_from_frame_and_batch_selection():
    df = pd.DataFrame({"TP": [26, 24], "FN": [0, 2], "FP": [2, 2], "TN": [6, 6], "x": [1, 2]},
                      index=["7a", "7b"])
    cms = bcm.ConfusionMatrix.from_frame(df)
    assert cms.classifiers == ("7a", "7b")
    assert cms["7b"].to_dict() == {"tp": 24, "fn": 2, "fp": 2, "tn": 6}
    with pytest.raises(CountsError, match=r"\['tn'\]"):
        bcm.ConfusionMatrix.from_frame(df.drop(columns="TN"))
    bad = df.copy()
    bad.loc["7b", "FP"] = -1
    with pytest.raises(CountsError, match="'fp' of classifier '7b'"):
        bcm.ConfusionMatrix.from_frame(bad)


def test_from_predictions_any_labels():
    y = np.array(["sick", "sick", "well", "well", "well"])
    p = np.array(["sick", "well", "sick", "well", "well"])
    cm = bcm.ConfusionMatrix.from_predictions(y, p, positive="sick")
    assert cm.to_dict() == {"tp": 1, "fn": 1, "fp": 1, "tn": 2}
    flipped = bcm.ConfusionMatrix.from_predictions(y, p, positive="well")
    assert flipped.to_dict() == {"tp": 2, "fn": 1, "fp": 1, "tn": 1}
    assert bcm.ConfusionMatrix.from_predictions([0, 1, 1], [1, 1, 0]).to_dict() == {
        "tp": 1, "fn": 1, "fp": 1, "tn": 0}
    two = bcm.ConfusionMatrix.from_predictions([True, False], {"a": [True, True],
                                                               "b": [False, False]})
    assert two.classifiers == ("a", "b") and two.tp.tolist() == [1, 0]


def test_from_predictions_errors():
    with pytest.raises(CountsError, match="positive="):
        bcm.ConfusionMatrix.from_predictions(["a", "b"], ["a", "a"])
    with pytest.raises(CountsError, match="two labels"):
        bcm.ConfusionMatrix.from_predictions([0, 1, 2], [0, 1, 1])
    with pytest.raises(CountsError, match="paired"):
        bcm.ConfusionMatrix.from_predictions([0, 1, 1], [0, 1])
    with pytest.raises(CountsError, match="not one of the labels"):
        bcm.ConfusionMatrix.from_predictions(["a", "b"], ["a", "a"], positive="c")
    with pytest.raises(CountsError, match="NaN"):
        bcm.ConfusionMatrix.from_predictions([0.0, np.nan], [0, 1])
