"""Every bad input gets a clear error (issue 25): the table of ``benchmarks/bad_inputs.py``.

Each case feeds one invalid input to the public Python API (data constructors, priors,
builders, ``fit``, summaries, analysis functions, plots, ``report``) or to the CLI
(``bayescm.cli.main``) and must get bayescm's own error, or a ``ValueError``,
``TypeError`` or ``KeyError`` whose message names the argument (an ``OSError`` naming
the path, for a report's file): no ``AttributeError``/``IndexError``, no numpy or pandas
internals, no silent acceptance, and no hang (each case runs under
:func:`tests.timebound.time_bound`).  ``python benchmarks/bad_inputs.py`` prints the same
table's tallies per area.

The cases still open are marked ``xfail`` with the module that must change; they live
in modules outside the change that added this table and are listed in its report.
"""

from __future__ import annotations

import pytest

from .conftest import load_script
from .timebound import time_bound

bad = load_script("benchmarks/bad_inputs.py", "bayescm_bad_inputs")

OPEN = {  # label -> where the fix belongs (not clear on this table's first run)
    "ConfusionMatrix.from_counts('x')": "bayescm/data/confusion.py: from_counts",
    "AgreementTable.from_counts('x')": "bayescm/data/agreement.py: from_counts",
    "three_beta(prevalence='x')": "bayescm/models/three_beta/model.py: prevalence",
    "three_beta(prevalence=[0.5, 0.5]) for 1": "bayescm/models/three_beta/model.py",
    "multiclass_rows('x')": "bayescm/data/multiclass.py: as_multiclass's message",
    "hui_walter(conditional_dependence='x')": "bayescm/models/hui_walter/model.py",
    "groups(unsliced)": "bayescm/models/groups/model.py: refuse unsliced data",
    "fit(random_seed=-1)": "bayescm/inference/fit.py: random_seed",
    "fit(target_accept=2)": "bayescm/inference/fit.py: target_accept in (0, 1)",
    "fit(metrics=42)": "bayescm/inference/fit.py / draws.py: metrics",
    "summary('x')": "bayescm/summary.py: idata type",
    "check_convergence('x')": "bayescm/inference/convergence.py: idata type",
    "check_convergence(rhat_max=0)": "bayescm/inference/convergence.py: rhat_max",
    "posterior_predictive_check('x')": "bayescm/inference/ppc.py: idata type",
    "compare(draws=0)": "bayescm/analysis/compare.py: draws",
    "alerts(threshold=2)": "bayescm/analysis/alerts.py: threshold of a rate",
    "sample_size(pilot='x')": "bayescm/analysis/sample_size.py: pilot",
    "bayescm summarize --tp 26 --fn 0 --fp 2 --tn 6 --seed -1":
        "bayescm/inference/fit.py (random_seed) or the CLI's --seed type",
}

CASES = bad.cases()


@pytest.fixture(scope="module")
def outcomes() -> dict[str, object]:
    """Every case run once, each within its time bound."""
    return {f"{c.area}: {c.label}": bad.run_case(c, bound=time_bound) for c in CASES}


def _param(case):
    marks = ([pytest.mark.xfail(reason=f"open: {OPEN[case.label]}", strict=False)]
             if case.label in OPEN else [])
    return pytest.param(case, id=f"{case.area}: {case.label}", marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_a_bad_input_gets_a_clear_error(case, outcomes):
    outcome = outcomes[f"{case.area}: {case.label}"]
    assert outcome.verdict == "clear", outcome.line()


def test_the_table_covers_every_area_and_the_script_prints_its_tallies(outcomes, capsys):
    assert len(CASES) >= 250
    assert {c.area for c in CASES} == set(bad.AREAS)
    assert all(o.verdict != "hang" for o in outcomes.values())
    table = bad.tallies(list(outcomes.values()))
    assert list(table.index) == [*bad.AREAS, "all"]
    assert table.loc["all", "N"] == len(CASES)
    assert table.loc["all", "not clear"] <= len(OPEN)
    for area in ("priors", "plots", "report"):  # the areas with no open case
        assert table.loc[area, "not clear"] == 0, area
    # the script's own run of one area: the same verdicts, tallied and printed
    assert bad.main(["--area", "priors"]) == 0
    printed = capsys.readouterr().out
    assert "priors: 0 of" in printed and "not clear" in printed
