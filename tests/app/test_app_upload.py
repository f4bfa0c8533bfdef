"""The Upload page's logic (bayescm.app.upload_logic): which analysis a CSV gets,
and that its numbers are the library's (and the closed forms') for the same cases."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.app import compare_logic, nolabels_logic
from bayescm.app import state as url_state
from bayescm.app import upload_logic as ul
from bayescm.app.pages.one_classifier import OneClassifier
from bayescm.app.pages_common import InputError


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def cases() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 240
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.15, 1 - y, y)
    b = np.where(rng.random(n) < 0.25, 1 - y, y)
    group = rng.choice(["north", "south"], n)
    return pd.DataFrame({"y_true": y, "A": a, "B": b, "group": group})


def test_one_classifier_gets_its_exact_posterior(cases) -> None:
    frame = ul.read_csv(_csv(cases[["y_true", "A"]]))
    res = ul.analyse(frame, ul.UploadState())
    assert res.kind == "one"
    cm = bcm.ConfusionMatrix.from_predictions(cases["y_true"], cases["A"], classifier="A")
    assert res.tables["counts"].equals(cm.to_frame())
    tp, fn = cm.to_dict()["tp"], cm.to_dict()["fn"]
    # TPR ~ Beta(tp + 1, fn + 1); 20,000 i.i.d. draws: 4 sd of the mean
    beta = (tp + 1, fn + 1)
    sd = np.sqrt(beta[0] * beta[1] / (sum(beta) ** 2 * (sum(beta) + 1)))
    shown = res.tables["summary"].loc[("A", "tpr"), "mean"]
    assert shown == pytest.approx(beta[0] / sum(beta), abs=4 * sd / np.sqrt(20_000))
    # the numbers of the One-classifier page the result links to, opened from the link
    one = OneClassifier()
    query = {k: v[-1] for k, v in parse_qs(urlencode(res.query)).items()}
    assert url_state.restore(one.state, query) == []
    # (the page calls the classifier "your classifier", the file "A")
    pd.testing.assert_frame_equal(one.analysis.table.droplevel("classifier"),
                                  res.tables["summary"].droplevel("classifier"))


def test_two_classifiers_get_the_paired_comparison(cases) -> None:
    res = ul.analyse(ul.read_csv(_csv(cases[["y_true", "A", "B"]])), ul.UploadState())
    assert (res.kind, res.page) == ("compare", "compare")
    assert isinstance(res.state, compare_logic.CompareState)
    direct = bcm.analysis.compare_paired(
        cases["y_true"], cases["A"], cases["B"], "ba", draws=compare_logic.COMPARE_DRAWS,
        random_seed=compare_logic.seeds(1)[0])
    assert res.tables["comparison"].loc[("A", "B"), "p_better"] == direct.probability
    # the link's state reproduces the page's result
    again = compare_logic.run(compare_logic.CompareState.from_query(res.state.to_query()))
    assert again.comparison.probability == direct.probability


def test_groups_get_the_metrics_per_slice(cases) -> None:
    res = ul.analyse(ul.read_csv(_csv(cases[["y_true", "A", "group"]])), ul.UploadState())
    assert res.kind == "groups"
    table = res.tables["summary"]
    for g in ("north", "south"):
        part = cases[cases["group"] == g]
        tp = int(((part["y_true"] == 1) & (part["A"] == 1)).sum())
        fn = int(((part["y_true"] == 1) & (part["A"] == 0)).sum())
        mean = (tp + 1) / (tp + fn + 2)
        sd = np.sqrt(mean * (1 - mean) / (tp + fn + 3))
        row = table.xs("tpr", level="metric").loc[("A", f"group={g}"), "mean"]
        assert row == pytest.approx(mean, abs=4 * sd / np.sqrt(20_000))


def test_unlabelled_and_partly_verified_cases_get_the_agreement_table(cases) -> None:
    frame = cases[["A", "B"]].astype(object).copy()
    frame["population"] = cases["group"]
    frame.loc[:4, "B"] = None  # missing results
    res = ul.analyse(ul.read_csv(_csv(frame)), ul.UploadState())
    direct = bcm.AgreementTable.from_predictions(
        {"A": frame["A"].to_numpy(), "B": frame["B"].to_numpy()},
        population=frame["population"].to_numpy())
    assert (res.kind, res.page) == ("agreement", "nolabels")
    assert nolabels_logic.parse_table(res.state.table) == direct
    assert res.detail.identified == "data"
    # y_true known for some cases only: verified cells
    part = cases[["y_true", "A", "B"]].astype(object).copy()
    part.loc[20:, "y_true"] = None
    res = ul.analyse(ul.read_csv(_csv(part)), ul.UploadState())
    tab = nolabels_logic.parse_table(res.state.table)
    assert res.kind == "agreement"
    assert sum(tab.to_frame().loc["all", [p for p in tab.patterns if "|D" in p]]) == 20


@pytest.mark.parametrize(("text", "state", "where", "words"), [
    (b"y_true\n1\n0", ul.UploadState(), "file", "No classifier columns"),
    (b"y_true,A\n", ul.UploadState(), "file", "no cases"),
    (b"A\n1\n0", ul.UploadState(), "file", "at least two classifiers"),
    (b"y_true,A\n1,1\n0,0", ul.UploadState(positive="yes"), "positive", "'yes'"),
    (b"y_true,A\n1,1\n0,", ul.UploadState(), "file", "contains NaN"),
])
def test_bad_files_say_what_to_fix(text, state, where, words) -> None:
    with pytest.raises(InputError) as caught:
        ul.analyse(ul.read_csv(text), state)
    assert caught.value.field == where
    assert words in caught.value.message


def test_library_message_for_unusable_labels() -> None:
    text = b"y_true,A\nill,ill\nwell,ill\nwell,well"
    with pytest.raises(InputError) as caught:
        ul.analyse(ul.read_csv(text), ul.UploadState())
    with pytest.raises(ValueError) as direct:
        bcm.ConfusionMatrix.from_predictions(["ill", "well", "well"], ["ill", "ill", "well"],
                                             classifier="A")
    assert caught.value.message == str(direct.value)


def test_one_classifier_links_to_the_one_classifier_page(cases) -> None:
    res = ul.analyse(ul.read_csv(_csv(cases[["y_true", "A"]])), ul.UploadState())
    cm = bcm.ConfusionMatrix.from_predictions(cases["y_true"], cases["A"])
    assert res.page == "one"
    assert {k: int(res.query[k]) for k in cm.to_dict()} == cm.to_dict()
    assert res.query["metrics"] == ",".join(ul.SUMMARY_METRICS) and "seed" not in res.query
    labels = np.array(["cat", "dog", "bird"])
    y = labels[cases["y_true"] + (cases["group"] == "north")]
    pred = labels[cases["A"] + (cases["group"] == "north")]
    res = ul.analyse(pd.DataFrame({"y_true": y, "A": pred}), ul.UploadState())
    mc = bcm.MulticlassConfusionMatrix.from_predictions(y, pred)
    head, *rows = res.query["matrix"].split("; ")
    assert head.split(",") == list(mc.labels)
    assert [[int(v) for v in r.split(",")] for r in rows] == mc.counts[0].tolist()


def test_messages_say_what_to_do() -> None:
    # a Windows-1252 file (Excel's plain "CSV"): where the bad byte is, and how to save it
    latin = "y_true,A\nmalade,malade\nsain,malade\nsain,sain\nété,été".encode("cp1252")
    with pytest.raises(InputError) as caught:
        ul.read_csv(latin)
    first_bad = latin.index("é".encode("cp1252"))
    assert caught.value.field == "file"
    assert f"at byte {first_bad}" in caught.value.message
    assert "save it as CSV UTF-8 (Excel: Save As > CSV UTF-8)" in caught.value.message
    # a row longer than the header: pandas' line and count, and what to check
    with pytest.raises(InputError) as caught:
        ul.read_csv(b"y_true,A\n1,1\n0,0,1,1\n")
    message = caught.value.message
    assert caught.value.field == "file"
    assert "expected 2 fields in line 3, saw 4" in message
    assert all(w in message for w in ("separator", "names the columns", "quote"))
    assert "C error" not in message and "tokenizing" not in message
    # a positive label that is not in the file: the labels that are
    labelled = b"y_true,A\nill,ill\nwell,ill\nwell,well"
    with pytest.raises(InputError) as caught:
        ul.analyse(ul.read_csv(labelled), ul.UploadState(positive="sick"))
    assert caught.value.field == "positive"
    assert "'sick' is not among the labels in column y_true of the file: ill, well." in \
        caught.value.message
    # unlabelled: the labels the classifiers predict
    with pytest.raises(InputError) as caught:
        ul.analyse(ul.read_csv(b"A,B\nyes,no\nno,no\nyes,yes"), ul.UploadState(positive="1"))
    assert "'1' is not among the labels the classifiers predict: no, yes." in \
        caught.value.message
    # the same check on the Compare page's paired cases, one function and one message
    state = compare_logic.CompareState(design="paired", positive="sick",
                                       cases="y_true, A, B\nill, ill, well\nwell, ill, well")
    with pytest.raises(InputError) as caught:
        compare_logic.run(state)
    assert caught.value.field == "positive"
    assert "'sick' is not among the true labels (column y_true): ill, well." in \
        caught.value.message


# -- issue 25, item 5: the columns read as the CLI reads them; empty files named ----------
def test_a_truth_column_is_the_true_labels_not_a_fourth_classifier(cases) -> None:
    frame = cases[["y_true", "A", "B"]].assign(C=cases["A"]).rename(
        columns={"y_true": "truth"})
    res = ul.analyse(ul.read_csv(_csv(frame)), ul.UploadState())
    assert res.kind == "compare"  # labelled cases of A, B and C, not 4 unlabelled columns
    assert list(res.tables["leaderboard"].index.sort_values()) == ["A", "B", "C"]
    assert ul.columns(frame, ul.UploadState()).describe() == \
        "true labels 'truth'; classifier(s) 'A', 'B', 'C'"


def test_a_missing_truth_or_group_column_is_named_in_its_field(cases) -> None:
    frame = ul.read_csv(_csv(cases[["y_true", "A", "B"]]))
    for field, state, name in (("truth", ul.UploadState(truth="gold"), "'gold'"),
                               ("group", ul.UploadState(group="sex, site"), "'sex', 'site'"),
                               ("population", ul.UploadState(population="site"), "'site'")):
        with pytest.raises(InputError) as caught:
            ul.analyse(frame, state)
        assert caught.value.field == field and name in caught.value.message
        assert "y_true, A, B" in caught.value.message  # the columns there are
    # no true-label column at all, and one classifier: the message says which it looked for
    with pytest.raises(InputError) as caught:
        ul.analyse(ul.read_csv(b"A\n1\n0"), ul.UploadState())
    assert "y_true or truth" in caught.value.message and "the file has A" in \
        caught.value.message


def test_an_empty_file_gets_a_message() -> None:
    for text in (b"", b"\n\n", b"\xef\xbb\xbf"):
        with pytest.raises(InputError) as caught:
            ul.read_csv(text)
        assert caught.value.field == "file" and caught.value.message == ul.EMPTY
    # the page: a browser sends an empty file as a file name without a value
    from bayescm.app.pages.upload import Upload

    page = Upload()
    page.file.param.update(filename="cases.csv", value=_csv(pd.DataFrame(
        {"y_true": [1, 0, 1], "A": [1, 0, 0]})))
    assert page.result is not None and page.results.objects
    page.file.param.update(filename="empty.csv", value=None)
    assert page.notes["file"].text == ul.EMPTY
    assert page.result is None and page.results.objects == []
    assert "No analysis" in page.found.object
