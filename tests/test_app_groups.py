"""The Upload page's pooled analysis of groups (bayescm.app.groups_logic), without a browser.

The job's numbers are checked against an in-process ``bcm.fit`` of
``bcm.models.groups`` with the same draws and seed (NUTS with a fixed seed is
reproducible, so they agree to float precision), the disparity table against
``bcm.analysis.disparity`` of that fit, the unpooled column against
``bcm.summary_exact``; bad options get the library's message at their field.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.app import groups_logic as gl
from bayescm.app import upload_logic as ul
from bayescm.app.pages_common import InputError


def grouped_cases(seed: int = 7, n: int = 240) -> pd.DataFrame:
    """Labelled cases of two classifiers in three sites and two sexes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    site = rng.choice(["north", "south", "east"], n)
    sex = rng.choice(["F", "M"], n)
    a = np.where(rng.random(n) < np.where(site == "east", 0.3, 0.1), 1 - y, y)
    b = np.where(rng.random(n) < 0.2, 1 - y, y)
    return pd.DataFrame({"y_true": y, "A": a, "B": b, "site": site, "sex": sex})


def _analyse(frame: pd.DataFrame, state: ul.UploadState) -> ul.UploadResult:
    return ul.analyse(ul.read_csv(frame.to_csv(index=False).encode()), state)


def test_pooled_job_is_the_library_fit_of_the_same_seed(tmp_path) -> None:
    state = ul.UploadState(group="site", draws=150, tune=150, chains=2, seed=4,
                           threshold=0.1)
    res = _analyse(grouped_cases().drop(columns="sex"), state)
    assert res.kind == "groups" and list(res.sliced) == ["A", "B"]
    cm = res.sliced["A"]
    exact = res.tables["summary"].loc["A"]
    job = gl.job(cm, exact, state, directory=tmp_path).start()
    while (p := job.poll()).state == "running":
        time.sleep(0.05)
    assert p.state == "done", p.error
    result = job.result()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(bcm.models.groups(cm), draws=150, tune=150, chains=2, random_seed=4)
    library = bcm.summary(idata, metrics=["tpr", "tnr"])
    # same seed, same sampler: equal up to float round-off in the NetCDF round trip
    np.testing.assert_allclose(result.pooled["pooled_mean"], library["mean"], rtol=1e-9)
    np.testing.assert_allclose(result.pooled["pooled_hdi_lower"], library["hdi_lower"],
                               rtol=1e-9)
    truth = bcm.summary_exact(cm, metrics=list(ul.SUMMARY_METRICS), draws=ul.SUMMARY_DRAWS,
                              random_seed=4)
    np.testing.assert_array_equal(result.pooled["exact_mean"],
                                  truth.loc[library.index, "mean"])
    gaps = bcm.analysis.disparity(idata, "tpr", threshold=0.1).to_frame()
    pd.testing.assert_frame_equal(result.disparity, gaps, rtol=1e-9)
    assert result.convergence == bcm.check_convergence(bcm.load(result.path)).message()
    job.discard()
    assert not result.path.exists()


def test_two_group_columns_slice_by_their_intersection() -> None:
    frame = grouped_cases()
    res = _analyse(frame, ul.UploadState(group="site, sex"))
    cm = bcm.ConfusionMatrix.from_predictions(
        frame["y_true"].to_numpy(), frame["A"].to_numpy(),
        groups={"site": frame["site"].to_numpy(), "sex": frame["sex"].to_numpy()})
    assert res.sliced["A"].to_frame().equals(cm.to_frame())
    assert len(cm.to_frame()) == 6  # 3 sites x 2 sexes


@pytest.mark.parametrize(("change", "where"), [({"threshold": -0.1}, "threshold"),
                                               ({"group": "site, nope"}, "group")])
def test_bad_options_show_the_library_message_at_their_field(change, where) -> None:
    state = ul.UploadState(group="site").replace(**change)
    with pytest.raises(InputError) as err:
        res = _analyse(grouped_cases().drop(columns="sex"), state)
        gl.prepare(res.sliced["A"], state)
    assert err.value.field == where
    if where == "threshold":
        few = bcm.fit(bcm.models.three_beta(res.sliced["A"]), sampler="exact", draws=20)
        with pytest.raises(ValueError) as library:
            bcm.analysis.disparity(few, "tpr", threshold=-0.1)
        assert err.value.message == str(library.value)
