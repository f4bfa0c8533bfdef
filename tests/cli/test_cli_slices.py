"""``bayescm summarize --csv FILE --groups ... [--time COL --window ...]`` (issue 14): one
classifier's predictions summarised per slice, run through the installed console
script, checked against counts made by a loop over the cases and each slice's exact
posterior (flat priors: TPR ~ Beta(1 + tp, 1 + fn))."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm import cli

# the console script pip installed next to this Python (pyproject's [project.scripts]),
# run on the bayescm under test
SCRIPT = Path(sys.executable).with_name("bayescm")
ROOT = Path(bcm.__file__).resolve().parents[1]


def console(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([str(SCRIPT), *argv], capture_output=True, text=True, env=env,
                          timeout=300)


def cases(path: Path) -> pd.DataFrame:
    """120 cases; (M, b) never occurs (an empty slice); a stray column of scores."""
    rng = np.random.default_rng(21)
    n = 120
    sex = rng.choice(["F", "M"], n)
    site = np.where(sex == "M", "a", rng.choice(["a", "b"], n))
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"y_true": y, "pred": np.where(rng.random(n) < 0.8, y, 1 - y),
                       "sex": sex, "site": site, "score": rng.random(n).round(3),
                       "date": (pd.Timestamp("2024-05-06")
                                + pd.to_timedelta(rng.integers(0, 21, n), "D")).strftime(
                                    "%Y-%m-%d")})
    df.to_csv(path, index=False)
    return df


def brute(df: pd.DataFrame) -> dict[str, list[int]]:
    out = {f"sex={s}|site={t}": [0, 0, 0, 0] for s, t in itertools.product("FM", "ab")}
    for row in df.itertuples():
        cell = {(1, 1): 0, (1, 0): 1, (0, 1): 2, (0, 0): 3}[(row.y_true, row.pred)]
        out[f"sex={row.sex}|site={row.site}"][cell] += 1
    return out


def test_console_script_summarises_each_slice_of_one_classifier(tmp_path):
    df = cases(tmp_path / "preds.csv")
    run = console("summarize", "--csv", str(tmp_path / "preds.csv"), "--groups", "sex", "site",
                  "--classifiers", "pred", "--metrics", "tpr,tnr", "--draws", "2000",
                  "--seed", "3", "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["classifier"] == "pred" and out["model"] == "three_beta"
    assert out["sampler"] == "exact"
    expected = brute(df)
    assert [s["slice"] for s in out["slices"]] == list(expected)
    for s in out["slices"]:
        assert [s[c] for c in ("tp", "fn", "fp", "tn")] == expected[s["slice"]]
        assert s["n"] == sum(expected[s["slice"]]) and s["empty"] == (s["n"] == 0)
        assert s["sex"] + s["site"] == s["slice"][4] + s["slice"][-1]
    assert [s["empty"] for s in out["slices"]] == [False, False, False, True]
    for label, (tp, fn, _, _) in expected.items():
        a, b = 1 + tp, 1 + fn
        sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        # 4 chains x 2,000 i.i.d. draws: the mean's standard error is sd / sqrt(8,000)
        assert abs(out["metrics"][label]["tpr"]["mean"] - a / (a + b)) < 5 * sd / np.sqrt(8000)
    assert set(out["metrics"]["sex=M|site=b"]) == {"tpr", "tnr"}


def test_console_script_prints_time_windows_and_flags_empty_slices(tmp_path):
    df = cases(tmp_path / "preds.csv")
    run = console("summarize", "--csv", str(tmp_path / "preds.csv"), "--groups", "sex",
                  "--time", "date", "--window", "7D", "--classifiers", "pred", "--seed", "1",
                  "--draws", "200")
    assert run.returncode == 0, run.stderr
    text = run.stdout
    days = pd.to_datetime(df["date"])
    first = days.min()  # 7-day windows start at midnight of the first case's day
    n_slices = 2 * (int((days.max() - first).days) // 7 + 1)
    assert text.startswith(f"Predictions of classifier 'pred': 120 cases in {n_slices} "
                           "slices by sex × window")
    second = (first + pd.Timedelta(days=7)).strftime("%Y-%m-%d")
    assert f"sex=F|window={second}" in text and "Balanced accuracy" in text
    # the text lists the default metrics per slice, each under its slice
    assert text.count("True positive rate") == n_slices
    help_text = console("summarize", "--help").stdout
    assert "--groups COL [COL ...]" in help_text and "--window FREQ" in help_text


def test_sliced_csv_with_an_empty_slice_is_flagged_in_the_text(tmp_path, capsys):
    cases(tmp_path / "preds.csv")
    assert cli.main(["summarize", "--csv", str(tmp_path / "preds.csv"), "--groups", "sex",
                     "site", "--classifiers", "pred", "--seed", "1", "--draws", "100"]) == 0
    text = capsys.readouterr().out
    assert "1 empty (no cases; kept, their posterior is the model's without data): " \
           "sex=M|site=b" in text
    row = next(line for line in text.splitlines() if line.startswith("sex=M|site=b "))
    assert row.split() == ["sex=M|site=b", "0", "0", "0", "0", "0", "empty"]


@pytest.mark.parametrize(("argv", "words"), [
    (["--groups", "sex", "site", "--labels", "0,1"], "--labels orders the classes"),
    (["--groups", "sex", "--classifiers", "pred", "--window", "7D"], "window= needs time="),
    (["--groups", "sex", "--classifiers", "pred", "--model", "multiclass_rows"],
     "does not take a sliced"),
    (["--groups", "region", "--classifiers", "pred"], "No column 'region' (the groups)"),
    (["--time", "sex", "--window", "7D", "--classifiers", "pred"], "not a date"),
])
def test_sliced_csv_errors_say_what_to_do(tmp_path, capsys, argv, words):
    df = cases(tmp_path / "preds.csv").drop(columns=["score", "date"])
    df.to_csv(tmp_path / "two.csv", index=False)
    df.assign(other=df["pred"]).to_csv(tmp_path / "preds.csv", index=False)
    source = tmp_path / ("two.csv" if "--classifiers" in argv else "preds.csv")
    assert cli.main(["summarize", "--csv", str(source), *argv]) == 2
    assert words in capsys.readouterr().err


def test_slicing_needs_a_csv_and_group_values(tmp_path, capsys):
    assert cli.main(["summarize", "--tp", "1", "--fn", "1", "--fp", "1", "--tn", "1",
                     "--groups", "sex"]) == 2
    assert "give --csv" in capsys.readouterr().err
    df = cases(tmp_path / "preds.csv")
    df.loc[5, "sex"] = ""
    df.to_csv(tmp_path / "blank.csv", index=False)
    assert cli.main(["summarize", "--csv", str(tmp_path / "blank.csv"), "--groups", "sex",
                     "--classifiers", "pred"]) == 2
    assert "'sex'" in (err := capsys.readouterr().err) and "row 7" in err
    assert "explicit level" in err
