"""``bayescm folds``: per-fold counts or predictions from a CSV, compared across folds
(compare_folds) or data sets (compare_datasets), run in-process through the CLI's main."""

from __future__ import annotations

import contextlib
import io
import json

import baycomp
import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.cli import main
from tests.data.test_fold_results import predictions


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def counts_csv(tmp_path, *, datasets=("d1",), runs=2, k=5, seed=0, gap=0.03):
    """Per-fold binary counts of algorithms a (better by ``gap``) and b."""
    rng = np.random.default_rng(seed)
    rows = []
    for j, ds in enumerate(datasets):
        base = 0.75 + 0.01 * j
        for run_ in range(runs):
            for fold in range(k):
                shift = rng.normal(0, 0.02)  # what the fold's training set does to both
                for alg, acc in (("a", base + gap + shift), ("b", base + shift)):
                    tp, tn = rng.binomial(60, min(acc, 0.99), 2)
                    rows.append({"dataset": ds, "run": run_, "fold": fold, "algorithm": alg,
                                 "tp": tp, "fn": 60 - tp, "fp": 60 - tn, "tn": tn})
    frame = pd.DataFrame(rows)
    if len(datasets) == 1:
        frame = frame.drop(columns="dataset")
    path = tmp_path / "folds.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_one_data_set_plug_in_is_baycomps_two_on_single(tmp_path):
    path, frame = counts_csv(tmp_path)
    code, out, err = run("folds", "--csv", path, "--algorithms", "a,b", "--plug-in",
                         "--rope", "0.01", "--json")
    assert code == 0, err
    res = json.loads(out)
    acc = {alg: ((g.tp + g.tn) / (g.tp + g.fn + g.fp + g.tn)).to_numpy()
           for alg, g in frame.sort_values(["run", "fold"]).groupby("algorithm")}
    expected = baycomp.two_on_single(acc["a"], acc["b"], rope=0.01, runs=2)
    # both are exact t probabilities: equal to rounding
    np.testing.assert_allclose((res["p_a_better"], res["p_rope"], res["p_b_better"]),
                               expected, atol=1e-9)
    assert (res["test"], res["runs"], res["folds"], res["plug_in"]) == \
        ("compare_folds", 2, 5, True)
    assert res["difference"]["mean"] == pytest.approx(np.mean(acc["a"] - acc["b"]), abs=0.01)
    assert res["warnings"] == []


def test_predictions_posterior_mode_equals_the_python_call(tmp_path):
    df = predictions(4, runs=2, k=5, n=80).drop(columns="dataset")
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    code, out, err = run("folds", "--csv", path, "--predictions", "--seed", "3",
                         "--metric", "ba", "--draws", "800")
    assert code == 0, err
    results = bcm.FoldResults.from_predictions(df, run="run")
    ref = bcm.analysis.compare_folds(*results.pair("a", "b"), "ba", runs=2, draws=800,
                                     random_seed=3, names=("a", "b"))
    assert f"P(a better) = {ref.p_a_better:.4f}" in out
    assert f"P(b better) = {ref.p_b_better:.4f}" in out
    assert "2 run(s) × 5 folds (rho = 1/5)" in out


def test_several_data_sets_run_the_hierarchical_model(tmp_path):
    # 12 data sets: the structure tests/analysis/test_compare_datasets.py compiles, so a
    # whole-suite run reuses its compiled model (compilation is most of the time here)
    names = [f"d{i:02d}" for i in range(12)]
    path, frame = counts_csv(tmp_path, datasets=names, runs=1, k=10, gap=0.05)
    code, out, err = run("folds", "--csv", path, "--draws", "300", "--tune", "300",
                         "--chains", "2", "--seed", "1", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["test"] == "compare_datasets" and res["datasets"] == names
    assert res["p_a_better"] + res["p_rope"] + res["p_b_better"] == pytest.approx(1)
    assert sum(res["predictive_probs"].values()) == pytest.approx(1)
    observed = {ds: float(((g[g.algorithm == "a"].tp + g[g.algorithm == "a"].tn).to_numpy()
                           - (g[g.algorithm == "b"].tp + g[g.algorithm == "b"].tn).to_numpy())
                          .mean() / 120) for ds, g in frame.groupby("dataset")}
    for ds, row in res["per_dataset"].items():
        assert row["observed_mean"] == pytest.approx(observed[ds], abs=1e-12)
        assert row["hdi_lower"] <= row["posterior_mean"] <= row["hdi_upper"]
    # a 5-point gain on every data set: the mean difference is positive, A ahead
    assert res["delta0"]["mean"] > 0 and res["p_a_better"] > res["p_b_better"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--algorithms", "a,c"], "No algorithm(s) ['c']"),
    (["--algorithms", "a"], "--algorithms takes two different names"),
    (["--run", "batch"], "Column(s) ['batch'] are not in the data"),
    (["--predictions"], "no column 'y_true' of true labels"),
    (["--metric", "nope"], "Unknown metric 'nope'"),
    (["--draws", "0"], "draws must be"),  # not the default in its place
])
def test_bad_input_is_a_one_line_error(tmp_path, argv, message):
    path, _ = counts_csv(tmp_path)
    code, out, err = run("folds", "--csv", path, *argv)
    assert code == 2 and out == ""
    assert err.startswith("bayescm: error:") and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_missing_fold_and_one_fold_per_run(tmp_path):
    path, frame = counts_csv(tmp_path)
    frame.iloc[1:].to_csv(path, index=False)  # a's run 0, fold 0 gone
    code, _, err = run("folds", "--csv", path)
    assert code == 2 and "'a' lacks 1 fold(s)" in err
    frame.assign(fold=0).drop_duplicates(["run", "algorithm"]).to_csv(path, index=False)
    code, _, err = run("folds", "--csv", path)
    assert code == 2 and "rho = 1/k" in err
    (tmp_path / "empty.csv").write_text("")
    code, _, err = run("folds", "--csv", tmp_path / "empty.csv")
    assert code == 2 and "is empty" in err


def test_k_class_crosstab_rows_from_a_csv(tmp_path):
    """K-class counts: one row per (algorithm, fold, actual class), a column per predicted
    class (headers are text, classes are numbers: matched by label)."""
    df = predictions(12, runs=1, k=4, n=90, classes=(0, 1, 2))
    rows = []
    for (alg, fold), sel in df.groupby(["algorithm", "fold"]):
        tab = pd.crosstab(sel.y_true, sel.y_pred).reindex(index=[0, 1, 2], columns=[0, 1, 2],
                                                          fill_value=0)
        rows.append(tab.rename_axis("actual").reset_index().assign(algorithm=alg, fold=fold))
    path = tmp_path / "k.csv"
    pd.concat(rows).to_csv(path, index=False)
    code, out, err = run("folds", "--csv", path, "--plug-in", "--metric", "f1_macro", "--json")
    assert code == 0, err
    res = json.loads(out)
    cms = bcm.FoldResults.from_predictions(df)
    ref = bcm.analysis.compare_folds(*cms.pair("a", "b"), "f1_macro", plug_in=True)
    np.testing.assert_allclose((res["p_a_better"], res["p_rope"], res["p_b_better"]),
                               (ref.p_a_better, ref.p_rope, ref.p_b_better), atol=1e-12)
    assert res["metric"] == "f1_macro" and res["folds"] == 4
