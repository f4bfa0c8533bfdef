"""The Compare page's "across folds / data sets" mode in headless Chromium: a link
compares two algorithms on one data set's folds and shows the library's numbers; an
uploaded CSV of several data sets is fitted in the page's background job."""

from __future__ import annotations

import urllib.parse

import numpy as np
import pytest

from bayescm.analysis.fold_metrics import plug_in_values
from bayescm.app import folds_logic
from bayescm.app.compare_logic import CompareState
from tests.app.test_app_folds import several
from tests.app_support import enter, screenshot, text_of

# the default suite drives one page in Chromium (test_app_one_browser, test_app_upload_browser);
# every other page's journey runs under -m slow (`make test-all`), its logic server-side in
# the default suite
pytestmark = [pytest.mark.engine("chromium"), pytest.mark.slow]

FIT_TIMEOUT_MS = 240_000  # the first fit of a server starts its forkserver and compiles


def test_folds_link_and_an_uploaded_file_of_several_data_sets(open_page, tmp_path):
    state = CompareState(mode="folds", metric="acc", plug_in=True, rope=0.02, seed=3)
    page = open_page(f"compare?{urllib.parse.urlencode(state.to_query())}",
                     wait_for="p-a-better")
    lib = folds_logic.analyse(state).comparison
    for test_id, value in (("p-a-better", lib.p_a_better), ("p-rope", lib.p_rope),
                           ("p-b-better", lib.p_b_better)):
        assert text_of(page, test_id) == f"{value:.3f}"
    plot = page.get_by_test_id("fold-difference-plot")
    plot.wait_for()
    assert plot.evaluate("img => img.complete && img.naturalWidth > 300")
    # a CSV of three data sets, uploaded: the hierarchical model, fitted on request
    text = several(n_datasets=3, runs=1, k=5, seed=4)
    path = tmp_path / "folds.csv"
    path.write_text(text)
    page.locator(".bcm-folds-file input[type=file]").set_input_files(str(path))
    assert text_of(page, "datasets-found").startswith("3 data sets, 2 algorithms")
    for name, value in (("draws", "200"), ("tune", "200"), ("chains", "2")):
        enter(page, name, value)
    page.locator(".bcm-fit button").click()
    page.get_by_test_id("datasets-convergence").wait_for(timeout=FIT_TIMEOUT_MS)
    shown = [float(text_of(page, f"datasets-p-{w}")) for w in ("a-better", "rope", "b-better")]
    assert sum(shown) == pytest.approx(1.0, abs=0.0015)  # three rounded shares of the draws
    # the per-data-set table's observed means are the plug-in fold differences' means
    table = folds_logic.parse_folds(text)
    for d in table.datasets:
        diff = (plug_in_values(table.folds[d]["A"], "acc")
                - plug_in_values(table.folds[d]["B"], "acc"))
        assert text_of(page, f"datasets-{d}-observed-mean") == f"{np.mean(diff):.4f}"
    page.get_by_test_id("forest-plot").wait_for()
    assert "fitted=1" in page.url and "mode=folds" in page.url
    screenshot(page, tmp_path, "compare-folds-datasets")
