"""RatingsTable.from_predictions: a model under test and its judges as raters of N items."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.data.counts import CountsError

Y_PRED = ["cat", "dog", "dog", "cat", "bird"]
LLM = ["cat", "dog", "cat", None, "bird"]
HUMAN = ["cat", np.nan, "dog", "cat", "dog"]


def test_raters_are_the_model_then_the_judges_with_one_rating_per_label():
    rt = bcm.RatingsTable.from_predictions(Y_PRED, {"llm": LLM, "human": HUMAN})
    assert rt.raters == ("model", "llm", "human")
    assert rt.items == (0, 1, 2, 3, 4) and rt.labels == ("bird", "cat", "dog")
    counts = rt.counts
    # every rater's row is the one-hot of its label (zeros where it gave none)
    for r, labels in enumerate((Y_PRED, LLM, HUMAN)):
        for i, lab in enumerate(labels):
            expected = [0, 0, 0] if lab is None or lab != lab else \
                [int(lab == c) for c in rt.labels]
            assert counts[i, r].tolist() == expected
    assert rt.n_ratings == 5 + 4 + 4 and rt.gold.empty


def test_gold_as_an_array_with_missing_values_or_as_a_mapping_agree():
    by_array = bcm.RatingsTable.from_predictions(
        Y_PRED, {"llm": LLM}, gold=[None, "dog", np.nan, "cat", None])
    by_map = bcm.RatingsTable.from_predictions(Y_PRED, {"llm": LLM}, gold={1: "dog", 3: "cat"})
    assert by_array == by_map
    assert by_array.gold.to_dict() == {1: "dog", 3: "cat"}
    assert by_array.gold_index.tolist() == [-1, 2, -1, 1, -1]


def test_numeric_labels_with_nan_judges_and_labels_order():
    y = np.array([0, 1, 1, 0])
    judge = np.array([0.0, np.nan, 1.0, 1.0])  # a float column because of the NaN
    gold = np.array([np.nan, 1.0, np.nan, np.nan])
    rt = bcm.RatingsTable.from_predictions(y, judge, gold=gold, labels=[1, 0, 2])
    assert rt.raters == ("model", "judge") and rt.labels == (1, 0, 2)
    assert rt.counts[:, 1].tolist() == [[0, 1, 0], [0, 0, 0], [1, 0, 0], [1, 0, 0]]
    assert rt.gold.to_dict() == {1: 1}


def test_series_index_names_the_items_and_dataframe_judges():
    index = pd.Index(["q1", "q2", "q3"])
    y = pd.Series(["a", "b", "a"], index=index)
    judges = pd.DataFrame({"j1": ["a", "b", "b"], "j2": ["a", None, "a"]}, index=index)
    rt = bcm.RatingsTable.from_predictions(y, judges, gold=pd.Series({"q3": "b"}),
                                           model="gpt")
    assert rt.items == ("q1", "q2", "q3") and rt.raters == ("gpt", "j1", "j2")
    assert rt.gold.to_dict() == {"q3": "b"}
    # a gold Series over all items is read by position of the index
    full = bcm.RatingsTable.from_predictions(y, judges, gold=pd.Series([None, "a", None],
                                                                      index=index))
    assert full.gold.to_dict() == {"q2": "a"}


def test_a_gold_class_nobody_predicted_is_a_class():
    rt = bcm.RatingsTable.from_predictions(Y_PRED, {"llm": LLM}, gold={0: "fish"})
    assert rt.labels == ("bird", "cat", "dog", "fish") and rt.gold.to_dict() == {0: "fish"}


def test_round_trip_through_long_data():
    rt = bcm.RatingsTable.from_predictions(Y_PRED, {"llm": LLM}, gold={0: "cat"})
    back = bcm.RatingsTable.from_long(rt.to_frame(), gold="gold", labels=rt.labels,
                                      raters=rt.raters)
    assert back == rt


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"y_pred": Y_PRED, "judges": {"llm": LLM[:4]}}, "4 labels for 5 items"),
    ({"y_pred": ["cat", None, "dog"], "judges": {"llm": ["cat"] * 3}}, "missing predictions"),
    ({"y_pred": Y_PRED, "judges": {"llm": LLM}, "labels": ["cat", "dog"]},
     r"not among the labels"),
    ({"y_pred": Y_PRED, "judges": {"model": LLM}}, "the model's name"),
    ({"y_pred": Y_PRED, "judges": {}}, "No judges"),
    ({"y_pred": Y_PRED, "judges": "cat"}, "judges must be"),
    ({"y_pred": Y_PRED, "judges": {"llm": LLM}, "gold": [None] * 4}, "4 labels for 5 items"),
    ({"y_pred": Y_PRED, "judges": {"llm": LLM}, "gold": {7: "cat"}}, r"item\(s\) \[7\]"),
    ({"y_pred": Y_PRED, "judges": {"llm": LLM}, "gold": {0: "fish"},
      "labels": ["bird", "cat", "dog"]}, "'fish'"),
    ({"y_pred": [], "judges": {"llm": []}}, "empty"),
    ({"y_pred": [[0, 1]], "judges": {"llm": [[0, 1]]}}, "one-dimensional"),
    ({"y_pred": pd.Series([0, 1], index=["a", "b"]),
      "judges": {"llm": pd.Series([0, 1], index=["b", "a"])}}, "index differs"),
])
def test_bad_inputs_get_plain_errors(kwargs, match):
    y_pred, judges = kwargs.pop("y_pred"), kwargs.pop("judges")
    with pytest.raises(CountsError, match=match):
        bcm.RatingsTable.from_predictions(y_pred, judges, **kwargs)
    assert issubclass(CountsError, ValueError)
