"""The Benchmark-items page in headless Chromium: a link fits the default benchmark and
shows the library's numbers for the fit it offers as NetCDF."""

from __future__ import annotations

import urllib.parse

import pytest

import bayescm as bcm
from bayescm.app import items_logic
from tests.app_support import screenshot, text_of

# the default suite drives one page in Chromium (test_app_one_browser, test_app_upload_browser);
# every other page's journey runs under -m slow (`make test-all`), its logic server-side in
# the default suite
pytestmark = [pytest.mark.engine("chromium"), pytest.mark.slow]

FIT_TIMEOUT_MS = 180_000  # the first fit of a server starts its forkserver (PyMC import)


def test_items_link_fits_and_shows_the_intervals_and_tiers(open_page, tmp_path):
    state = items_logic.ItemsState(draws=200, tune=200, chains=2, seed=4)
    query = urllib.parse.urlencode({**state.to_query(), "fitted": 1})
    page = open_page(f"items?{query}", wait_for="items-found")
    assert text_of(page, "items-found") == items_logic.build(state).describe()
    page.get_by_test_id("convergence").wait_for(timeout=FIT_TIMEOUT_MS)
    plot = page.get_by_test_id("intervals-plot")
    plot.wait_for()
    assert plot.evaluate("img => img.complete && img.naturalWidth > 300")
    with page.expect_download() as info:
        page.locator(".bcm-download-items-fit button").click()
    idata = bcm.load(info.value.path())
    assert idata.attrs["random_seed"] == 4 and idata.posterior.sizes["draw"] == 200
    res = items_logic.parse_results(state.results)
    intervals = bcm.analysis.benchmark_intervals(res, idata)
    ties = bcm.analysis.tied_sets(idata, "acc", level=state.level)
    for model in res.models:
        m = model.lower()
        for col in ("bayes_mean", "bayes_lower", "clt_upper", "clustered_lower"):
            expected = f"{float(intervals.loc[model, col]):.4f}"
            assert text_of(page, f"items-{m}-{col.replace('_', '-')}") == expected
        assert text_of(page, f"items-{m}-tier") == str(ties.loc[model, "tier"])
    screenshot(page, tmp_path, "items-fitted")
