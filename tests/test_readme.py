"""The README is a contract: every code block in it runs here.

Python blocks run in order in one namespace (a later block may use what an earlier
one made, as a reader going down the page would); ``bayescm`` shell commands run in a
temporary directory holding the files they name (through ``bayescm.cli.main``, what the
console script calls); ``make`` lines are what this suite itself is run by, so they are
not run again.
"""

from __future__ import annotations

import pathlib
import re
import shlex
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README.read_text()) if lang == language]


def test_the_readme_has_code():
    assert len(_blocks("python")) >= 4 and len(_blocks("bash")) >= 2


def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)  # files the examples write (the report) land here

    namespace: dict = {"__name__": "readme"}
    with warnings.catch_warnings():
        # the examples fit tiny data with default settings: a convergence warning there
        # is the library doing its job, not a broken example
        warnings.simplefilter("ignore")
        for i, body in enumerate(_blocks("python")):
            try:
                exec(compile(body, f"README.md python block {i + 1}", "exec"), namespace)
            except Exception as err:  # pragma: no cover - the message is the point
                pytest.fail(f"README python block {i + 1} failed: {err!r}\n{body}")
    plt.close("all")
    assert "idata" in namespace and "tab" in namespace
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")


def _commands() -> list[list[str]]:
    out = []
    for body in _blocks("bash"):
        text = re.sub(r"\\\n\s*", " ", body)  # continued lines
        for line in text.splitlines():
            line = line.split("#")[0].strip()
            if line.startswith("bayescm "):
                out.append(shlex.split(line))
    return out


@pytest.mark.parametrize("argv", _commands(), ids=lambda a: " ".join(a[:2]))
def test_shell_commands_run(argv, tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    pd.DataFrame({
        "A": np.where(rng.uniform(size=400) < 0.85, y, 1 - y),
        "B": np.where(rng.uniform(size=400) < 0.8, y, 1 - y),
        "site": np.where(rng.uniform(size=400) < 0.5, "north", "south"),
    }).to_csv(tmp_path / "predictions.csv", index=False)
    # labelled K-class predictions, for `bayescm summarize --csv classes.csv`
    truth = rng.choice(["cat", "dog", "bird"], 300, p=[0.5, 0.3, 0.2])
    guess = rng.choice(["cat", "dog", "bird"], 300)
    pd.DataFrame({
        "y_true": truth,
        "rf": np.where(rng.uniform(size=300) < 0.8, truth, guess),
        "knn": np.where(rng.uniform(size=300) < 0.6, truth, guess),
    }).to_csv(tmp_path / "classes.csv", index=False)
    # one classifier's labelled predictions with groups and dates, for the sliced summary
    pd.DataFrame({
        "y_true": y, "model": np.where(rng.uniform(size=400) < 0.8, y, 1 - y),
        "sex": rng.choice(["F", "M"], 400), "site": rng.choice(["a", "b", "c"], 400),
        "date": (pd.Timestamp("2025-01-06") + pd.to_timedelta(rng.integers(0, 42, 400), "D")
                 ).strftime("%Y-%m-%d"),
    }).to_csv(tmp_path / "cases.csv", index=False)
    # item-level benchmark results and per-fold predictions, for `bayescm items`/`folds`
    import bayescm as bcm

    bcm.analysis.simulate_items(60, [0.6, 0.7, 0.75], icc=0.2, cluster_size=5, runs=2,
                                rng=1).to_csv(tmp_path / "bench.csv", index=False)
    rows = []
    for run in range(2):
        for fold in range(5):
            truth = rng.integers(0, 2, 60)
            for name, acc in (("logreg", 0.88), ("naive_bayes", 0.84)):
                rows.append(pd.DataFrame({
                    "run": run, "fold": fold, "algorithm": name, "y_true": truth,
                    "y_pred": np.where(rng.uniform(size=60) < acc, truth, 1 - truth)}))
    pd.concat(rows).to_csv(tmp_path / "folds.csv", index=False)
    # in this process: the console script is ``bayescm.cli.main`` (tests/cli runs the
    # installed script and ``python -m bayescm.cli``); a fresh interpreter per command
    # would add its imports, 2-4 s, for each of the commands
    from bayescm.cli import main

    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as a shell user sees them: not part of stdout
        rc = main(argv[1:])
    out, err = capsys.readouterr()
    assert rc == 0, err[-3000:]
    assert out.strip()
