"""The Benchmark-items page (bayescm.app.items_logic), without a browser.

The results read from the page's CSV are checked against the library's own
:meth:`bayescm.ItemResults.from_frame` of the same frame; the fit job's tables against
:func:`bayescm.analysis.benchmark_intervals`, :func:`~bayescm.analysis.tied_sets` and
:func:`~bayescm.analysis.leaderboard` of an in-process ``bcm.fit`` with the same options
and seed (reproducible draws: the numbers agree to float precision), and the exact
path against the closed-form Beta posterior.
"""

from __future__ import annotations

import time
import types
import urllib.parse
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import strategies as st
from scipy import stats

import bayescm as bcm
from bayescm.analysis.items_simulate import simulate_items
from bayescm.app import fitjob, state
from bayescm.app import items_logic as il
from bayescm.app.pages_common import InputError
from tests.app.test_state_properties import page_value
from tests.bounded import refused_fast
from tests.test_properties import BOUND, prop
from tests.timebound import time_bound


def _csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False)


def _run(job) -> object:
    while (p := job.poll()).state == "running":
        time.sleep(0.05)
    assert p.state == "done", p.error
    return job.result()


def test_default_results_are_the_library_results_of_the_same_frame() -> None:
    res = il.parse_results(il.DEFAULT_ITEMS)
    frame = pd.read_csv(pd.io.common.StringIO(il.DEFAULT_ITEMS), skipinitialspace=True)
    direct = bcm.ItemResults.from_frame(frame, cluster="cluster")
    assert res == direct
    assert (res.models, res.n_items, res.n_clusters) == (("A", "B", "C"), 30, 6)


def test_runs_and_clusters_are_read_in_any_case() -> None:
    df = simulate_items(20, [0.6, 0.7], icc=0.1, cluster_size=4, runs=3, rng=1)
    text = _csv(df.rename(columns={"item": "Item", "run": "RUN"}))
    res = il.parse_results(text)
    assert res == bcm.ItemResults.from_frame(df, cluster="cluster", run="run")
    assert not res.one_run and res.trials_array.max() == 3


@pytest.mark.parametrize(("text", "words"), [
    ("", "header line"),
    ("item, model\n1, a", "missing correct"),
    ("item, model, correct, score\n1, a, 1, 2", "unknown score"),
    ("item, model, correct\n1, a, 2\n1, b, 1", "0 or 1"),
    ("item, model, correct\n1, a, 1\n1, a, 0\n1, b, 1", "Duplicate rows"),
    ("item, model, correct\n1, a, 1\n2, a, 0\n1, b, 1", "every item"),
    ("item, model, correct, cluster\n1, a, 1, x\n1, b, 1, y", "constant within an item"),
    ("item, model, correct\n" + "\n".join(f"1, m{i}, 1" for i in range(31)), "at most 30"),
])
def test_bad_csvs_get_a_message_under_the_results_field(text, words) -> None:
    with pytest.raises(InputError) as err:
        il.build(il.ItemsState(results=text))
    assert err.value.field == "results" and words in err.value.message, err.value.message


@pytest.mark.parametrize(("changes", "name", "words"), [
    ({"level": 1.2}, "level", "between 0.5 and 1"),
    ({"hdi_prob": 1.5}, "hdi_prob", ""),
    ({"chains": 17}, "chains", "more than the 16"),
    ({"tune": 100_000_000}, "tune", "steps"),
    ({"seed": -1}, "seed", "[0, 2^32)"),
])
def test_options_over_their_bounds_are_refused_before_fitting(changes, name, words) -> None:
    with pytest.raises(InputError) as err:
        il.build(il.ItemsState(**changes))
    assert err.value.field == name and words in err.value.message, err.value.message


def test_a_fit_over_the_memory_bound_is_refused_before_it_starts() -> None:
    """The fit's memory estimate, before it starts: 2 models x 5,000 items keep 5,000
    item effects per draw, 32 GB at 200,000 draws x 4 chains (items replicate no data,
    so no predictive group is counted)."""
    text = _csv(simulate_items(5000, [0.6, 0.7], rng=1))
    with pytest.raises(InputError) as err:
        il.build(il.ItemsState(results=text, draws=200_000))
    assert err.value.field == "draws" and "memory" in err.value.message, err.value.message
    il.build(il.ItemsState(results=text, draws=1000))  # the same data at 1,000 draws: fine


def test_large_inputs_are_refused_fast_before_anything_is_built() -> None:
    rows = "item, model, correct\n" + "1, a, 1\n" * (il.MAX_ROWS + 1)
    err = refused_fast(lambda: il.parse_results(rows), InputError)
    assert "at most 200,000" in err.message and "bcm.models.items" in err.message
    items = "item, model, correct\n" + "".join(f"{i}, a, 1\n" for i in range(il.MAX_ITEMS + 1))
    err = refused_fast(lambda: il.parse_results(items), InputError)
    assert "at most 30 models and 5,000 items" in err.message


def test_exact_path_for_one_model_on_independent_items(tmp_path) -> None:
    """One model, 40 independent items answered once, 27 right: accuracy ~ Beta(28, 14)."""
    text = "item, model, correct\n" + "".join(f"{i}, m, {int(i < 27)}\n" for i in range(40))
    state = il.ItemsState(results=text, draws=5000, chains=4, seed=3)
    built = il.build(state)
    assert built.exact and il.fit_options(built.results, state)["sampler"] == "exact"
    result = _run(il.fit_job(state, directory=tmp_path).start())
    row = result.table.loc["m"]
    # 20,000 i.i.d. draws: the mean's MC sd is sd/sqrt(20000) = 0.072/141 = 0.0005 -> 5 sd
    assert row["bayes_mean"] == pytest.approx(28 / 42, abs=0.0026)
    # equal-tailed bounds: MC sd of a 2.5% tail quantile from 20,000 draws is
    # sqrt(0.025 * 0.975 / 20000) / density there (about 0.8) = 0.0014; 0.005 is 3.5 sd
    lo, hi = stats.beta.ppf([0.025, 0.975], 28, 14)
    assert (row["bayes_lower"], row["bayes_upper"]) == pytest.approx(
        (float(lo), float(hi)), abs=0.005)
    assert row["clt_lower"] == pytest.approx(27 / 40 - stats.norm.ppf(0.975) * np.sqrt(
        (27 / 40) * (13 / 40) / 39), rel=1e-9)
    assert result.ranks.empty and result.converged


def test_job_gives_the_librarys_numbers_for_the_same_seed(tmp_path) -> None:
    state = il.ItemsState(draws=200, tune=200, chains=2, seed=4, level=0.9)
    result = _run(il.fit_job(state, directory=tmp_path).start())
    res = il.parse_results(state.results)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(bcm.models.items(res), draws=200, tune=200, chains=2, random_seed=4,
                        prior=False, predictive=False)
    intervals = bcm.analysis.benchmark_intervals(res, idata)
    ties = bcm.analysis.tied_sets(idata, "acc", level=0.9)
    board = bcm.analysis.leaderboard(idata, "acc").to_frame()
    table = result.table
    assert list(table.index) == list(ties.index)  # best first
    for col in ("bayes_mean", "bayes_lower", "bayes_upper", "clt_lower", "clustered_upper",
                "icc", "design_effect"):
        np.testing.assert_allclose(table[col], intervals.loc[table.index, col], rtol=1e-9)
    assert table["tier"].tolist() == ties["tier"].tolist()
    np.testing.assert_allclose(table["p_leader_better"], ties["p_leader_better"], rtol=1e-12)
    np.testing.assert_allclose(table["p_best"], board.loc[table.index, "p_best"], rtol=1e-12)
    np.testing.assert_allclose(result.ranks, board.loc[table.index, list(result.ranks.columns)])
    saved = bcm.load(result.path)  # the download holds the fit shown
    assert saved.attrs["random_seed"] == 4 and saved.posterior.sizes["draw"] == 200
    assert "posterior_predictive" not in saved.groups()  # predictive=False, as asked
    assert result.figure().axes


def test_items_state_round_trips_through_the_url() -> None:
    text = _csv(simulate_items(12, [0.6, 0.7], icc=0.1, cluster_size=4, runs=2, rng=2))
    s = il.ItemsState(results=text, hdi_prob=0.9, level=0.8, draws=300, tune=400, chains=2,
                      seed=7, fitted=True)
    query = s.to_query()
    assert set(query) == {"results", "hdi_prob", "level", "draws", "tune", "chains", "seed",
                          "fitted"}
    assert il.ItemsState.from_query(query) == s
    assert il.ItemsState.from_query(state.parse(urllib.parse.urlencode(query))) == s


def _opened(monkeypatch, query: dict):
    from bayescm.app.pages.items import Items

    location = types.SimpleNamespace(search="?" + urllib.parse.urlencode(query))
    monkeypatch.setattr(state, "_session_location", lambda: location)
    page = Items()
    page.view()
    page.edited()
    return page, location


def test_a_link_over_the_bounds_starts_no_fit(monkeypatch) -> None:
    started = []
    monkeypatch.setattr(fitjob.FitJob, "start", lambda self: started.append(self) or self)
    page, _ = _opened(monkeypatch, {"fitted": "1", "chains": "250000"})
    assert "250,000 chains" in page.notes["chains"].text and not page.runner.ready
    page.runner.start()
    assert started == []
    page.state.chains = 2
    assert page.runner.ready and "6 clusters" in page.found.object


def test_the_page_says_what_it_read_and_edits_keep_the_link(monkeypatch) -> None:
    page, location = _opened(monkeypatch, {"level": "0.9"})
    assert page.state.level == 0.9 and "3 model(s), 30 items" in page.found.object
    page.state.results = "item, model, correct\n1, a, 1\n2, a, 0"
    assert "exact Beta" in page.found.object and "results=" in location.search
    page.state.results = "item, model\n1, a"
    assert "missing correct" in page.notes["results"].text and not page.runner.ready


ITEM_FIELDS = ["results", "hdi_prob", "level", "draws", "tune", "chains", "seed", "fitted"]
item_value = st.one_of(page_value, st.sampled_from(
    ["0.9", "0.5", "1", "item, model, correct\n1, a, 1", "item, model, correct\n1, a, 7",
     "item, model, correct\n" + "\n".join(f"{i}, m{i % 40}, 1" for i in range(400))]))


@pytest.mark.filterwarnings("ignore:The recursion limit")  # PyMC raises it
@prop(query=st.dictionaries(st.sampled_from(ITEM_FIELDS), item_value, max_size=4))
def test_the_items_page_opened_from_any_link_shows_messages_not_errors(query):
    """As tests/app/test_state_properties.py does for the other pages."""
    with time_bound(BOUND, "opening items"), pytest.MonkeyPatch.context() as mp, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        page, _ = _opened(mp, query)
    for text in (n.text for n in page.notes.values() if n.text):
        assert "Unexpected error" not in text and "Traceback" not in text, text
        assert "/work/" not in text and ".py" not in text, text


def test_the_upload_page_sends_item_level_results_to_this_page() -> None:
    from bayescm.app import upload_logic as ul

    df = simulate_items(12, [0.6, 0.8], icc=0.1, cluster_size=4, runs=2, rng=3)
    found = ul.analyse(ul.read_csv(_csv(df)), ul.UploadState())
    assert found.kind == "items" and found.page == "items"
    direct = bcm.ItemResults.from_frame(df, cluster="cluster", run="run")
    # the link opens this page on the same results
    assert il.parse_results(il.ItemsState.from_query(found.query).results) == direct
    means = (direct.successes_array / direct.trials_array).mean(axis=1)
    np.testing.assert_allclose(found.tables["models"]["mean"], means)
    with pytest.raises(InputError) as err:  # the library's message, under the file field
        ul.analyse(ul.read_csv("item,model,correct\n1,a,3\n"), ul.UploadState())
    assert err.value.field == "file" and "0 or 1" in err.value.message
