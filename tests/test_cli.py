import json

import pytest

from bayescm import cli


def test_summarize_table(capsys):
    assert cli.main(["summarize", "--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6",
                     "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "True negative rate" in out and "N = 34" in out
    # the convergence report (exact draws are i.i.d.: reported as such since c4c3ca5)
    assert "Converged" in out or "i.i.d. draws from the exact posterior" in out


def test_summarize_json_with_prior_and_hdi(capsys):
    argv = ["summarize", "--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6", "--json",
            "--prior", "tpr=beta:20,4", "--hdi-prob", "0.9", "--metrics", "tpr,tnr,bm",
            "--seed", "2"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["metrics"]) == {"tpr", "tnr", "bm"}
    assert out["hdi_prob"] == 0.9
    assert out["priors"]["tpr"]["cm"] == "Beta(20, 4)"
    assert out["convergence"]["ok"] is True
    # posterior mean of tpr under Beta(20, 4) + (26, 0) = Beta(46, 4)
    assert out["metrics"]["tpr"]["mean"] == pytest.approx(46 / 50, abs=0.005)
    assert out["metrics"]["tpr"]["plug_in"] == 1.0


def test_summarize_nuts(capsys):
    argv = ["summarize", "--tp", "10", "--fn", "5", "--fp", "3", "--tn", "20", "--json",
            "--sampler", "nuts", "--metrics", "tpr", "--seed", "3"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sampler"] == "nuts" and out["engine"] == "bayescm-kernel"
    assert out["metrics"]["tpr"]["mean"] == pytest.approx(11 / 17, abs=0.01)


@pytest.mark.parametrize(("argv", "words"), [
    (["--tp", "-1"], "negative"),
    (["--tp", "2.5"], "whole number"),
    (["--tp", "1", "--prior", "sensitivity=beta:1,1"], "no parameter"),
    (["--tp", "1", "--metrics", "auc"], "Unknown metric"),
])
def test_summarize_errors(capsys, argv, words):
    base = ["summarize", "--fn", "0", "--fp", "2", "--tn", "6"]
    assert cli.main(base + argv) == 2
    assert words in capsys.readouterr().err


def test_demo_writes_results(tmp_path, capsys):
    assert cli.main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "7a" in out and "Converged" in out
    for name in ("literature_summary.csv", "literature_report.csv",
                 "literature_bm_forest.png", "literature_posterior.nc"):
        assert (tmp_path / name).stat().st_size > 0


def test_unlabeled_counts_json(capsys):
    argv = ["unlabeled", "--counts", "++=40,+-=3,-+=7,--=100", "--prior",
            "sensitivity=beta:20,4", "--prior", "specificity=beta:20,4", "--json", "--seed", "1",
            "--metrics", "tpr,ppv"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    a = out["metrics"]["all"]["A"]
    assert a["tpr"]["mean"] == pytest.approx(0.895, abs=0.01)
    assert out["priors"]["sensitivity"]["A"] == "Beta(20, 4)"
    assert out["convergence"]["ok"] is True
    assert any("only through" in w for w in out["warnings"])
    assert 0 <= out["fit_check"]["all"]["p_value"] <= 1


def test_unlabeled_csv_with_populations(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 400
    site = np.repeat(["north", "south"], n // 2)
    truth = rng.random(n) < np.where(site == "north", 0.2, 0.7)
    frame = pd.DataFrame({
        "site": site,
        "rf": np.where(truth, rng.random(n) < 0.9, rng.random(n) < 0.1).astype(int),
        "svm": np.where(truth, rng.random(n) < 0.85, rng.random(n) < 0.05).astype(int),
    })
    path = tmp_path / "pred.csv"
    frame.to_csv(path, index=False)
    assert cli.main(["unlabeled", "--csv", str(path), "--population-column", "site",
                     "--seed", "2", "--metrics", "tpr,tnr"]) == 0
    out = capsys.readouterr().out
    assert "north" in out and "south" in out and "rf" in out and "Converged" in out


@pytest.mark.parametrize(("argv", "words"), [
    (["--counts", "++=40,+-=3,-+=7"], "lacks pattern"),
    (["--counts", "++=40,+-=-3,-+=7,--=1"], "negative"),
    (["--counts", "++40"], "pattern=count"),
    (["--counts", "++=1,+-=1,-+=1,--=1", "--prior", "sens=beta:1,1"], "no parameter"),
])
def test_unlabeled_errors(capsys, argv, words):
    assert cli.main(["unlabeled", *argv]) == 2
    assert words in capsys.readouterr().err
