"""Which pairs get dependent errors (bayescm.models.hui_walter.dependence)."""

from __future__ import annotations

import pytest

import bayescm as bcm
from bayescm.models.hui_walter.dependence import dependent_pairs

NAMES = ["A", "B", "C"]


def test_pairs_are_sorted_index_pairs_without_repeats():
    assert dependent_pairs(False, NAMES) == dependent_pairs(None, NAMES) == []
    assert dependent_pairs(True, NAMES) == [(0, 1), (0, 2), (1, 2)]
    assert dependent_pairs([("C", "A"), ["A", "C"], ("B", "C")], NAMES) == [(0, 2), (1, 2)]


@pytest.mark.parametrize("given", ["x", "A~B", b"AB", 3, 0.5, {"A": "B"}])
def test_what_is_not_false_true_or_a_list_of_pairs_is_refused_by_name(given):
    with pytest.raises(TypeError, match=r"conditional_dependence takes False \(none\), True"):
        dependent_pairs(given, NAMES)


@pytest.mark.parametrize(("given", "says"), [
    ([("A",)], "two different"), ([("A", "A")], "two different"), (["AB"], "two different"),
    ([("A", "Z")], r"names a classifier not in \['A', 'B', 'C'\]"),
])
def test_a_bad_pair_is_named(given, says):
    with pytest.raises(ValueError, match=says):
        dependent_pairs(given, NAMES)


def test_the_builder_refuses_a_string_before_anything_else():
    tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    with pytest.raises(TypeError, match="conditional_dependence"):
        bcm.models.hui_walter(tab, conditional_dependence="x")
    with pytest.raises(ValueError, match="between the errors of two classifiers"):
        dependent_pairs(True, ["A"])
