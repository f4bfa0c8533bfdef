"""``bayescm summarize --csv`` and ``bayescm unlabeled --csv`` read a CSV as the Upload page
does (issue 25, item 5): 0/1 labels are binary matrices (three_beta, ``--positive``
honoured), ``--truth`` names the true labels, ``group`` and ``population`` columns are
not classifiers, and stderr says which column was taken as what.

Before: a 0/1 CSV became K = 2 multiclass matrices, ``--positive`` was ignored, and
``group``/``population`` columns were read as classifiers.
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm import cli
from bayescm.app import upload_logic as ul


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def cases() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 160
    y = rng.integers(0, 2, n)
    return pd.DataFrame({
        "y_true": y, "A": np.where(rng.random(n) < 0.15, 1 - y, y),
        "B": np.where(rng.random(n) < 0.3, 1 - y, y),
        "group": rng.choice(["north", "south"], n), "population": rng.choice(["p", "q"], n)})


def write(tmp_path, frame: pd.DataFrame, name: str = "cases.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_a_binary_csv_is_read_as_binary_matrices(tmp_path, cases):
    path = write(tmp_path, cases[["y_true", "A", "B"]])
    code, out, err = run("summarize", "--csv", path, "--json", "--draws", "200",
                         "--metrics", "tpr,tnr")
    assert code == 0, err
    got = json.loads(out)
    assert got["model"] == "three_beta"
    direct = bcm.ConfusionMatrix.from_predictions(
        cases["y_true"], {"A": cases["A"], "B": cases["B"]})
    assert got["counts"] == direct.to_dict()
    assert set(got["metrics"]["A"]) == {"tpr", "tnr"}
    # which column was taken as what, on stderr
    assert "true labels 'y_true'" in err and "classifier(s) 'A', 'B'" in err
    assert "positive label '1'" in err and "binary" in err


def test_positive_is_honoured_and_truth_names_the_labels(tmp_path, cases):
    words = cases[["y_true", "A"]].replace({1: "ill", 0: "well"}).rename(
        columns={"y_true": "gold"})
    path = write(tmp_path, words)
    counts = {}
    for flag in ("--truth", "--truth-column"):
        for positive in ("ill", "well"):
            code, out, err = run("summarize", "--csv", path, flag, "gold", "--positive",
                                 positive, "--json", "--draws", "100", "--metrics", "tpr")
            assert code == 0, err
            counts[flag, positive] = json.loads(out)["counts"]
            assert f"positive label {positive!r}" in err and "true labels 'gold'" in err
    ill = bcm.ConfusionMatrix.from_predictions(words["gold"], words["A"], positive="ill",
                                               classifier="A")
    well = bcm.ConfusionMatrix.from_predictions(words["gold"], words["A"], positive="well",
                                                classifier="A")
    assert counts["--truth", "ill"] == counts["--truth-column", "ill"] == ill.to_dict()
    assert counts["--truth", "well"] == well.to_dict() != ill.to_dict()
    # without --positive the CLI cannot tell, and says how to choose
    code, _, err = run("summarize", "--csv", path, "--truth", "gold")
    assert code == 2 and "--positive" in err and "--labels" in err


def test_a_truth_column_is_the_true_labels_not_a_classifier(tmp_path, cases):
    path = write(tmp_path, cases[["y_true", "A", "B"]].rename(columns={"y_true": "truth"}))
    code, out, err = run("summarize", "--csv", path, "--json", "--draws", "100",
                         "--metrics", "acc")
    assert code == 0, err
    assert set(json.loads(out)["metrics"]) == {"A", "B"}
    assert "true labels 'truth'" in err
    # a file without one says where it looked and what to do
    path = write(tmp_path, cases[["A", "B"]], "nolabels.csv")
    code, _, err = run("summarize", "--csv", path)
    assert code == 2 and "no column of true labels" in err and "--truth" in err
    assert "bayescm unlabeled" in err


def test_group_and_population_columns_are_read_as_the_upload_page_reads_them(tmp_path,
                                                                           cases):
    path = write(tmp_path, cases)
    code, out, err = run("summarize", "--csv", path, "--json", "--draws", "100",
                         "--metrics", "tpr")
    assert code == 0, err
    got = json.loads(out)
    slices = {s["slice"]: [s[c] for c in bcm.CELLS] for s in got["slices"]}
    assert set(slices) == {f"classifier={c}|group={g}" for c in "AB"
                           for g in ("north", "south")}
    assert "population" not in "".join(slices)  # not a classifier, not a group
    assert "column 'population' not used" in err and "group(s) 'group'" in err
    # the Upload page's per-group matrices of the same file, classifier by classifier
    res = ul.analyse(ul.read_csv(path.read_bytes()), ul.UploadState())
    assert res.kind == "groups" and set(res.sliced) == {"A", "B"}
    for name, cm in res.sliced.items():
        for label, counts in zip(cm.classifiers, cm.counts.tolist(), strict=True):
            assert slices[f"classifier={name}|{label}"] == counts
    # one classifier: its slices, named by its column, as before
    code, out, err = run("summarize", "--csv", path, "--classifiers", "A", "--json",
                         "--draws", "100", "--metrics", "tpr")
    assert code == 0, err
    assert json.loads(out)["classifier"] == "A"
    assert [s["slice"] for s in json.loads(out)["slices"]] == ["group=north", "group=south"]


def test_more_than_two_labels_stay_k_class_and_refuse_positive(tmp_path):
    frame = pd.DataFrame({"y_true": list("abcabc"), "A": list("abcacb")})
    path = write(tmp_path, frame)
    code, out, err = run("summarize", "--csv", path, "--json", "--draws", "100",
                         "--metrics", "acc")
    assert code == 0 and json.loads(out)["model"] == "multiclass_rows"
    assert "K-class" in err and "labels a, b, c" in err
    code, _, err = run("summarize", "--csv", path, "--positive", "a")
    assert code == 2 and "--positive" in err and "3 labels" in err


def test_unlabeled_csv_reads_truth_population_and_group_as_the_upload_page(tmp_path, cases):
    frame = cases.astype(object).copy()
    frame.loc[40:, "y_true"] = None  # 40 verified cases
    path = write(tmp_path, frame)
    code, out, err = run("unlabeled", "--csv", path, "--json", "--draws", "100",
                         "--chains", "2", "--metrics", "tpr")
    assert code == 0, err
    got = json.loads(out)
    assert got["classifiers"] == ["A", "B"]  # not group, not population, not y_true
    assert set(got["counts"]) == {"p", "q"}
    assert "column 'group' not used" in err and "verified" in err
    res = ul.analyse(ul.read_csv(path.read_bytes()), ul.UploadState())
    assert res.kind == "agreement"
    upload = res.tables["agreement"]
    for pop, row in got["counts"].items():
        assert {k: v for k, v in row.items() if v} == \
            {k: int(v) for k, v in upload.loc[pop].items() if v}
    # one classifier without priors: refused, as on the Upload page
    path = write(tmp_path, cases[["A"]], "one.csv")
    code, _, err = run("unlabeled", "--csv", path)
    assert code == 2 and "two or more classifiers" in err


def test_empty_and_header_only_files_are_named(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    header = tmp_path / "header.csv"
    header.write_text("y_true,A\n")
    for path, words in ((empty, "is empty"), (header, "has no cases")):
        for command in ("summarize", "unlabeled"):
            code, _, err = run(command, "--csv", path)
            assert code == 2 and path.name in err and words in err, err
