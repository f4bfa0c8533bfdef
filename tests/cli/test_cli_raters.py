"""``bayescm raters``: K-class ratings from a CSV (long or wide) or a built-in data set."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.cli import main


def _simulated(seed: int = 3, n_items: int = 120, k: int = 3) -> tuple[pd.DataFrame, np.ndarray]:
    """Four raters of accuracy 0.85 on K = 3 classes, 20% of ratings missing."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(k, size=n_items, p=[0.5, 0.3, 0.2])
    rows = []
    for i, t in enumerate(truth):
        for r in "abcd":
            if rng.random() < 0.2:
                continue
            label = t if rng.random() < 0.85 else rng.choice([c for c in range(k) if c != t])
            rows.append({"item": i, "rater": r, "rating": int(label)})
    return pd.DataFrame(rows), truth


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_the_cli_gives_the_python_fit_on_the_anaesthesia_data(capsys):
    out = _json(capsys, ["raters", "--dataset", "anaesthesia", "--draws", "200", "--chains",
                         "2", "--seed", "5", "--metrics", "acc", "--json"])
    assert (out["items"], out["raters"], out["gold_items"]) == (45, ["1", "2", "3", "4", "5"], 0)
    assert out["labels"] == ["1", "2", "3", "4"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(bcm.models.dawid_skene(bcm.datasets.anaesthesia()), draws=200,
                        chains=2, random_seed=5)
    # the same model, data and seed: the same draws, so the same numbers to print precision
    prevalence = idata.posterior["prevalence"].mean(("chain", "draw")).values
    printed = [out["prevalence"][c]["mean"] for c in out["labels"]]
    np.testing.assert_allclose(printed, prevalence, rtol=1e-9)
    acc = bcm.summary(idata, metrics="acc")["mean"].to_numpy()
    np.testing.assert_allclose([out["metrics"][r]["acc"]["mean"] for r in out["raters"]], acc,
                               rtol=1e-9)


def test_long_ratings_with_gold_recover_the_items_classes(tmp_path, capsys):
    df, truth = _simulated()
    df["gold"] = np.where(df["item"] < 10, truth[df["item"]], np.nan)
    path = tmp_path / "ratings.csv"
    df.to_csv(path, index=False)
    items = tmp_path / "items.csv"
    out = _json(capsys, ["raters", "--csv", str(path), "--gold", "gold", "--draws", "300",
                         "--chains", "2", "--seed", "1", "--items-out", str(items), "--json"])
    assert out["gold_items"] == 10 and out["ratings"] == len(df)
    guess = np.array([int(out["most_probable"][str(i)]) for i in range(len(truth))])
    # four raters of accuracy 0.85, three or four ratings per item: majority-type
    # aggregation errs on about 2-4% of items; 90% leaves room for sampling variation
    assert (guess == truth).mean() >= 0.9
    np.testing.assert_array_equal(guess[:10], truth[:10])  # gold items keep their class
    written = pd.read_csv(items)
    assert len(written) == 3 * len(truth)
    sums = written.groupby("item")["mean"].sum()
    np.testing.assert_allclose(sums, 1.0, atol=1e-9)


def test_wide_ratings_are_read_as_one_column_per_rater(tmp_path, capsys):
    df, _truth = _simulated(seed=4, n_items=60)
    wide = df.pivot(index="item", columns="rater", values="rating").reset_index()
    path = tmp_path / "wide.csv"
    wide.to_csv(path, index=False)
    out = _json(capsys, ["raters", "--csv", str(path), "--wide", "--draws", "200", "--chains",
                         "2", "--seed", "2", "--metrics", "acc,tpr", "--json"])
    assert out["raters"] == ["a", "b", "c", "d"] and out["items"] == 60
    assert out["ratings"] == len(df)
    for r in "abcd":  # recall per class exists for each of the three classes
        assert set(out["metrics"][r]["tpr"]) == {"0", "1", "2"}


def test_text_output_shows_prevalence_metrics_items_and_convergence(capsys):
    assert main(["raters", "--dataset", "anaesthesia", "--draws", "100", "--chains", "2",
                 "--seed", "1", "--show-items", "3", "--metrics", "acc"]) == 0
    out = capsys.readouterr()
    for text in ("Class prevalence", "Each rater's metrics", "Most probable class of the "
                 "first 3 items", "R-hat"):
        assert text in out.out
    assert out.err.count("NOT converged") == 0  # the report is printed once, on stdout


@pytest.mark.parametrize(("rows", "argv", "message"), [
    ("item,who,rating\n1,a,1\n", [], "no column(s) ['rater']"),
    ("item,rater,rating\n", [], "has no rows"),
    ("", [], "is empty: give a header line"),
    ("item,rater,rating\n1,a,1\n1,b,7\n", ["--labels", "1,2"], "not among the labels"),
])
def test_bad_csvs_get_a_plain_error(tmp_path, capsys, rows, argv, message):
    path = tmp_path / "bad.csv"
    path.write_text(rows)
    assert main(["raters", "--csv", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayescm: error:") and message in err
    assert "Traceback" not in err
