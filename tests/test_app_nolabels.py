"""The No-labels page's logic (bayescm.app.nolabels_logic), without a browser.

Reading the inputs and the identifiability verdict are checked against the library's
own objects and messages; the sampling job against an in-process ``bcm.fit`` of the same
model and seed (NUTS with a fixed seed is reproducible, so the numbers agree to float
precision), and its cancel against the child process's exit.
"""

from __future__ import annotations

import time
import warnings

import pytest

import bayescm as bcm
from bayescm.app import nolabels_logic as nl
from bayescm.app.pages_common import InputError

PARTIAL = """population, ++, +-, -+, --, +?, ++|D+, --|D-
north, 40, 3, 7, 100, 6, 9, 14
south, 80, 9, 6, 60, 2, 4, 3"""


def _wait(job: nl.FitJob, *, until: str | None = None, timeout: float = 120) -> nl.Progress:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        p = job.poll()
        if p.state != "running" or (until is not None and p.text == until):
            return p
        time.sleep(0.1)
    raise AssertionError(f"job still {job.poll()} after {timeout} s")


def test_table_with_missing_and_verified_cells_is_the_library_table() -> None:
    tab = nl.parse_table(PARTIAL)
    direct = bcm.AgreementTable.from_counts({
        "north": {"++": 40, "+-": 3, "-+": 7, "--": 100, "+?": 6, "++|D+": 9, "--|D-": 14},
        "south": {"++": 80, "+-": 9, "-+": 6, "--": 60, "+?": 2, "++|D+": 4, "--|D-": 3}})
    assert tab == direct
    assert nl.build(nl.NoLabelsState(table=PARTIAL)).identified == "data"


def test_identifiability_verdict_is_the_library_message() -> None:
    one_pop = "++, +-, -+, --\n40, 3, 7, 100"
    built = nl.build(nl.NoLabelsState(table=one_pop))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bcm.models.hui_walter(nl.parse_table(one_pop))
    assert built.identified == "none"
    assert built.identifiability == str(caught[0].message)
    # informative priors on Se and Sp of one classifier close the gap of one parameter
    strong = nl.build(nl.NoLabelsState(table=one_pop, priors="sensitivity A: beta(40, 4)\n"
                                                            "specificity A: beta(60, 3)"))
    assert strong.identified == "priors"
    assert "identified only through the 2 informative prior(s)" in strong.identifiability
    flat = bcm.priors.Beta(1, 1)
    two = bcm.models.check_identifiability(2, 2, 0, {"sensitivity": [flat] * 2,
                                                     "specificity": [flat] * 2,
                                                     "prevalence": [flat] * 2})
    assert nl.build(nl.NoLabelsState()).identifiability == two.message
    # one classifier: the library's own verdict for it
    one = nl.build(nl.NoLabelsState(table="+, -\n30, 70"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bcm.models.hui_walter(nl.parse_table("+, -\n30, 70"))
    assert (one.identified, one.identifiability) == ("none", str(caught[0].message))


def test_elicited_priors_are_the_library_helpers() -> None:
    got = nl.parse_priors("sensitivity A: elicit:0.9,0.8,0.95\nspecificity: pert:0,0.9,1")
    assert got["sensitivity"]["A"] == bcm.priors.elicit_beta(mode=0.9, lower=0.8, prob=0.95)
    assert got["specificity"] == bcm.priors.beta_pert(0, 0.9, 1)


@pytest.mark.parametrize(("state", "where", "library"), [
    (nl.NoLabelsState(table="population, ++, +-, -+, --\np, 1, 2, -3, 4"), "table",
     lambda: bcm.AgreementTable.from_counts({"p": {"++": 1, "+-": 2, "-+": -3, "--": 4}})),
    (nl.NoLabelsState(table="population, ++, +-, -+\np, 1, 2, 3"), "table",
     lambda: bcm.AgreementTable.from_counts({"p": {"++": 1, "+-": 2, "-+": 3}})),
    (nl.NoLabelsState(dependence="A~Q"), "dependence",
     lambda: bcm.models.hui_walter(nl.parse_table(nl.DEFAULT_TABLE),
                                   conditional_dependence=[("A", "Q")])),
    (nl.NoLabelsState(priors="sensitivity Q: beta(2, 2)"), "priors",
     lambda: bcm.models.hui_walter(nl.parse_table(nl.DEFAULT_TABLE),
                                   priors={"sensitivity": {"Q": bcm.priors.Beta(2, 2)}})),
    (nl.NoLabelsState(priors="sensitivity: beta(0, 2)"), "priors",
     lambda: bcm.models.hui_walter(nl.parse_table(nl.DEFAULT_TABLE),
                                   priors={"sensitivity": bcm.priors.Beta(0, 2)})),
])
def test_bad_input_shows_the_library_message_at_its_field(state, where, library) -> None:
    with pytest.raises(InputError) as caught:
        nl.build(state)
    with pytest.raises((ValueError, KeyError)) as direct:
        library()
    expected = direct.value.args[0] if isinstance(direct.value, KeyError) else str(direct.value)
    assert (caught.value.field, caught.value.message) == (where, expected)


@pytest.mark.parametrize(("state", "where"), [
    (nl.NoLabelsState(priors="sensitivity A beta(2, 2)"), "priors"),
    (nl.NoLabelsState(priors="sensitivity: gamma(2, 2)"), "priors"),
    (nl.NoLabelsState(dependence="A~B~C"), "dependence"),
    (nl.NoLabelsState(hdi_prob=0.0), "hdi_prob"),
    (nl.NoLabelsState(table="++, +-, -+, --\n1, 2, 3, 4\n5, 6, 7, 8"), "table"),
])
def test_unreadable_lines_name_their_field(state, where) -> None:
    with pytest.raises(InputError) as caught:
        nl.build(state)
    assert caught.value.field == where


def test_job_reports_the_draws_while_sampling_and_cancels_mid_way(tmp_path) -> None:
    """A fit of 2 x 1,001,000 draws takes far longer than the quarter second between
    reports: the page sees the draws counted mid-way, then Cancel ends the child."""
    state = nl.NoLabelsState(draws=1_000_000, tune=1000, chains=2, seed=3)
    job = nl.FitJob(state, directory=tmp_path).start()
    deadline = time.monotonic() + 120
    while (p := job.poll()).state == "running" and not 0 < p.done < p.total:
        assert time.monotonic() < deadline, p
        time.sleep(0.05)
    assert p.state == "running" and p.total == 2 * 1_001_000, p
    assert p.text == f"sampling (NUTS): {p.done:,} of {p.total:,} draws (tuning included)"
    assert 0.1 < p.fraction < 0.8
    assert job.cancel().state == "cancelled"
    assert not job._process.is_alive()
    job.discard()


def test_job_reports_progress_and_gives_the_fit_of_the_same_seed(tmp_path) -> None:
    state = nl.NoLabelsState(draws=150, tune=150, chains=2, seed=3, dependence="A~B",
                             priors="sensitivity A: beta(20, 4)")
    job = nl.FitJob(state, directory=tmp_path).start()
    seen = []
    while (p := job.poll()).state == "running":
        seen.append(p)
        time.sleep(0.05)
    assert p.state == "done", p.error
    assert all(q.text.startswith(nl.STAGES[q.stage]) for q in seen)
    shares = [q.fraction for q in seen] + [p.fraction]
    assert shares == sorted(shares) and shares[-1] == 1.0
    result = job.result()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(nl.build(state).model, draws=150, tune=150, chains=2, random_seed=3)
    se = idata.posterior["sensitivity"].mean(("chain", "draw"))
    shown = result.summary.set_index(["parameter", "unit"])["mean"]
    for c in ("A", "B"):
        assert shown[("sensitivity", c)] == pytest.approx(float(se.sel(classifier=c)), rel=1e-6)
    assert result.convergence == bcm.check_convergence(bcm.load(result.path)).message()
    check = bcm.posterior_predictive_check(bcm.load(result.path))
    assert result.check["p_value"].to_dict() == check["p_value"].to_dict()
    assert set(result.summary["parameter"]) == {"sensitivity", "specificity", "prevalence"}
    job.discard()
    assert not result.path.exists()


def test_cancel_stops_the_sampler() -> None:
    job = nl.FitJob(nl.NoLabelsState(draws=10**7, tune=1000, chains=2)).start()
    assert _wait(job, until="sampling (NUTS)").state == "running"
    p = job.cancel()
    assert p.state == "cancelled"
    assert not job._process.is_alive()
    with pytest.raises(RuntimeError, match="cancelled"):
        job.result()
    job.discard()  # its own temporary directory goes too
    assert not job._dir.exists()


def test_failing_fit_reports_the_library_message(tmp_path) -> None:
    job = nl.FitJob(nl.NoLabelsState(draws=0), directory=tmp_path).start()
    p = _wait(job)
    assert p.state == "failed"
    assert "draws" in p.error


def test_state_round_trips_through_the_url() -> None:
    state = nl.NoLabelsState(table=PARTIAL, priors="sensitivity A: beta(20, 4)",
                             dependence="A~B", draws=500)
    assert nl.NoLabelsState.from_query(state.to_query()) == state
