"""The No-labels page's logic (bayescm.app.nolabels_logic), without a browser.

Reading the inputs and the identifiability verdict are checked against the library's
own objects and messages; the sampling job against an in-process ``bcm.fit`` of the same
model and seed (NUTS with a fixed seed is reproducible, so the numbers agree to float
precision), and its cancel against the child process's exit.
"""

from __future__ import annotations

import threading
import time
import warnings

import pytest

import bayescm as bcm
from bayescm.app import fitjob
from bayescm.app import nolabels_logic as nl
from bayescm.app.pages_common import InputError
from bayescm.inference.fit import FIT_STAGES

PARTIAL = """population, ++, +-, -+, --, +?, ++|D+, --|D-
north, 40, 3, 7, 100, 6, 9, 14
south, 80, 9, 6, 60, 2, 4, 3"""


def _wait(job: nl.FitJob, *, stage: int | None = None, timeout: float = 120) -> nl.Progress:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        p = job.poll()
        if p.state != "running" or (stage is not None and p.stage >= stage):
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
    """A fit of 2 x 501,000 draws takes far longer than the quarter second between
    reports: the page sees the draws counted mid-way, then Cancel ends the child.
    (Long in tuning: kept draws that many would hold gigabytes, over the server's bound.)"""
    state = nl.NoLabelsState(draws=1000, tune=500_000, chains=2, seed=3)
    job = nl.FitJob(state, directory=tmp_path).start()
    deadline = time.monotonic() + 120
    while (p := job.poll()).state == "running" and not 0 < p.done < p.total:
        assert time.monotonic() < deadline, p
        time.sleep(0.05)
    assert p.state == "running" and p.total == 2 * 501_000, p
    assert p.text == f"sampling (NUTS): {p.done:,} of {p.total:,} draws (tuning included)"
    assert 0.1 < p.fraction < 0.8
    assert job.cancel().state == "cancelled"
    assert job.join(10) and job.stopped
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
    assert tuple(fitjob.FIT_WORDS) == FIT_STAGES[1:]  # words for each of fit's stages
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


def test_fits_beyond_the_servers_samplers_wait_their_turn(monkeypatch) -> None:
    """With one sampler slot, a second fit waits (and says so) until the first is
    cancelled, then samples; a cancelled fit frees its slot and its directory."""
    monkeypatch.setattr(fitjob, "_SLOTS", threading.BoundedSemaphore(1))
    state = nl.NoLabelsState(draws=1000, tune=500_000, chains=2)
    first = nl.FitJob(state).start()
    assert _wait(first, stage=1).state == "running"
    second = nl.FitJob(state).start()
    time.sleep(1.0)  # ample for a free slot to be taken: this one is not free
    p = second.poll()
    assert p.waiting and p.text == fitjob.WAITING and p.state == "running"
    assert p.fraction == 0.0
    assert first.cancel().state == "cancelled"
    assert first.join(10) and first.stopped
    with pytest.raises(RuntimeError, match="cancelled"):
        first.result()
    first.discard()  # its own temporary directory goes too
    assert not first._dir.exists()
    p = _wait(second, stage=1)
    assert p.state == "running" and not p.waiting
    second.discard()
    assert second.join(10)
    # a fit cancelled while it waits never starts its process
    third, fourth = nl.FitJob(state).start(), nl.FitJob(state).start()
    assert _wait(third, stage=1).state == "running"
    fourth.cancel()
    assert fourth.join(5) and not fourth._launched
    third.discard()
    assert third.join(10)


def test_sampler_options_are_checked_under_their_fields() -> None:
    for options, where, words in (
        ({"draws": 0}, "draws", "draws must be an integer >= 4, got 0."),
        ({"tune": 0}, "tune", "tune=0 cannot run on nutpie"),
        ({"chains": 0}, "chains", "chains must be an integer >= 1, got 0."),
        ({"seed": -1}, "seed", "seed must be an integer in [0, 2^32)"),
        ({"draws": 600_000, "chains": 2}, "draws", "600,000 draws x 2 chains"),
    ):
        with pytest.raises(InputError) as caught:
            nl.build(nl.NoLabelsState(**options))
        assert caught.value.field == where and words in caught.value.message, caught.value
    with pytest.raises(ValueError) as err:  # the library's own words
        bcm.fit(nl.build(nl.NoLabelsState()).model, draws=0)
    assert str(err.value) == "draws must be an integer >= 4, got 0."


def test_failing_fit_reports_the_library_message(tmp_path) -> None:
    job = nl.FitJob(nl.NoLabelsState(draws=0), directory=tmp_path).start()
    p = _wait(job)
    assert p.state == "failed"
    assert "draws" in p.error


def test_state_round_trips_through_the_url() -> None:
    state = nl.NoLabelsState(table=PARTIAL, priors="sensitivity A: beta(20, 4)",
                             dependence="A~B", draws=500)
    assert nl.NoLabelsState.from_query(state.to_query()) == state


# error rates' priors given for the rates
CUT_PRIORS = "sensitivity A: beta(2, 8)\nspecificity A: beta(2, 8)"


def test_priors_cut_at_se_plus_sp_one_are_the_librarys_warning() -> None:
    """Beta(2, 8) for both of A's rates puts 99.83% of their mass where Se + Sp < 1: the
    library warns (PriorTruncationWarning) and the build keeps that message, once, for
    the page; priors inside the region give none."""
    from bayescm.models.hui_walter import PriorTruncationWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bcm.models.hui_walter(nl.parse_table(nl.DEFAULT_TABLE),
                              priors={"sensitivity": {"A": "beta:2,8"},
                                      "specificity": {"A": "beta:2,8"}})
    library = [str(w.message) for w in caught if w.category is PriorTruncationWarning]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the build raises no warning of its own
        built = nl.build(nl.NoLabelsState(priors=CUT_PRIORS))
    assert built.truncation == tuple(library) and len(library) == 1
    assert "put 99.83% of their mass where Se + Sp < 1" in built.truncation[0]
    assert nl.build(nl.NoLabelsState()).truncation == ()


def test_the_page_shows_the_truncation_as_it_shows_the_verdict(monkeypatch) -> None:
    """The page opened at a link with such priors shows the message under the
    identifiability verdict (escaped HTML), and nothing of the kind without them."""
    import html
    import types
    import urllib.parse

    from bayescm.app import state
    from bayescm.app.pages.nolabels import NoLabels

    location = types.SimpleNamespace(search="")
    monkeypatch.setattr(state, "_session_location", lambda: location)

    def opened(query: dict) -> NoLabels:
        location.search = "?" + urllib.parse.urlencode(query)
        page = NoLabels()
        page.view()
        page.edited()
        return page

    note = nl.build(nl.NoLabelsState(priors=CUT_PRIORS)).truncation[0]
    shown = opened({"priors": CUT_PRIORS}).verdict.object
    assert f'<span data-testid="prior-truncation">{html.escape(note)}</span>' in shown
    assert shown.index('data-testid="identifiability"') < shown.index("prior-truncation")
    assert "prior-truncation" not in opened({}).verdict.object
