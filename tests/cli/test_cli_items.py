"""``bayescm items``: item-level benchmark results from a CSV, in process through main()."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.cli import main


def _write(tmp_path, frame, name="results.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return str(path)


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_interval_kind(tmp_path, capsys):
    """--interval hdi: the exact Beta(30, 12)'s HDI; the default: its quantiles."""
    df = pd.DataFrame({"q": range(40), "who": "gpt", "ok": [1] * 29 + [0] * 11})
    path = _write(tmp_path, df)
    argv = ["items", "--csv", path, "--item", "q", "--model", "who", "--correct", "ok",
            "--seed", "1", "--json"]
    hdi = _json(capsys, [*argv, "--interval", "hdi"])
    default = _json(capsys, argv)
    assert (hdi["interval"], default["interval"]) == ("hdi", "equal_tailed")
    # bounds of 4 x 5,000 i.i.d. draws: MC s.e. about 0.002 here; 0.008 is 4 s.e.
    lo, hi = bcm.analysis.beta_hdi(30, 12)
    row = hdi["intervals"]["gpt"]
    assert (row["bayes_lower"], row["bayes_upper"]) == pytest.approx(
        (float(lo), float(hi)), abs=0.008)
    # the same draws (same seed): the quantile interval lies lower (left-skewed Beta)
    row_q = default["intervals"]["gpt"]
    assert row_q["bayes_lower"] < row["bayes_lower"] and row_q["bayes_upper"] < row["bayes_upper"]
    main(["items", "--csv", path, "--item", "q", "--model", "who", "--correct", "ok",
          "--seed", "1", "--interval", "hdi"])
    assert "bayescm's posterior (HDI)" in capsys.readouterr().out


def test_one_model_on_independent_items_is_the_exact_beta(tmp_path, capsys):
    # 40 items, 29 right: the posterior is Beta(30, 12) exactly
    df = pd.DataFrame({"q": range(40), "who": "gpt", "ok": [1] * 29 + [0] * 11})
    path = _write(tmp_path, df)
    out = _json(capsys, ["items", "--csv", path, "--item", "q", "--model", "who",
                         "--correct", "ok", "--seed", "1", "--json"])
    assert out["sampler"] == "exact" and out["models"] == ["gpt"] and out["items"] == 40
    assert "leaderboard" not in out and "compare" not in out
    row = out["intervals"]["gpt"]
    assert row["n_items"] == 40 and row["mean"] == pytest.approx(29 / 40)
    lo, hi = stats.beta.ppf([0.025, 0.975], 30, 12)
    # equal-tailed bounds of 4 x 5,000 i.i.d. draws: MC s.e. about 0.002 here; 0.008 is
    # 4 s.e.
    assert row["bayes_lower"] == pytest.approx(float(lo), abs=0.008)
    assert row["bayes_upper"] == pytest.approx(float(hi), abs=0.008)
    assert row["bayes_mean"] == pytest.approx(30 / 42, abs=0.003)  # sd 0.069 / sqrt(2e4)
    # the CLT interval by hand: mean ± z sqrt(p q / (N - 1)) for 0/1 scores
    se = np.sqrt(29 / 40 * 11 / 40 / 39)
    z = stats.norm.ppf(0.975)
    assert row["clt_lower"] == pytest.approx(29 / 40 - z * se, rel=1e-9)
    assert row["clustered_upper"] == pytest.approx(29 / 40 + z * se * np.sqrt(39 / 40),
                                                   rel=1e-9)


def test_clustered_runs_give_intervals_leaderboard_ties_and_paired_comparison(tmp_path,
                                                                              capsys):
    df = bcm.analysis.simulate_items(24, [0.35, 0.9], icc=0.1, cluster_size=4, runs=2, rng=4)
    path = _write(tmp_path, df)
    out = _json(capsys, ["items", "--csv", path, "--cluster", "cluster", "--run", "run",
                         "--compare", "model_1,model_0", "--draws", "150", "--chains", "2",
                         "--seed", "3", "--json"])
    assert out["sampler"] == "nuts" and out["clusters"] == 6 and out["runs_per_item"] == 2
    board = pd.DataFrame(out["leaderboard"]).T
    # every rank column of the rank probabilities sums to one
    np.testing.assert_allclose(board[["p_rank_1", "p_rank_2"]].sum(), 1.0)
    assert list(board.index) == ["model_1", "model_0"]  # 0.9 against 0.35: no contest
    ties = pd.DataFrame(out["tied_sets"]).T
    assert ties.loc["model_1", "tier"] == 1
    cmp = out["compare"]
    assert (cmp["a"], cmp["b"], cmp["design"]) == ("model_1", "model_0", "paired")
    # observed scores differ by about 0.5 on 24 items: far beyond a posterior sd of ~0.1
    assert cmp["p_better"] > 0.99 and cmp["hdi_lower"] > 0
    for name, row in out["intervals"].items():
        assert row["bayes_lower"] < row["bayes_mean"] < row["bayes_upper"], name
        assert row["design_effect"] >= 1.0


def test_text_output_shows_the_three_intervals_side_by_side(tmp_path, capsys):
    df = bcm.analysis.simulate_items(20, [0.6, 0.7], rng=2)
    df = df.groupby(["model", "item"], as_index=False)["correct"].sum().assign(n=1)
    path = _write(tmp_path, df)
    assert main(["items", "--csv", path, "--trials", "n", "--compare", "model_0,model_1",
                 "--draws", "100", "--chains", "2", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    for part in ("bayes_lower", "clt_lower", "clustered_lower", "Leaderboard",
                 "Tied sets", "Paired comparison", "P(A - B > 0)"):
        assert part in text


@pytest.mark.parametrize(("frame", "extra", "match"), [
    ({"item": [1, 2], "model": ["a", "a"], "correct": [1, 2]}, [], "0 or 1"),
    ({"item": [1, 2], "model": ["a", "a"], "score": [1, 0]}, [], "correct"),
    ({"item": [1, 2, 1], "model": ["a", "a", "b"], "correct": [1, 0, 1]}, [], "every item"),
    ({"item": [1, 2], "model": ["a", "a"], "correct": [1, 0]}, ["--compare", "a,b"],
     "unknown model"),
    ({"item": [1, 2], "model": ["a", "a"], "correct": [1, 0]}, ["--compare", "a"], "A,B"),
    ({"item": [1, 2], "model": ["a", "a"], "correct": [1, 0], "r": [0, 0]},
     ["--run", "r", "--trials", "r"], "not both"),
    ({"item": [1, 2], "model": ["a", "a"], "correct": [1, 0]}, ["--hdi-prob", "2"],
     "hdi_prob"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, frame, extra, match):
    path = _write(tmp_path, pd.DataFrame(frame))
    assert main(["items", "--csv", path, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayescm: error:") and match in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_missing_and_empty_files_exit_2(tmp_path, capsys):
    assert main(["items", "--csv", str(tmp_path / "none.csv")]) == 2
    assert "bayescm: error:" in capsys.readouterr().err
    empty = tmp_path / "empty.csv"
    empty.write_text("item,model,correct\n")
    assert main(["items", "--csv", str(empty)]) == 2
    assert "no rows" in capsys.readouterr().err
    # no header either: pandas' "No columns to parse from file" was the message
    empty.write_text("")
    assert main(["items", "--csv", str(empty)]) == 2
    assert "is empty: give a header line naming the columns" in capsys.readouterr().err


def test_a_missing_column_is_named_with_its_option(tmp_path, capsys):
    path = _write(tmp_path, pd.DataFrame({"item": [1, 2], "model": ["a", "a"],
                                          "correct": [1, 0]}))
    assert main(["items", "--csv", path, "--cluster", "topic", "--run", "r"]) == 2
    err = capsys.readouterr().err
    assert "no column(s) ['topic', 'r']" in err and "name them with --cluster, --run" in err
