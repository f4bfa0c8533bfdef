"""Property-based tests of the CLI's arguments (issue 25): any argument list either runs
and prints what it promises, or ends with bayescm's own one-line error (exit 2) — never
a traceback, and never a silent success on invalid counts."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bayescm.cli import main

COUNT = st.one_of(st.integers(-5, 60), st.floats(allow_nan=True, allow_infinity=True),
                  st.sampled_from([1e9, 2.5, -0.0]))
PROB = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.9, 0.95]))
METRICS = st.lists(st.sampled_from(["acc", "tpr", "mcc", "f1", "dor", "nope", "", "F1"]),
                   min_size=1, max_size=3).map(",".join)
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse refuses what its types cannot read
        code = stop.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _valid(cells: dict[str, float], hdi: float) -> bool:
    whole = all(math.isfinite(v) and v >= 0 and float(v).is_integer() for v in cells.values())
    return whole and sum(cells.values()) > 0 and 0 < hdi < 1


@SETTINGS
@example(tp=26, fn=0, fp=2, tn=6, hdi=0.95, metrics="acc,tpr")  # the cocaine matrix runs
@example(tp=26, fn=0, fp=2, tn=6, hdi=0.95, metrics="acc,nope")  # a metric that is not
@given(tp=COUNT, fn=COUNT, fp=COUNT, tn=COUNT, hdi=PROB, metrics=METRICS)
def test_summarize_runs_or_says_why(capsys, tp, fn, fp, tn, hdi, metrics):
    cells = {"tp": tp, "fn": fn, "fp": fp, "tn": tn}
    argv = ["summarize", *(x for c, v in cells.items() for x in (f"--{c}", repr(v))),
            "--hdi-prob", repr(hdi), "--metrics", metrics, "--draws", "400", "--seed", "1",
            "--json"]
    code, out, err = _run(argv, capsys)
    assert "Traceback" not in err
    if code == 0:
        # success only for valid counts, and then JSON with every asked-for metric
        assert _valid(cells, hdi), (argv, out[:200])
        printed = json.loads(out)
        assert printed, argv
    else:
        assert code == 2, (argv, code, err)
        assert err.strip().splitlines()[-1].startswith(("bayescm: error:", "usage:")) or \
            "error:" in err, err
        if not _valid(cells, hdi):
            return
        # valid counts and probability: only the metric names can be at fault
        assert "metric" in err.lower(), (argv, err)


@SETTINGS
@example(counts=[40, 3, 7, 100], draws=150, chains=2)  # valid: fits and prints
@given(counts=st.lists(st.integers(-3, 50), min_size=4, max_size=4),
       draws=st.integers(-2, 300), chains=st.integers(-1, 3))
def test_unlabeled_runs_or_says_why(capsys, counts, draws, chains):
    text = ",".join(f"{p}={c}" for p, c in zip(("++", "+-", "-+", "--"), counts, strict=True))
    argv = ["unlabeled", "--counts", text, "--draws", str(draws), "--chains", str(chains),
            "--seed", "2", "--prior", "sensitivity=beta:20,4",
            "--prior", "specificity=beta:20,4", "--json"]
    code, out, err = _run(argv, capsys)
    assert "Traceback" not in err
    valid = min(counts) >= 0 and sum(counts) > 0 and draws >= 4 and chains >= 1
    if valid and draws >= 100:
        assert code == 0, (argv, err)
        assert set(json.loads(out)["classifiers"]) == {"A", "B"}
    if code != 0:
        assert code == 2 and "error:" in err, (argv, code, err)
    if not valid:
        assert code == 2, (argv, out[:200])
