"""Every bad input gets a clear error (issue 25): the table of ``benchmarks/bad_inputs.py``.

Each case feeds one invalid input to the public Python API (data constructors, priors,
builders, ``fit``, summaries, analysis functions, plots, ``report``) or to the CLI
(``bayescm.cli.main``) and must get bayescm's own error, or a ``ValueError``,
``TypeError`` or ``KeyError`` whose message names the argument (an ``OSError`` naming
the path, for a report's file): no ``AttributeError``/``IndexError``, no numpy or pandas
internals, no silent acceptance, and no hang (each case runs under
:func:`tests.timebound.time_bound`).  ``python benchmarks/bad_inputs.py`` prints the same
table's tallies per area.

A case found unclear is listed in ``OPEN`` (label -> the module that must change) and
marked strictly ``xfail``: it fails the suite as soon as it is fixed and not removed.
None is open.
"""

from __future__ import annotations

import pytest

from .conftest import load_script
from .timebound import time_bound

bad = load_script("benchmarks/bad_inputs.py", "bayescm_bad_inputs")

OPEN: dict[str, str] = {}  # label -> where the fix belongs; every case is clear now

CASES = bad.cases()


@pytest.fixture(scope="module")
def outcomes() -> dict[str, object]:
    """Every case run once, each within its time bound."""
    return {f"{c.area}: {c.label}": bad.run_case(c, bound=time_bound) for c in CASES}


def _param(case):
    marks = ([pytest.mark.xfail(reason=f"open: {OPEN[case.label]}", strict=True)]
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
    for area in bad.AREAS:  # no open case: every area clear
        assert table.loc[area, "not clear"] == 0, area
    # the script's own run of one area: the same verdicts, tallied and printed
    assert bad.main(["--area", "priors"]) == 0
    printed = capsys.readouterr().out
    assert "priors: 0 of" in printed and "not clear" in printed
