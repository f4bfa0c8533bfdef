"""The No-labels page's ratings mode in headless Chromium: a link fits K-class ratings
and shows the library's numbers for the fit it offers as NetCDF."""

from __future__ import annotations

import urllib.parse

import pytest

import bayescm as bcm
from bayescm.app import nolabels_logic, raters_logic
from tests.app_support import screenshot, text_of

# the default suite drives one page in Chromium (test_app_one_browser, test_app_upload_browser);
# every other page's journey runs under -m slow (`make test-all`), its logic server-side in
# the default suite
pytestmark = [pytest.mark.engine("chromium"), pytest.mark.slow]

FIT_TIMEOUT_MS = 120_000  # the first fit of a server starts its forkserver (PyMC import)


def test_ratings_link_fits_and_shows_each_raters_metrics(open_page, tmp_path):
    state = nolabels_logic.NoLabelsState(mode="ratings", draws=150, tune=150, chains=2,
                                         seed=4, priors="confusion: diagonal:4,1")
    query = urllib.parse.urlencode({**state.to_query(), "fitted": 1})
    page = open_page(f"nolabels?{query}", wait_for="identifiability")
    assert text_of(page, "identifiability") == raters_logic.build_ratings(state).identifiability
    page.get_by_test_id("convergence").wait_for(timeout=FIT_TIMEOUT_MS)
    # the forest of each rater's accuracy and recall, drawn once the tables show
    plot = page.get_by_test_id("raters-plot")
    plot.wait_for()
    assert plot.evaluate("img => img.complete && img.naturalWidth > 300")
    screenshot(page, tmp_path, "nolabels-ratings-fitted")
    with page.expect_download() as info:
        page.locator(".bcm-download-ratings-fit button").click()
    idata = bcm.load(info.value.path())
    assert idata.attrs["random_seed"] == 4 and idata.posterior.sizes["draw"] == 150
    acc = bcm.summary(idata, metrics="acc")["mean"].xs("acc", level="metric")
    for rater in ("A", "D"):
        shown = text_of(page, f"raters-{rater.lower()}-acc--mean")
        assert shown == f"{float(acc.loc[rater]):.4f}"
    prevalence = idata.posterior["prevalence"].mean(("chain", "draw"))
    assert text_of(page, "prevalence-fox-mean") == f"{float(prevalence.sel({'class': 'fox'})):.4f}"
    assert text_of(page, "items-7-class") == "fox"  # a gold item keeps its class
