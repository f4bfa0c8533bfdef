"""The One-classifier page in real headless Chromium: numbers shown are the library's.

Every expected number is computed here by the library for the same input
(``bcm.fit(..., sampler="exact", draws=logic.DRAWS, random_seed=1)`` then
``bcm.summary``), rounded as
the page rounds it (3 decimals): the page and the test draw the same exact posterior
with the same seed, so the figures agree digit for digit.
"""

from __future__ import annotations

import pathlib
import urllib.parse

import pytest
from playwright.sync_api import expect

import bayescm as bcm
from bayescm.app import one_classifier_logic as logic
from tests.app_support import enter, screenshot, text_of

pytestmark = pytest.mark.engine("chromium")


def expected(metric: str, column: str, **cells: int) -> str:
    cm = bcm.ConfusionMatrix(**{**logic.EXAMPLE, **cells}, classifier=logic.CLASSIFIER)
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=logic.DRAWS, chains=4,
                    random_seed=1)
    value = bcm.summary(idata, metrics=[metric]).loc[(logic.CLASSIFIER, metric), column]
    return f"{value:.3f}"


def test_first_page_shows_the_cocaine_tnr_hdi_without_a_click(open_page, tmp_path):
    page = open_page("")
    lo, hi = text_of(page, "tnr-hdi-lower"), text_of(page, "tnr-hdi-upper")
    assert (lo, hi) == (expected("tnr", "hdi_lower"), expected("tnr", "hdi_upper"))
    # the "about 0.43-0.95": the exact Beta(7, 3) HDI is 0.432-0.946
    # (bcm.analysis.beta_hdi); the lower end of 20,000 draws has sd 0.004 over seeds
    # (one_classifier_logic.DRAWS), so +-0.03 is over 7 sd
    assert abs(float(lo) - 0.432) < 0.03 and abs(float(hi) - 0.946) < 0.03
    screenshot(page, tmp_path, "first-page")


def test_editing_a_cell_updates_to_the_library_result(open_page, tmp_path):
    page = open_page("", wait_for="tnr-hdi-lower")
    enter(page, "tn", "20")
    expect(page.get_by_test_id("tnr-hdi-lower")).to_have_text(
        expected("tnr", "hdi_lower", tn=20))
    assert text_of(page, "tnr-hdi-upper") == expected("tnr", "hdi_upper", tn=20)
    assert text_of(page, "acc-mean") == expected("acc", "mean", tn=20)
    assert "tn=20" in urllib.parse.unquote(page.url)  # the state went to the URL
    screenshot(page, tmp_path, "edited")


def test_the_predictive_pmf_and_the_summary_csv_are_the_library_results(open_page, tmp_path):
    page = open_page("", wait_for="tnr-hdi-lower")
    enter(page, "pmf-pos", "40")
    pmf = bcm.exact.metric_pmf(bcm.ConfusionMatrix(**logic.EXAMPLE), "acc", 40, 8).loc["cm"]
    mode = pmf.loc[pmf["probability"].idxmax(), "value"]
    expect(page.get_by_test_id("pmf-mode")).to_have_text(f"{mode:.3f}")
    with page.expect_download() as download:
        page.locator(".bcm-download-summary button").click()
    cm = bcm.ConfusionMatrix(**logic.EXAMPLE, classifier=logic.CLASSIFIER)
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=logic.DRAWS, chains=4,
                    random_seed=1)
    want = bcm.summary(idata, metrics=list(logic.DEFAULT_METRICS)).to_csv()
    assert download.value.suggested_filename == "summary.csv"
    assert pathlib.Path(download.value.path()).read_text() == want
    # no plan yet: its CSV button is greyed out, not an empty file (downloads.refresh_downloads)
    expect(page.locator(".bcm-download-sample-size button")).to_be_disabled()
    expect(page.locator(".bcm-download-summary button")).to_be_enabled()
    screenshot(page, tmp_path, "pmf-40")


def test_a_pasted_k_class_matrix_gets_the_library_numbers(open_page, tmp_path):
    page = open_page("", wait_for="tnr-hdi-lower")
    page.get_by_role("button", name="K classes").click()
    enter(page, "matrix", "a\tb\tc\n9\t1\t0\n2\t7\t1\n0\t3\t8")  # as pasted
    mc = bcm.MulticlassConfusionMatrix([[9, 1, 0], [2, 7, 1], [0, 3, 8]], labels=["a", "b", "c"],
                                       classifier=logic.CLASSIFIER)
    idata = bcm.fit(bcm.models.multiclass_rows(mc), sampler="exact", draws=logic.DRAWS,
                    chains=4, random_seed=1)
    table = bcm.summary(idata, metrics=["acc", "tpr"])
    want = f"{table.loc[(logic.CLASSIFIER, '', 'acc'), 'mean']:.3f}"
    expect(page.get_by_test_id("acc-mean")).to_have_text(want)
    assert text_of(page, "tpr-b-hdi-lower") == \
        f"{table.loc[(logic.CLASSIFIER, 'b', 'tpr'), 'hdi_lower']:.3f}"
    screenshot(page, tmp_path, "k-classes")


def test_a_bad_cell_shows_the_library_message(open_page, tmp_path):
    page = open_page("", wait_for="tnr-hdi-lower")
    enter(page, "fp", "-2")
    with pytest.raises(bcm.CountsError) as err:
        bcm.ConfusionMatrix(tp=26, fn=0, fp=-2, tn=6)
    expect(page.get_by_test_id("error-matrix")).to_have_text(str(err.value))
    # shown as an error (red), not as ordinary text
    expect(page.get_by_test_id("error-matrix")).to_have_css("color", "rgb(180, 35, 24)")
    assert "Traceback" not in page.content()
    screenshot(page, tmp_path, "bad-input")


def test_a_shared_url_restores_the_page(open_page, tmp_path):
    query = urllib.parse.urlencode({"tp": 40, "fn": 5, "metrics": "tnr,f1"}, safe=",")
    page = open_page(f"one?{query}", phone=True)
    want = expected("f1", "hdi_lower", tp=40, fn=5)
    expect(page.get_by_test_id("f1-hdi-lower")).to_have_text(want)
    assert page.locator(".bcm-tp input").input_value() == "40"
    assert page.get_by_test_id("acc-mean").count() == 0  # only the metrics of the link
    # the phone's width: nothing wider than the screen
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 2
    screenshot(page, tmp_path, "restored-phone")


K_MATRIX = "a,b,c;9,1,0;2,7,1;0,3,8"
K_PRIORS = {"kprior_prevalence": "mean:0.5,0.3,0.2;weight:20", "kprior_rows": "diagonal:8,1"}


def test_a_shared_url_restores_a_k_class_prior(open_page, tmp_path):
    query = urllib.parse.urlencode({"kind": "multiclass", "matrix": K_MATRIX,
                                    "metrics": "tpr,acc", **K_PRIORS}, safe=",;")
    page = open_page(f"one?{query}")
    mc = logic.matrix("multiclass", text=K_MATRIX)
    priors = {"prevalence": bcm.priors.dirichlet_from_mean([0.5, 0.3, 0.2], 20),
              "rows": bcm.priors.Dirichlet.diagonal(3, correct=8, wrong=1)}
    idata = bcm.fit(bcm.models.multiclass_rows(mc, priors=priors), sampler="exact",
                    draws=logic.DRAWS, chains=4, random_seed=1)
    table = bcm.summary(idata, metrics=["tpr", "acc"])
    want = f"{table.loc[(logic.CLASSIFIER, 'b', 'tpr'), 'mean']:.3f}"
    expect(page.get_by_test_id("tpr-b-mean")).to_have_text(want)
    assert text_of(page, "acc-hdi-lower") == \
        f"{table.loc[(logic.CLASSIFIER, '', 'acc'), 'hdi_lower']:.3f}"
    for name, text in K_PRIORS.items():
        field = name.replace("_", "-")
        assert page.locator(f".bcm-{field} input").input_value() == text
    assert not page.locator(".bcm-prior-tpr input").is_visible()  # the binary fields hide
    screenshot(page, tmp_path, "k-prior-restored")


def test_a_bad_k_class_prior_shows_the_library_message_under_it(open_page, tmp_path):
    page = open_page(f"one?kind=multiclass&matrix={K_MATRIX}", wait_for="acc-mean")
    enter(page, "kprior-rows", "mean:0.8,0.1,0.2;weight:10")
    with pytest.raises(bcm.PriorError) as err:
        bcm.priors.dirichlet_from_mean([0.8, 0.1, 0.2], 10)
    note = page.get_by_test_id("error-kprior-rows")
    expect(note).to_have_text(str(err.value))
    expect(page.get_by_test_id("acc-mean")).to_have_count(0)  # no results from a bad prior
    # next to its field: right under the input, in the same column
    box = page.locator(".bcm-kprior-rows input").bounding_box()
    at = note.bounding_box()
    assert 0 <= at["y"] - (box["y"] + box["height"]) < 40 and abs(at["x"] - box["x"]) < 30
    assert "Traceback" not in page.content()
    screenshot(page, tmp_path, "bad-k-prior")
