import json

import numpy as np
import pandas as pd
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


# -- K-class matrices: --matrix and --csv ----------------------------------------------
MATRIX = "cat,dog,bird; 50,3,2; 4,40,6; 1,2,30"
COUNTS = [[50, 3, 2], [4, 40, 6], [1, 2, 30]]
LABELS = ["cat", "dog", "bird"]


def _expected(mc, family, seed, metrics, hdi_prob):
    import bayescm as bcm

    idata = bcm.fit(getattr(bcm.models, family)(mc), sampler="exact", random_seed=seed)
    return bcm.summary(idata, metrics=metrics, hdi_prob=hdi_prob)


def _assert_json_equals_summary(out, table):
    """Every number of the CLI's JSON is the summary's (same data, seed, draws): the
    closed form draws what fit(sampler="exact") draws for a seed (the same default
    draws too), so they agree to rounding."""
    rows = 0
    for (clf, cls, key), row in table.iterrows():
        got = out["metrics"][clf][key]
        got = got[cls] if cls else got
        for col, value in row.items():
            if col in ("exact", "note"):  # a JSON boolean and a string
                assert got[col] == value, (clf, cls, key, col)
            elif not np.isfinite(value):  # undefined, or a mean that does not exist: null
                assert got[col] is None, (clf, cls, key, col)
            else:
                assert got[col] == pytest.approx(value, rel=1e-6, abs=1e-9), (clf, cls, key, col)
        rows += 1
    assert rows == len(table) > 0


@pytest.mark.parametrize("family", ["multiclass_rows", "multiclass_cells"])
def test_summarize_matrix_json_equals_summary(capsys, family):
    import bayescm as bcm

    metrics = "tpr,ppv,f1_macro,acc,kappa"
    argv = ["summarize", "--matrix", MATRIX, "--json", "--seed", "5", "--hdi-prob", "0.9",
            "--metrics", metrics, "--model", family]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == family and out["sampler"] == "exact" and out["hdi_prob"] == 0.9
    assert out["counts"]["labels"] == LABELS and out["counts"]["counts"] == [COUNTS]
    assert out["convergence"]["ok"] is True
    mc = bcm.MulticlassConfusionMatrix(COUNTS, labels=LABELS)
    _assert_json_equals_summary(out, _expected(mc, family, 5, metrics.split(","), 0.9))
    # plug-in recall of each class is its diagonal over its row total (by hand)
    for i, label in enumerate(LABELS):
        assert out["metrics"]["cm"]["tpr"][label]["plug_in"] == pytest.approx(
            COUNTS[i][i] / sum(COUNTS[i]))


def test_summarize_matrix_exact_marginals(capsys):
    """Closed forms, independent of the sampler: under multiclass_rows (row prior b, the
    default recorded in the output) class a's recall is Beta(b_a + C_aa, sum_{j != a} b_j
    + r_a - C_aa); under multiclass_cells (prior alpha over the cells) accuracy is
    Beta(sum_k alpha_kk + sum_k C_kk, the rest).  Posterior means of
    4,000 i.i.d. draws are within 4 standard errors (sd / sqrt(4000)) of the exact
    means, a bound missed with probability < 1e-4 per check."""
    from scipy import stats

    k, n, diag = 3, sum(map(sum, COUNTS)), sum(COUNTS[i][i] for i in range(3))
    assert cli.main(["summarize", "--matrix", MATRIX, "--json", "--seed", "7",
                     "--metrics", "tpr"]) == 0
    out = json.loads(capsys.readouterr().out)
    tpr, b = out["metrics"]["cm"]["tpr"], _alpha(out["priors"]["rows"]["cm"])  # the default
    for i, label in enumerate(LABELS):
        exact = stats.beta(b[i] + COUNTS[i][i], sum(b) - b[i] + sum(COUNTS[i]) - COUNTS[i][i])
        assert abs(tpr[label]["mean"] - exact.mean()) < 4 * exact.std() / np.sqrt(4000)
        assert tpr[label]["sd"] == pytest.approx(exact.std(), rel=0.1)  # sd of an sd: ~1.1%
    assert cli.main(["summarize", "--matrix", MATRIX, "--json", "--seed", "8",
                     "--metrics", "acc", "--model", "multiclass_cells"]) == 0
    out = json.loads(capsys.readouterr().out)
    acc, a = out["metrics"]["cm"]["acc"], _alpha(out["priors"]["theta"]["cm"])
    on = sum(a[i * k + i] for i in range(k))
    exact = stats.beta(on + diag, sum(a) - on + n - diag)
    assert abs(acc["mean"] - exact.mean()) < 4 * exact.std() / np.sqrt(4000)
    lo, hi = exact.interval(0.95)  # the HDI of this near-symmetric Beta is within 0.005
    assert acc["hdi_lower"] == pytest.approx(lo, abs=0.01)
    assert acc["hdi_upper"] == pytest.approx(hi, abs=0.01)


def test_summarize_matrix_nuts(capsys):
    """NUTS through the CLI: recall of 'bird' against its exact Beta posterior
    (multiclass_rows, default priors: Beta(b + 30, rest + 3)); 4 x 1000 draws with bulk
    ESS >= 400 give a Monte Carlo standard error <= sd / 20, so 5 standard errors is
    sd / 4."""
    from scipy import stats

    argv = ["summarize", "--matrix", MATRIX, "--json", "--sampler", "nuts", "--seed", "3",
            "--metrics", "tpr"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["engine"] == "bayescm-kernel" and out["convergence"]["ok"] is True
    b = _alpha(out["priors"]["rows"]["cm"])  # the default row prior, the same for every row
    exact = stats.beta(b[2] + 30, b[0] + b[1] + 1 + 2)
    assert abs(out["metrics"]["cm"]["tpr"]["bird"]["mean"] - exact.mean()) < exact.std() / 4


def _alpha(text):
    """The concentrations of a recorded 1-d Dirichlet, e.g. 'Dirichlet(1, 1, 1)'."""
    assert text.startswith("Dirichlet(") and "[" not in text
    return [float(x) for x in text[len("Dirichlet("):-1].split(",")]


def test_summarize_matrix_table(capsys):
    assert cli.main(["summarize", "--matrix", MATRIX, "--seed", "1",
                     "--metrics", "tpr,f1_macro"]) == 0
    out = capsys.readouterr().out
    assert "rows actual, columns predicted" in out and "N = 138" in out
    assert "bird" in out and "Model multiclass_rows" in out
    assert "draws from the exact posterior" in out


def test_summarize_matrix_fixed_prevalence(capsys):
    argv = ["summarize", "--matrix", MATRIX, "--json", "--seed", "2", "--metrics",
            "prevalence,tpr", "--prevalence", "0.5,0.3,0.2"]
    assert cli.main(argv) == 0
    prevalence = json.loads(capsys.readouterr().out)["metrics"]["cm"]["prevalence"]
    assert [prevalence[c]["mean"] for c in LABELS] == pytest.approx([0.5, 0.3, 0.2])
    assert all(prevalence[c]["sd"] < 1e-6 for c in LABELS)  # fixed, not inferred


def _predictions_csv(tmp_path):
    rng = np.random.default_rng(4)
    truth = rng.choice(["ant", "bee", "wasp"], size=120, p=[0.5, 0.3, 0.2])

    def noisy(p_wrong):
        wrong = rng.random(truth.size) < p_wrong
        return np.where(wrong, rng.choice(["ant", "bee", "wasp"], size=truth.size), truth)

    frame = pd.DataFrame({"y_true": truth, "rf": noisy(0.2), "knn": noisy(0.5)})
    path = tmp_path / "pred.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_summarize_csv_json_equals_summary(tmp_path, capsys):
    import bayescm as bcm

    path, frame = _predictions_csv(tmp_path)
    argv = ["summarize", "--csv", str(path), "--json", "--seed", "11", "--labels",
            "wasp,bee,ant,fly", "--metrics", "recall,f1_macro,mcc"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    mc = bcm.MulticlassConfusionMatrix.from_predictions(
        frame["y_true"], {"rf": frame["rf"], "knn": frame["knn"]},
        labels=["wasp", "bee", "ant", "fly"])
    assert out["counts"]["classifier"] == ["rf", "knn"]
    assert out["counts"]["labels"] == ["wasp", "bee", "ant", "fly"]
    assert out["counts"]["counts"] == mc.counts.tolist()
    assert sum(map(sum, out["counts"]["counts"][0])) == len(frame)
    _assert_json_equals_summary(out, _expected(mc, "multiclass_rows", 11,
                                               ["tpr", "f1_macro", "mcc"], 0.95))
    # 'fly' has no cases: its recall is undefined in the data (NaN -> null), not in the
    # posterior (a flat prior row)
    assert out["metrics"]["rf"]["tpr"]["fly"]["plug_in"] is None
    assert out["metrics"]["rf"]["tpr"]["fly"]["mean"] == pytest.approx(0.25, abs=0.02)


def test_summarize_csv_classifier_subset_and_numeric_labels(tmp_path, capsys):
    frame = pd.DataFrame({"truth": [2, 10, 10, 2, 1, 1], "a": [2, 10, 1, 2, 1, 10],
                          "b": [1, 1, 1, 1, 1, 1]})
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    assert cli.main(["summarize", "--csv", str(path), "--truth-column", "truth",
                     "--classifiers", "a", "--json", "--seed", "1", "--metrics", "acc"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["counts"]["labels"] == ["1", "2", "10"]  # numeric order, not "1", "10", "2"
    assert out["counts"]["classifier"] == ["a"]
    assert out["metrics"]["a"]["acc"]["plug_in"] == pytest.approx(4 / 6)


@pytest.mark.parametrize(("argv", "words"), [
    (["--matrix", "cat,dog,bird; 50,3,2; 4,40,6; 1,2"], "not square"),
    (["--matrix", "cat,dog,bird; 50,3,2; 4,40,6"], "not square"),
    (["--matrix", "cat,dog; 5,1.5; 2,7"], "whole number"),
    (["--matrix", "cat,dog; 5,-1; 2,7"], ">= 0"),
    (["--matrix", "cat,cat; 5,1; 2,7"], "unique"),
    (["--matrix", "cat,dog; 5,x; 2,7"], "not a count"),
    (["--matrix", "5,1,2,7"], "one row of counts per"),
    (["--matrix", "cat,dog; 0,0; 0,0"], "zero"),
    (["--matrix", MATRIX, "--model", "three_beta"], "does not take a multiclass"),
    (["--tp", "5", "--fn", "1", "--fp", "2", "--tn", "3", "--model", "multiclass_rows"],
     "does not take a binary"),
    (["--matrix", MATRIX, "--prevalence", "0.5,0.5"], "prevalence"),
    (["--matrix", MATRIX, "--prior", "rows=dirichlet:1,1"], "needs 3 concentrations"),
    (["--matrix", MATRIX, "--metrics", "auc"], "Unknown multiclass metric"),
    (["--matrix", MATRIX, "--tp", "3"], "Give one confusion matrix"),
    (["--tp", "3", "--fn", "1"], "missing"),
    ([], "Give one confusion matrix"),
    (["--csv", "no-such-file.csv"], "No such file"),
])
def test_summarize_matrix_errors(capsys, argv, words):
    assert cli.main(["summarize", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


@pytest.mark.parametrize(("columns", "extra", "words"), [
    ({"label": ["a", "b"], "p": ["a", "b"]}, [], "no column of true labels"),
    ({"y_true": ["a", "b"], "p": ["a", ""]}, [], "no label in row 3"),
    ({"y_true": ["a", "b"], "p": ["a", "c"]}, ["--labels", "a,b"], "not in labels"),
    ({"y_true": ["a", "b"]}, [], "no column of predictions"),
])
def test_summarize_csv_errors(tmp_path, capsys, columns, extra, words):
    path = tmp_path / "bad.csv"
    pd.DataFrame(columns).to_csv(path, index=False)
    assert cli.main(["summarize", "--csv", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


# -- issue 25: exact rows, Monte Carlo errors, stable default draws, no fake means ----------
def test_summarize_json_cocaine_is_exact_and_reports_the_missing_dor_mean(capsys):
    """TNR ~ Beta(7, 3): its 95% HDI is [0.43237, 0.94576] exactly, from the CLI as from
    bcm.summary; the DOR has no finite mean with fn = 0 (JSON null, and a note)."""
    argv = ["summarize", "--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6", "--json",
            "--metrics", "tnr,mcc,dor", "--seed", "1"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    tnr = out["metrics"]["tnr"]
    assert (tnr["hdi_lower"], tnr["hdi_upper"]) == pytest.approx((0.4324, 0.9458), abs=5e-4)
    assert tnr["exact"] is True and tnr["note"] == "exact: Beta(7, 3)"
    assert tnr["mcse_hdi_lower"] == tnr["mcse_hdi_upper"] == tnr["mcse_mean"] == 0
    mcc = out["metrics"]["mcc"]
    assert mcc["exact"] is False and 0 < mcc["mcse_hdi_lower"] < 0.002  # a million draws
    assert out["draws"] == 250_000 and out["chains"] == 4
    dor = out["metrics"]["dor"]
    assert dor["mean"] is None and dor["sd"] is None
    assert dor["note"].startswith("no finite mean") and dor["median"] > 0


def test_summarize_text_shows_a_tiny_width_and_the_notes(capsys):
    argv = ["summarize", "--tp", "1000000000", "--fn", "1", "--fp", "1", "--tn", "1000000000",
            "--metrics", "acc,dor,tnr", "--draws", "1000", "--seed", "1"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("acc "))
    width = line.split()[line.split().index("Accuracy") + 7]  # plug_in mean sd median lo hi w
    assert width != "0.0000" and float(width) > 0
    assert "tnr: exact: Beta(1e+09, 2)" in out


def test_unlabeled_says_each_warning_once_as_a_plain_line_on_stderr(capsys):
    """The identifiability verdict that warned was printed on stdout and again on stderr,
    and the PriorTruncationWarning was dropped: now each warning is one ``warning: ...``
    line on stderr (no Python ``file.py:123: XWarning:`` line), said once in all."""
    import re

    argv = ["unlabeled", "--counts", "++=40,+-=3,-+=7,--=100", "--prior",
            "sensitivity.A=beta:1,3", "--prior", "specificity.A=beta:1,3", "--draws", "200",
            "--chains", "2", "--seed", "1", "--metrics", "tpr"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    both = out + err
    # the truncation of A's priors (Beta(1, 3) twice: 95% of the mass cut), once
    assert both.count("put 95.00% of their mass where Se + Sp < 1") == 1
    assert "warning: The priors of classifier 'A'" in err
    # two classifiers, one population, default priors elsewhere: not identified, once
    assert both.count("the model is not identified") == 1 and "not identified" in err
    # the convergence verdict once: on stdout when it passed, as a warning when not
    assert len(re.findall(r"(?i)\bconverged\b", both)) == 1
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines and all(ln.startswith(("warning: ", "- ")) for ln in lines), lines
    assert not re.search(r"\.py:\d+: \w*Warning", err) and "Traceback" not in err
