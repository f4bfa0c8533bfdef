"""RatingsTable: long, wide and dense input, gold labels, patterns, validation, the dataset."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayescm as bcm
from bayescm.data.datasets_ratings import anaesthesia, anaesthesia_table
from bayescm.data.ratings_patterns import collapse

LONG = pd.DataFrame({
    "item": ["u", "u", "u", "v", "v", "w", "w", "w", "x"],
    "rater": ["a", "b", "b", "a", "c", "a", "b", "c", "a"],
    "rating": ["cat", "cat", "dog", "dog", "dog", "cat", "cat", "bird", "cat"],
})


def test_from_long_counts_repeats_missing_raters_and_labels():
    rt = bcm.RatingsTable.from_long(LONG)
    assert rt.items == ("u", "v", "w", "x") and rt.raters == ("a", "b", "c")
    assert rt.labels == ("bird", "cat", "dog")  # sorted by default
    assert (rt.n_items, rt.n_raters, rt.n_classes, rt.n_ratings) == (4, 3, 3, 9)
    # item u: a said cat; b said cat once and dog once (a repeated rating); c nothing
    assert rt.counts[0].tolist() == [[0, 1, 0], [0, 1, 1], [0, 0, 0]]
    assert rt.ratings_per_item().tolist() == [3, 2, 3, 1]
    assert rt.to_xarray().dims == ("item", "rater", "rating")
    assert rt.gold.empty and (rt.gold_index == -1).all()
    # labels= fixes the order and adds a class nobody chose
    rt4 = bcm.RatingsTable.from_long(LONG, labels=["dog", "cat", "bird", "fish"])
    assert rt4.labels == ("dog", "cat", "bird", "fish")
    assert rt4.counts[0, 1].tolist() == [1, 1, 0, 0]


def test_other_column_names_and_missing_ratings_are_not_ratings():
    df = LONG.rename(columns={"item": "task", "rater": "worker", "rating": "label"})
    df.loc[9] = ["y", "a", None]  # a row without a rating: item y has none -> error
    with pytest.raises(bcm.CountsError, match=r"Item\(s\) \['y'\] have no rating"):
        bcm.RatingsTable.from_long(df, item="task", rater="worker", rating="label")
    rt = bcm.RatingsTable.from_long(df.iloc[:-1], item="task", rater="worker", rating="label")
    assert rt == bcm.RatingsTable.from_long(LONG)


def test_whole_number_floats_are_integers_and_raters_strings():
    df = pd.DataFrame({"item": [1.0, 1.0, 2.0, 2.0], "rater": [7, 8, 7, 8],
                       "rating": [1.0, np.nan, 2.0, 1.0]})
    rt = bcm.RatingsTable.from_long(df)
    assert rt.items == (1, 2) and rt.raters == ("7", "8") and rt.labels == (1, 2)
    assert all(type(x) is int for x in (*rt.items, *rt.labels))


def test_gold_from_a_column_a_mapping_and_a_series():
    df = LONG.assign(truth=[None, None, None, "dog", "dog", None, None, None, "cat"])
    by_column = bcm.RatingsTable.from_long(df, gold="truth")
    by_mapping = bcm.RatingsTable.from_long(LONG, gold={"v": "dog", "x": "cat"})
    by_series = bcm.RatingsTable.from_long(LONG, gold=pd.Series({"v": "dog", "x": "cat"}))
    assert by_column == by_mapping == by_series
    assert by_column.gold.to_dict() == {"v": "dog", "x": "cat"}
    assert by_column.gold_index.tolist() == [-1, 2, -1, 1]
    # a gold label nobody gave still becomes a class
    rt = bcm.RatingsTable.from_long(LONG, gold={"x": "fish"})
    assert rt.labels == ("bird", "cat", "dog", "fish")


def test_from_wide_with_repeated_columns_equals_from_long():
    df = anaesthesia_table()
    wide = df.assign(k=df.groupby(["item", "rater"]).cumcount()).pivot(
        index="item", columns=["rater", "k"], values="rating")
    wide.columns = [f"obs{r}_{k}" for r, k in wide.columns]
    raters = {c: c.split("_")[0][3:] for c in wide.columns}
    assert bcm.RatingsTable.from_wide(wide, raters=raters, labels=[1, 2, 3, 4]) == anaesthesia()
    # items from a column, one column per rater, a gold column, NaN = missing
    w = pd.DataFrame({"id": ["p", "q", "r"], "a": [1, 0, None], "b": [1, 1, 0],
                      "truth": [None, 1, None]})
    rt = bcm.RatingsTable.from_wide(w, item="id", gold="truth")
    assert rt.raters == ("a", "b") and rt.items == ("p", "q", "r")
    assert rt.counts[2].tolist() == [[0, 0], [1, 0]] and rt.gold.to_dict() == {"q": 1}
    with pytest.raises(bcm.CountsError, match="appear more than once"):
        bcm.RatingsTable.from_wide(pd.DataFrame({"a": [1, 0]}, index=["p", "p"]))


def test_dask_frames_are_computed():
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(LONG.assign(extra=range(len(LONG))), npartitions=3)
    assert bcm.RatingsTable.from_long(ddf) == bcm.RatingsTable.from_long(LONG)


def test_dense_constructor_round_trips_and_immutability():
    rt = anaesthesia()
    dense = bcm.RatingsTable(rt.counts, items=rt.items, raters=rt.raters, labels=rt.labels)
    assert dense == rt and hash(dense) == hash(rt)
    assert bcm.RatingsTable.from_dict(rt.to_dict()) == rt
    assert bcm.RatingsTable.from_long(rt.to_frame()) == rt
    g = bcm.RatingsTable.from_long(LONG, gold={"v": "dog"})
    assert bcm.RatingsTable.from_long(g.to_frame(), gold="gold") == g
    assert bcm.RatingsTable.from_dict(g.to_dict()) == g
    with pytest.raises(AttributeError, match="immutable"):
        rt.counts_ = 1
    with pytest.raises(ValueError, match="read-only"):
        rt.entries[3][0] = 5
    assert "45 items, 5 raters" in repr(rt)
    defaults = bcm.RatingsTable(np.ones((2, 3, 2)))
    assert defaults.raters == ("r0", "r1", "r2") and defaults.labels == (0, 1)


def test_patterns_collapse_identical_items_and_keep_gold_apart():
    rt = anaesthesia()
    pat = rt.patterns()
    assert len(pat) == 27 and pat.multiplicity.sum() == 45
    counts = rt.counts
    np.testing.assert_array_equal(pat.counts[pat.item_pattern], counts)  # exact
    assert pat.item_pattern[pat.first_item].tolist() == list(range(len(pat)))
    assert np.all(np.diff(pat.first_item) > 0)  # numbered by their first item
    # CSR entries are the nonzero counts
    for p in (0, 5, 26):
        lo, hi = pat.indptr[p], pat.indptr[p + 1]
        dense = np.zeros_like(pat.counts[p])
        dense[pat.rater[lo:hi], pat.label[lo:hi]] = pat.count[lo:hi]
        np.testing.assert_array_equal(dense, pat.counts[p])
    # patient 1 (all say 1) has 9 twins; making one of them gold splits it off
    first = pat.multiplicity[pat.item_pattern[0]]
    gold = bcm.RatingsTable.from_long(anaesthesia_table(), gold={1: 1}).patterns()
    assert len(gold) == 28 and gold.multiplicity[gold.item_pattern[0]] == 1
    assert gold.multiplicity[gold.item_pattern[12]] == first - 1  # patient 13: same ratings
    assert gold.gold_mask[gold.item_pattern[0]].tolist() == [True, False, False, False]


def test_the_anaesthesia_data_are_dawid_and_skenes():
    df = anaesthesia_table()
    assert df.shape == (315, 3) and list(df.columns) == ["item", "rater", "rating"]
    rt = anaesthesia()
    assert rt.labels == (1, 2, 3, 4) and rt.raters == ("1", "2", "3", "4", "5")
    per_rater = rt.counts.sum(axis=(0, 2))
    assert per_rater.tolist() == [135, 45, 45, 45, 45]  # observer 1 rated three times
    assert rt.counts[:, 0].sum(axis=1).tolist() == [3] * 45
    # Table 1's first patients (observer 1's three ratings, then observers 2-5)
    assert rt.counts[0].argmax(axis=1).tolist() == [0, 0, 0, 0, 0]
    assert rt.counts[1, 0].tolist() == [0, 0, 3, 0] and rt.counts[1, 1].tolist() == [0, 0, 0, 1]
    assert rt.counts[6, 0].tolist() == [2, 1, 0, 0]  # patient 7: rater's transcription
    assert rt.counts.sum(axis=(0, 1)).tolist() == [128, 124, 48, 15]


@pytest.mark.parametrize(("build", "words"), [
    (lambda: bcm.RatingsTable.from_long(LONG, item="task"), r"Column\(s\) \['task'\]"),
    (lambda: bcm.RatingsTable.from_long(LONG.iloc[:0]), "empty"),
    (lambda: bcm.RatingsTable.from_long([1, 2]), "DataFrame"),
    (lambda: bcm.RatingsTable.from_long(LONG.assign(item=[None, *LONG.item[1:]])),
     "Column 'item' has missing values"),
    (lambda: bcm.RatingsTable.from_long(LONG, labels=["cat", "dog"]),
     r"Rating\(s\) \['bird'\] are not among the labels"),
    (lambda: bcm.RatingsTable.from_long(LONG.assign(rating="cat")), "at least two classes"),
    (lambda: bcm.RatingsTable.from_long(LONG, labels=["cat", "cat", "dog", "bird"]), "unique"),
    (lambda: bcm.RatingsTable.from_long(LONG, gold={"u": "fish"}, labels=["bird", "cat", "dog"]),
     "Gold label 'fish' of item 'u' is not among the labels"),
    (lambda: bcm.RatingsTable.from_long(LONG, gold={"zz": "cat"}),
     r"item\(s\) \['zz'\] that have no ratings"),
    (lambda: bcm.RatingsTable.from_long(LONG.assign(g=["cat", "dog", *[None] * 7]), gold="g"),
     "different gold labels"),
    (lambda: bcm.RatingsTable.from_long(LONG, gold=3), "gold must be a column name"),
    (lambda: bcm.RatingsTable.from_long(LONG, raters=["a", "b"]), r"\['c'\] not listed"),
    (lambda: bcm.RatingsTable.from_long(LONG, raters=["a", "b", "c", "d"]),
     r"\['d'\] without a rating"),
    (lambda: bcm.RatingsTable(np.ones((2, 2))), "items × raters × labels"),
    (lambda: bcm.RatingsTable(-np.ones((1, 2, 2))), "is negative"),
    (lambda: bcm.RatingsTable(np.full((1, 2, 2), 0.5)), "not a whole number"),
    (lambda: bcm.RatingsTable(np.full((1, 2, 2), np.nan)), "not finite"),
    (lambda: bcm.RatingsTable(np.ones((1, 2, 2), dtype=bool)), "booleans"),
    (lambda: bcm.RatingsTable(np.zeros((2, 2, 2))), "empty"),
    (lambda: bcm.RatingsTable(np.array([[[1, 0]], [[0, 0]]])), r"Item\(s\) \[1\] have no rating"),
    (lambda: bcm.RatingsTable(np.ones((1, 2, 2)), raters=["a", "a"]), "unique"),
    (lambda: bcm.RatingsTable(np.ones((1, 2, 2)), raters=["a"]), "1 rater names given"),
    (lambda: bcm.RatingsTable(np.ones((2, 1, 2)), gold=[0]), "gold has 1 entries"),
    (lambda: bcm.RatingsTable(np.ones((1, 1, 1))), "at least two classes"),
    # ratings 1 and "1" were two classes; list ratings met pandas' "must be 1-dimensional"
    (lambda: bcm.RatingsTable.from_long(LONG.assign(rating=[1, "1"] * 4 + [0])),
     "'rating' has 1 and '1'"),
    (lambda: bcm.RatingsTable.from_long(LONG.assign(rating=[[1]] * 9)),
     r"Ratings must be hashable labels .* got \[1\]"),
])
def test_bad_input_gets_a_counts_error_naming_it(build, words):
    with pytest.raises(bcm.CountsError, match=words):
        build()


def test_to_agreement_is_the_binary_table():
    df = pd.DataFrame({"item": [0, 0, 0, 1, 1, 2, 2, 2], "rater": list("ABCABABC"),
                       "rating": [1, 1, 0, 0, 0, 1, 0, 1]})
    rt = bcm.RatingsTable.from_long(df, gold={2: 1})
    tab = rt.to_agreement()
    want = bcm.AgreementTable.from_predictions(
        {"A": [1, 0, 1], "B": [1, 0, 0], "C": [0, None, 1]}, y_true=[None, None, 1])
    assert tab == want
    with pytest.raises(bcm.CountsError, match="binary"):
        bcm.RatingsTable.from_long(LONG).to_agreement()
    with pytest.raises(bcm.CountsError, match="more than once"):
        bcm.RatingsTable.from_long(df.assign(rater="A")).to_agreement()


def test_collapse_of_an_item_without_entries_is_refused_upstream():
    # collapse itself takes what RatingsTable validated: every item has an entry
    pat = collapse(np.array([0, 1]), np.array([0, 0]), np.array([1, 1]), np.array([1, 1]),
                   np.array([-1, 0]), 1, 2)
    assert len(pat) == 2 and pat.gold.tolist() == [-1, 0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.sampled_from("abcd"),
                          st.sampled_from(["x", "y", "z"])), min_size=1, max_size=40),
       st.dictionaries(st.integers(0, 8), st.sampled_from(["x", "y", "z"]), max_size=3))
def test_properties_of_any_long_table(rows, gold):
    df = pd.DataFrame(rows, columns=["item", "rater", "rating"])
    gold = {i: g for i, g in gold.items() if i in set(df["item"])}
    if len(set(df["rating"]) | set(gold.values())) < 2:
        with pytest.raises(bcm.CountsError, match="at least two classes"):
            bcm.RatingsTable.from_long(df, gold=gold)
        return
    rt = bcm.RatingsTable.from_long(df, gold=gold)
    assert bcm.RatingsTable.from_long(df, gold=gold, raters=rt.raters[::-1]).raters == \
        rt.raters[::-1]
    assert rt.n_ratings == len(df) and rt.n_items == df["item"].nunique()
    pat = rt.patterns()
    assert pat.multiplicity.sum() == rt.n_items
    np.testing.assert_array_equal(pat.counts[pat.item_pattern], rt.counts)
    np.testing.assert_array_equal(pat.gold[pat.item_pattern], rt.gold_index)
    assert len(np.unique(np.concatenate([pat.counts.reshape(len(pat), -1),
                                         pat.gold[:, None]], axis=1), axis=0)) == len(pat)
    assert bcm.RatingsTable.from_dict(rt.to_dict()) == rt
    back = bcm.RatingsTable.from_long(rt.to_frame(), gold="gold" if gold else None,
                                      labels=rt.labels, raters=rt.raters)
    assert back == rt


def test_raters_that_print_alike_are_refused():
    """Raters 1 and "1" were one rater with two ratings per item: refused."""
    frame = pd.DataFrame({"item": [1, 2, 1, 2], "rater": [1, 1, "1", "1"],
                          "rating": ["x", "y", "x", "x"]})
    with pytest.raises(bcm.CountsError, match="'rater' has 1 and '1'"):
        bcm.RatingsTable.from_long(frame)
