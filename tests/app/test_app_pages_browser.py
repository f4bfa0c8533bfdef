"""The Compare, No-labels and Upload pages in real headless Chromium.

Every expected number is computed here by the library for the same input, with the
seeds the page uses (:func:`bayescm.app.compare_logic.seeds`; NUTS with a fixed seed
is reproducible), and rounded as the page rounds it, so page and test agree digit for
digit.  The NUTS page is kept fast: 150 draws and 150 tuning steps on two chains.

The default suite renders each page and checks its numbers; two behaviours whose logic
has its own test without a browser (a state too large for a link: ``test_app_url``;
pooling groups: ``test_app_groups``) run in the browser under ``-m slow``
(``make test-all``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import time
import urllib.parse

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

import bayescm as bcm
from bayescm.app import compare_logic, groups_logic, nolabels_logic
from bayescm.app.pages_common import data_testid as cell_id
from tests.app_support import enter, fits_the_phone, screenshot, text_of

# the default suite drives one page in Chromium (test_app_one_browser, test_app_upload_browser);
# every other page's journey runs under -m slow (`make test-all`), its logic server-side in
# the default suite
pytestmark = [pytest.mark.engine("chromium"), pytest.mark.slow]

FIT_TIMEOUT_MS = 120_000  # the first fit of a server starts its forkserver (PyMC import)


def independent(metric: str = "ba", margin: float = 0.0, a: str = "A", b: str = "B",
                seed: int = 1) -> tuple[str, str]:
    """P(A better) and A's P(best) for the example counts, by the library."""
    cms = compare_logic.parse_counts(compare_logic.DEFAULT_COUNTS)
    seed_ab, seed_board = compare_logic.seeds(seed)
    comp = bcm.analysis.compare((cms, a), (cms, b), metric, margin,
                                draws=compare_logic.COMPARE_DRAWS, random_seed=seed_ab)
    board = bcm.analysis.leaderboard(cms, metric, draws=compare_logic.BOARD_DRAWS,
                                     random_seed=seed_board)
    return f"{comp.probability:.3f}", f"{board.summary.loc['A', 'p_best']:.3f}"


def test_compare_shows_the_library_numbers_and_follows_edits(open_page, tmp_path):
    page = open_page("compare", wait_for="p-better")
    p_better, p_best = independent()
    assert text_of(page, "p-better") == p_better
    assert text_of(page, "board-a-p-best") == p_best
    enter(page, "margin", "0.05")
    expect(page.get_by_test_id("p-better")).to_have_text(independent(margin=0.05)[0])
    assert "margin=0.05" in page.url
    # the downloaded table holds the comparison shown
    with page.expect_download() as info:
        page.locator(".bcm-download-comparison button").click()
    table = pd.read_csv(info.value.path())
    assert f"{table.loc[0, 'p_better']:.3f}" == independent(margin=0.05)[0]
    assert table.loc[0, "margin"] == 0.05
    screenshot(page, tmp_path, "compare")
    # bad input: the library's message under the field, never a traceback
    enter(page, "counts", "name, tp, fn, fp, tn\nA, 40, 7, 8, 15\nB, 31, -9, 13, 20")
    with pytest.raises(bcm.CountsError) as err:
        bcm.ConfusionMatrix(tp=[40, 31], fn=[7, -9], fp=[8, 13], tn=[15, 20],
                            classifier=["A", "B"])
    expect(page.get_by_test_id("error-counts")).to_have_text(str(err.value))
    assert "Traceback" not in page.content()
    screenshot(page, tmp_path, "compare-bad-input")


def test_compare_shared_paired_link_restores_the_page_at_phone_width(open_page, tmp_path):
    query = urllib.parse.urlencode({"design": "paired", "metric": "acc", "a": "B", "b": "A",
                                    "margin": 0.01})
    page = open_page(f"compare?{query}", phone=True, wait_for="p-better")
    y, preds = compare_logic.parse_predictions(compare_logic.DEFAULT_PREDICTIONS)
    comp = bcm.analysis.compare_paired(y, preds["B"], preds["A"], "acc", 0.01,
                                       draws=compare_logic.COMPARE_DRAWS,
                                       random_seed=compare_logic.seeds(1)[0])
    assert text_of(page, "p-better") == f"{comp.probability:.3f}"
    assert page.locator(".bcm-metric input").input_value() == "acc"
    assert page.locator(".bcm-cases textarea").is_visible()
    assert fits_the_phone(page)
    screenshot(page, tmp_path, "compare-paired-phone")


@pytest.mark.slow
def test_compare_state_too_large_for_a_link_says_so_and_keeps_the_bare_address(
        open_page, tmp_path):
    from bayescm.app.state import MAX_QUERY

    page = open_page("compare?design=paired", wait_for="p-better")
    rows = np.random.default_rng(5).integers(0, 2, size=(1200, 3))
    big = "y_true, A, B\n" + "\n".join(", ".join(map(str, r)) for r in rows)
    assert len(urllib.parse.urlencode({"cases": big}, safe=",;")) > MAX_QUERY
    enter(page, "cases", big)
    expect(page.get_by_test_id("error-url")).to_contain_text("too large for a link")
    expect(page).to_have_url(re.compile(r"/compare$"))  # no link that would fail
    comp = bcm.analysis.compare_paired(rows[:, 0], rows[:, 1], rows[:, 2], "ba",
                                       draws=compare_logic.COMPARE_DRAWS,
                                       random_seed=compare_logic.seeds(1)[0])
    expect(page.get_by_test_id("p-better")).to_have_text(f"{comp.probability:.3f}")
    screenshot(page, tmp_path, "compare-too-large-for-a-link")
    small = "y_true, A, B\n1, 1, 0\n0, 0, 0\n1, 1, 1\n0, 1, 0"
    enter(page, "cases", small)
    expect(page.get_by_test_id("error-url")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"design=paired&cases="))
    page.reload()  # the link written now restores the page
    expect(page.locator(".bcm-cases textarea")).to_have_value(small)


def test_upload_link_with_a_cleared_group_column_keeps_it_cleared(open_page):
    page = open_page("upload?group=&seed=2", wait_for=None)
    expect(page.locator(".bcm-seed input")).to_have_value("2")
    assert page.locator(".bcm-group input").input_value() == ""


def test_nolabels_link_fits_and_shows_its_fit(open_page, tmp_path):
    state = nolabels_logic.NoLabelsState(draws=150, tune=150, chains=2, seed=3,
                                         priors="sensitivity A: beta(20, 4)")
    query = urllib.parse.urlencode({**state.to_query(), "fitted": 1})
    page = open_page(f"nolabels?{query}", wait_for="identifiability")
    assert text_of(page, "identifiability") == nolabels_logic.build(state).identifiability
    # the link of a fitted page fits again when opened: progress, then the results
    page.get_by_test_id("progress").wait_for()
    page.get_by_test_id("convergence").wait_for(timeout=FIT_TIMEOUT_MS)
    screenshot(page, tmp_path, "nolabels-fitted")
    # the numbers shown are the library's summary of the fit the page offers as NetCDF
    # (the same seed's fit in this process is checked in test_app_nolabels.py)
    with page.expect_download() as info:
        page.locator(".bcm-download-fit button").click()
    idata = bcm.load(info.value.path())
    assert idata.attrs["random_seed"] == 3 and idata.posterior.sizes["draw"] == 150
    # the link's prior reached the fit
    assert json.loads(idata.attrs["priors"])["sensitivity"] == {"A": "Beta(20, 4)",
                                                                "B": "Beta(1, 1)"}
    se = idata.posterior["sensitivity"].mean(("chain", "draw"))
    for c in ("A", "B"):
        shown = text_of(page, f"posterior-sensitivity-{c.lower()}-mean")
        assert shown == f"{float(se.sel(classifier=c)):.4f}"
    verdict = bcm.check_convergence(idata).message().splitlines()[0]
    assert text_of(page, "convergence").splitlines()[0] == verdict
    p_all = bcm.posterior_predictive_check(idata).loc["all", "p_value"]
    assert text_of(page, "check-all-p-value") == f"{p_all:.3f}"


def test_nolabels_fit_shows_progress_and_cancels(open_page, tmp_path):
    # long in tuning: as many kept draws would hold gigabytes, over the server's bound
    page = open_page("nolabels?draws=100&tune=500000&chains=2", wait_for="identifiability")
    page.locator(".bcm-fit button").click()
    # 2 x 500,100 draws: the count shows mid-way, with the bar following it
    expect(page.get_by_test_id("progress")).to_contain_text(
        re.compile(r"sampling \(NUTS\): [1-9][\d,]* of 1,000,200 draws"), timeout=FIT_TIMEOUT_MS)
    shown = int(re.search(r": ([\d,]+) of", text_of(page, "progress"))[1].replace(",", ""))
    bar = float(page.locator("progress").first.get_attribute("value"))
    assert 0 < shown < 1_000_200 and 10 <= bar < 80
    screenshot(page, tmp_path, "nolabels-sampling")
    page.locator(".bcm-cancel button").click()
    expect(page.get_by_test_id("progress")).to_have_text("Cancelled.")
    assert page.get_by_test_id("convergence").count() == 0
    # bad input: the library's message under its field
    enter(page, "priors", "sensitivity Q: beta(2, 2)")
    with pytest.raises(ValueError) as err:
        bcm.models.hui_walter(nolabels_logic.parse_table(nolabels_logic.DEFAULT_TABLE),
                              priors={"sensitivity": {"Q": bcm.priors.Beta(2, 2)}})
    expect(page.get_by_test_id("error-priors")).to_have_text(str(err.value))
    screenshot(page, tmp_path, "nolabels-bad-prior")


@pytest.fixture(scope="module")
def predictions_csv(tmp_path_factory) -> tuple[pd.DataFrame, str]:
    rng = np.random.default_rng(8)
    n = 150
    y = rng.integers(0, 2, n)
    frame = pd.DataFrame({"y_true": y, "A": np.where(rng.random(n) < 0.15, 1 - y, y),
                          "B": np.where(rng.random(n) < 0.3, 1 - y, y)})
    path = tmp_path_factory.mktemp("upload") / "predictions.csv"
    frame.to_csv(path, index=False)
    return frame, str(path)


def test_upload_compares_and_links_to_the_compare_page(open_page, predictions_csv, tmp_path):
    frame, path = predictions_csv
    page = open_page("upload")
    page.locator(".bcm-file input[type=file]").set_input_files(path)
    comp = bcm.analysis.compare_paired(frame["y_true"], frame["A"], frame["B"], "ba",
                                       draws=compare_logic.COMPARE_DRAWS,
                                       random_seed=compare_logic.seeds(1)[0])
    assert text_of(page, "p-better") == f"{comp.probability:.3f}"
    assert page.get_by_test_id("upload-kind").get_attribute("data-kind") == "compare"
    screenshot(page, tmp_path, "upload")
    page.get_by_test_id("open-page").click()
    page.wait_for_url("**/compare?*")
    expect(page.get_by_test_id("p-better")).to_have_text(f"{comp.probability:.3f}")


def test_upload_unlabelled_gives_the_agreement_table(open_page, predictions_csv, tmp_path):
    frame, _ = predictions_csv
    unlabelled = frame[["A", "B"]].assign(population=np.where(frame.index < 70, "p1", "p2"))
    path = tmp_path / "unlabelled.csv"
    unlabelled.to_csv(path, index=False)
    page = open_page("upload")
    page.locator(".bcm-file input[type=file]").set_input_files(str(path))
    assert text_of(page, "agreement-p1-++") == str(int(
        ((unlabelled["A"] == 1) & (unlabelled["B"] == 1) & (unlabelled["population"] == "p1"))
        .sum()))
    page.get_by_test_id("open-page").click()
    page.wait_for_url("**/nolabels?*")
    table = bcm.AgreementTable.from_predictions(
        {"A": unlabelled["A"], "B": unlabelled["B"]}, population=unlabelled["population"])
    shown = page.locator(".bcm-table textarea").input_value()
    assert nolabels_logic.parse_table(shown) == table
    screenshot(page, tmp_path, "upload-to-nolabels")


def test_upload_bad_file_shows_its_message(open_page, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("y_true,A\nill,ill\nwell,ill\n")
    page = open_page("upload")
    page.locator(".bcm-file input[type=file]").set_input_files(str(path))
    with pytest.raises(bcm.CountsError) as err:
        bcm.ConfusionMatrix.from_predictions(["ill", "well"], ["ill", "ill"], classifier="A")
    expect(page.get_by_test_id("error-file")).to_have_text(str(err.value))


def grouped_file(tmp_path) -> tuple[pd.DataFrame, str]:
    """Labelled cases of one classifier in three sites, as a CSV under ``tmp_path``."""
    rng = np.random.default_rng(9)
    n = 180
    y = rng.integers(0, 2, n)
    frame = pd.DataFrame({"y_true": y, "A": np.where(rng.random(n) < 0.2, 1 - y, y),
                          "site": rng.choice(["north", "south", "east"], n)})
    path = tmp_path / "grouped.csv"
    frame.to_csv(path, index=False)
    return frame, str(path)


@pytest.fixture
def pool_jobs(monkeypatch) -> list:
    """The pool fits the page starts (in this process: the server is a thread here)."""
    made = []
    real = groups_logic.job

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(groups_logic, "job", spy)
    return made


@pytest.mark.slow
def test_upload_groups_pools_them_with_the_library_fit(open_page, tmp_path, pool_jobs):
    _, path = grouped_file(tmp_path)
    page = open_page("upload?group=site&draws=150&tune=150&chains=2&seed=4&threshold=0.1"
                     "&measure=equalized_odds")
    page.locator(".bcm-file input[type=file]").set_input_files(path)
    assert page.get_by_test_id("upload-kind").get_attribute("data-kind") == "groups"
    # the link restored the measure chosen
    assert page.locator(".bcm-measure input").input_value() == "equalized_odds"
    page.locator(".bcm-pool button").click()
    page.get_by_test_id("pool-progress").wait_for()
    page.get_by_test_id("pool-convergence").wait_for(timeout=FIT_TIMEOUT_MS)
    expect(page.get_by_test_id("disparity-plot")).to_be_visible()  # the library's forests
    screenshot(page, tmp_path, "upload-pooled")
    assert page.get_by_test_id("pool-measure").get_attribute("data-measure") == \
        "equalized_odds"
    # the numbers shown are the library's of the fit the page offers as NetCDF (the same
    # seed's fit in this process is checked in test_app_groups.py)
    with page.expect_download() as info:
        page.locator(".bcm-download-pooled-fit button").click()
    idata = bcm.load(info.value.path())
    assert idata.attrs["random_seed"] == 4 and idata.posterior.sizes["draw"] == 150
    pooled = bcm.summary(idata, metrics=["tpr", "fpr"])
    for g in ("north", "east"):
        for metric in ("tpr", "fpr"):  # equalized odds involves both
            shown = text_of(page, cell_id("pooled", f"site={g}", metric, "pooled_mean"))
            assert shown == f"{pooled.loc[(f'site={g}', metric), 'mean']:.4f}"
    tpr = bcm.analysis.disparity(idata, "tpr", threshold=0.1)
    fpr = bcm.analysis.disparity(idata, "fpr", threshold=0.1).to_frame()
    assert text_of(page, cell_id("disparity", "equalized odds", "", "p_exceeds")) == \
        f"{tpr.probability('equalized_odds'):.3f}"
    assert text_of(page, cell_id("disparity", "fpr vs rest", "site=east", "mean")) == \
        f"{fpr.loc[('fpr vs rest', 'site=east'), 'mean']:.3f}"
    # another measure: the same fit read again (no new fit), and the URL follows
    enter(page, "measure", "demographic_parity")
    page.wait_for_url("**measure=demographic_parity*")
    bias = bcm.analysis.disparity(idata, "bias", threshold=0.1)
    dp = cell_id("disparity", "demographic parity", "", "p_exceeds")
    expect(page.get_by_test_id(dp)).to_have_text(
        f"{bias.probability('demographic_parity'):.3f}")
    upper = bcm.summary(idata, metrics=["bias"]).loc[("site=south", "bias"), "hdi_upper"]
    shown = text_of(page, cell_id("pooled", "site=south", "bias", "pooled_hdi_upper"))
    assert shown == f"{upper:.4f}"
    eo = cell_id("disparity", "equalized odds", "", "p_exceeds")
    assert page.get_by_test_id(eo).count() == 0
    assert len(pool_jobs) == 1
    screenshot(page, tmp_path, "upload-pooled-demographic-parity")


def test_upload_pool_cancels_and_leaves_no_child_process(open_page, tmp_path, pool_jobs):
    made = pool_jobs
    _, path = grouped_file(tmp_path)
    # 200,000 tuning steps per chain: a fit of tens of seconds, cancelled long before its
    # end (as many kept draws would hold gigabytes, over the server's bound)
    page = open_page("upload?group=site&draws=150&tune=200000&chains=2")
    page.locator(".bcm-file input[type=file]").set_input_files(path)
    seen = set(multiprocessing.active_children())
    for round_ in (1, 2):  # after a cancel the button starts a new fit
        expect(page.locator(".bcm-pool button")).to_be_enabled()
        page.locator(".bcm-pool button").click()
        child = new_child(seen)
        seen.add(child)
        assert len(made) == round_ and child.is_alive()
        expect(page.get_by_test_id("pool-progress")).not_to_have_text("Cancelled.")
        expect(page.locator(".bcm-pool button")).to_be_disabled()  # one fit at a time
        if round_ == 1:
            screenshot(page, tmp_path, "upload-pool-running")
        page.locator(".bcm-pool-cancel button").click()
        expect(page.get_by_test_id("pool-progress")).to_have_text("Cancelled.")
        assert made[-1].poll().state == "cancelled"
        # the child was stopped, not left to finish, and is gone from the OS (its exit
        # code is -SIGTERM, or 255 when the signal lands while the forkserver's child
        # is still starting)
        assert job_ended(made[-1]) and child.exitcode in (-signal.SIGTERM, 255)
        with pytest.raises(ProcessLookupError):
            os.kill(child.pid, 0)
        expect(page.locator(".bcm-pool-cancel button")).to_be_hidden()
        assert page.get_by_test_id("pool-convergence").count() == 0
    expect(page.locator(".bcm-pool button")).to_be_enabled()
    screenshot(page, tmp_path, "upload-pool-cancelled")


def job_ended(job) -> bool:
    """The job's child has ended (its cancel returns at once; the process ends soon)."""
    return job.join(10)


def new_child(seen: set) -> multiprocessing.Process:
    """The one child process started since ``seen`` (the pool fit's), once it runs."""
    deadline = time.monotonic() + FIT_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        fresh = [p for p in multiprocessing.active_children() if p not in seen]
        if fresh:
            assert len(fresh) == 1, fresh
            return fresh[0]
        time.sleep(0.05)
    raise AssertionError("the pool fit's child process did not start")


def test_upload_pool_failure_shows_the_library_message(open_page, tmp_path):
    frame, path = grouped_file(tmp_path)
    page = open_page("upload?group=site&draws=150&tune=0&chains=2")
    page.locator(".bcm-file input[type=file]").set_input_files(path)
    cm = bcm.ConfusionMatrix.from_predictions(frame["y_true"], frame["A"],
                                              groups={"site": frame["site"].to_numpy()})
    # a bad measure: the registry's message under its field as soon as it is typed
    enter(page, "measure", "fairness")
    with pytest.raises(KeyError) as err:
        bcm.metrics.get("fairness")
    expect(page.get_by_test_id("error-measure")).to_contain_text(err.value.args[0])
    screenshot(page, tmp_path, "upload-pool-bad-measure")
    enter(page, "measure", "tpr")
    expect(page.get_by_test_id("error-measure")).to_have_count(0)
    # tune=0: the library's own check, under its field, before any process starts
    with pytest.raises(ValueError) as tune_err:
        bcm.fit(bcm.models.groups(cm), draws=150, tune=0, chains=2)
    expect(page.get_by_test_id("error-tune")).to_have_text(str(tune_err.value))
    # a fit whose process dies (as the kernel's out-of-memory killer would end it): the
    # page says the fit failed and why it may have, never a traceback or a stall
    enter(page, "tune", "150")
    expect(page.get_by_test_id("error-tune")).to_have_count(0)
    enter(page, "draws", "200000")
    seen = set(multiprocessing.active_children())
    page.locator(".bcm-pool button").click()
    child = new_child(seen)
    expect(page.get_by_test_id("pool-progress")).to_contain_text("sampling (NUTS)",
                                                                 timeout=FIT_TIMEOUT_MS)
    os.kill(child.pid, signal.SIGKILL)
    progress = page.get_by_test_id("pool-progress")
    expect(progress).to_contain_text("The fit failed:", timeout=FIT_TIMEOUT_MS)
    expect(progress).to_contain_text("ended without a result")
    assert "Traceback" not in page.content()
    assert page.get_by_test_id("pool-convergence").count() == 0
    expect(page.locator(".bcm-pool button")).to_be_enabled()
    screenshot(page, tmp_path, "upload-pool-failed")


def test_closing_the_tab_stops_its_fit_and_deletes_its_file(open_page, monkeypatch):
    """A reader who leaves mid-fit frees the server's sampler: the session's end
    cancels the child and removes the fit's directory."""
    from bayescm.app import fitjob

    started = []
    real = fitjob.FitJob.start

    def spy(self):
        started.append(self)
        return real(self)

    monkeypatch.setattr(fitjob.FitJob, "start", spy)
    page = open_page("nolabels?draws=100&tune=500000&chains=2", wait_for="identifiability")
    page.locator(".bcm-fit button").click()
    expect(page.get_by_test_id("progress")).to_contain_text("sampling (NUTS)",
                                                            timeout=FIT_TIMEOUT_MS)
    (job,) = started
    assert not job.stopped
    page.close()
    # the server drops a closed session within 2 x SESSION_CHECK_MS; allow for load
    assert job.join(30), "the closed tab's fit still runs"
    assert job.poll().state == "cancelled"  # stopped by the session's end, not finished
    deadline = time.monotonic() + 10
    while job._dir.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not job._dir.exists()


def test_fits_running_at_a_phones_width_need_no_sideways_scrolling(open_page, tmp_path):
    """The No-labels and Upload pages while a fit runs (progress, Fit/Pool and Cancel
    buttons shown) at 390 px."""
    page = open_page("nolabels?draws=100&tune=500000&chains=2", phone=True,
                     wait_for="identifiability")
    page.locator(".bcm-fit button").click()
    expect(page.locator(".bcm-cancel button")).to_be_visible(timeout=FIT_TIMEOUT_MS)
    assert fits_the_phone(page)
    screenshot(page, tmp_path, "nolabels-running-phone")
    page.locator(".bcm-cancel button").click()
    _, path = grouped_file(tmp_path)
    page = open_page("upload?group=site&draws=150&tune=200000&chains=2", phone=True)
    page.locator(".bcm-file input[type=file]").set_input_files(path)
    page.locator(".bcm-pool button").click()
    expect(page.locator(".bcm-pool-cancel button")).to_be_visible(timeout=FIT_TIMEOUT_MS)
    assert fits_the_phone(page)
    screenshot(page, tmp_path, "upload-pool-running-phone")
    page.locator(".bcm-pool-cancel button").click()
    expect(page.get_by_test_id("pool-progress")).to_have_text("Cancelled.")
