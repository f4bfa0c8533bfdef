"""The Upload page's pooled analysis of groups (bayescm.app.groups_logic), without a browser.

The job's numbers are checked against an in-process ``bcm.fit`` of
``bcm.models.groups`` with the same draws and seed (NUTS with a fixed seed is
reproducible, so they agree to float precision), the disparity table of each measure
against ``bcm.analysis.disparity`` of the very fit shown (the same InferenceData:
exactly equal) and equalized odds by hand from its cells, the unpooled column against
``bcm.summary_exact``; bad options get the library's message at their field.
"""

from __future__ import annotations

import re
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
                           threshold=0.1, measure="equalized_odds")
    res = _analyse(grouped_cases().drop(columns="sex"), state)
    assert res.kind == "groups" and list(res.sliced) == ["A", "B"]
    cm = res.sliced["A"]
    job = gl.job(cm, state, directory=tmp_path).start()
    while (p := job.poll()).state == "running":
        time.sleep(0.05)
    assert p.state == "done", p.error
    result = job.result()
    assert result.measure == "equalized_odds"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(bcm.models.groups(cm), draws=150, tune=150, chains=2, random_seed=4)
    # equalized odds involves the TPR and the FPR: those are the rows shown per group
    library = bcm.summary(idata, metrics=["tpr", "fpr"])
    assert result.pooled.index.equals(library.index)
    # same seed, same sampler: equal up to float round-off in the NetCDF round trip
    np.testing.assert_allclose(result.pooled["pooled_mean"], library["mean"], rtol=1e-9)
    np.testing.assert_allclose(result.pooled["pooled_hdi_lower"], library["hdi_lower"],
                               rtol=1e-9)
    truth = bcm.summary_exact(cm, metrics=["tpr", "fpr"], draws=ul.SUMMARY_DRAWS,
                              random_seed=4)
    np.testing.assert_array_equal(result.pooled["exact_mean"],
                                  truth.loc[library.index, "mean"])
    # ... and the exact TPRs are the Upload page's own per-group table (same draws, seed)
    upload = res.tables["summary"].loc["A"].xs("tpr", level="metric")["mean"]
    np.testing.assert_array_equal(result.pooled["exact_mean"].xs("tpr", level="metric"),
                                  upload)
    # the disparity table: the library's rows of the very fit shown (same idata, exact)
    fit = bcm.load(result.path)
    tpr = bcm.analysis.disparity(fit, "tpr", threshold=0.1).to_frame()
    fpr = bcm.analysis.disparity(fit, "fpr", threshold=0.1).to_frame()
    expected = pd.concat([tpr.loc[["equalized odds", "tpr gap", "fpr gap", "tpr vs rest"]],
                          fpr.loc[["fpr vs rest"]]])
    assert len(expected) == 3 + 2 * 3  # three overall rows, three sites twice
    pd.testing.assert_frame_equal(result.disparity, expected, check_exact=True)
    # the figure is the library's forests of the same fit: one per metric, in order
    fig = gl.figure(result)
    for ax, metric in zip(fig.axes, ("tpr", "fpr"), strict=True):
        d = bcm.analysis.disparity(fit, metric, threshold=0.1)
        assert ax.get_title() == f"P({metric} gap > 0.1) = {d.probability('gap'):.3f}"
        assert [t.get_text() for t in ax.get_yticklabels()] == list(d.groups.index)
    # equalized odds by hand from the posterior's cells: max(TPR gap, FPR gap) per draw
    theta = fit.posterior["theta"]
    t_p = theta.sel(cell="tp") / (theta.sel(cell="tp") + theta.sel(cell="fn"))
    f_p = theta.sel(cell="fp") / (theta.sel(cell="fp") + theta.sel(cell="tn"))
    spread = np.maximum(t_p.max("slice") - t_p.min("slice"),
                        f_p.max("slice") - f_p.min("slice")).values
    eo = result.disparity.loc[("equalized odds", "")]
    assert eo["mean"] == pytest.approx(spread.mean(), rel=1e-12)
    assert eo["p_exceeds"] == pytest.approx((spread > 0.1).mean(), abs=1e-12)
    # the verdict; which estimators compute it depends on the fit's time (both agree)
    for backend in ("arviz", "vectorised"):
        assert without_engine(result.convergence) == \
            without_engine(bcm.check_convergence(fit, backend=backend).message())
    # another measure and threshold read the same fit again: no new sampling
    again = gl.resummarise(result, cm, state.replace(measure="demographic_parity",
                                                     threshold=0.2))
    bias = bcm.analysis.disparity(fit, "bias", threshold=0.2).to_frame()
    pd.testing.assert_frame_equal(again.disparity,
                                  bias.loc[["demographic parity", "bias vs rest"]],
                                  check_exact=True)
    assert again.path == result.path and again.measure == "demographic_parity"
    assert list(again.pooled.index.unique("metric")) == ["bias"]
    job.discard()
    assert not result.path.exists()


@pytest.mark.parametrize(("name", "rows"), [
    ("demographic_parity", {"bias": ["demographic parity"]}),
    ("Demographic parity", {"bias": ["demographic parity"]}),
    ("ppv", {"ppv": ["ppv gap"]}),
    ("sensitivity", {"tpr": ["tpr gap"]}),  # an alias: the registry's key is shown
])
def test_each_measure_shows_the_library_rows_of_the_same_fit(name, rows, tmp_path) -> None:
    # summarising is the same for any sliced fit: the exact posterior keeps this fast
    cm = _analyse(grouped_cases(), ul.UploadState(group="site, sex")).sliced["B"]
    fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=500, chains=2,
                  random_seed=2)
    chosen = gl.measure(name)
    assert chosen.metrics == tuple(rows)
    exact = bcm.summary_exact(cm, metrics=list(rows), draws=ul.SUMMARY_DRAWS, random_seed=2)
    result = gl.summarise(fit, tmp_path / "fit.nc", exact=exact, chosen=chosen,
                          threshold=0.02)
    parts = []
    for metric, overall in rows.items():
        lib = bcm.analysis.disparity(fit, metric, threshold=0.02).to_frame()
        parts.append(lib.loc[[*overall, f"{metric} vs rest"]])
    expected = pd.concat(parts)
    assert len(expected) == len(overall) + 6  # 3 sites x 2 sexes against the rest
    pd.testing.assert_frame_equal(result.disparity, expected, check_exact=True)
    pooled = bcm.summary(fit, metrics=list(rows))
    np.testing.assert_array_equal(result.pooled["pooled_mean"], pooled["mean"])
    np.testing.assert_array_equal(result.pooled["exact_hdi_upper"],
                                  exact.loc[pooled.index, "hdi_upper"])
    assert result.measure == chosen.name


def test_the_measure_travels_in_the_link() -> None:
    state = ul.UploadState(group="site", measure="demographic_parity", threshold=0.1)
    query = state.to_query()
    assert query["measure"] == "demographic_parity"
    assert ul.UploadState.from_query(query) == state
    assert "measure" not in ul.UploadState().to_query()  # the default (tpr) is not written


def without_engine(message: str) -> str:
    """A convergence verdict without its "(computed by ...)" note."""
    return re.sub(r" \(computed by [^)]*\)", "", message)


def test_two_group_columns_slice_by_their_intersection() -> None:
    frame = grouped_cases()
    res = _analyse(frame, ul.UploadState(group="site, sex"))
    cm = bcm.ConfusionMatrix.from_predictions(
        frame["y_true"].to_numpy(), frame["A"].to_numpy(),
        groups={"site": frame["site"].to_numpy(), "sex": frame["sex"].to_numpy()})
    assert res.sliced["A"].to_frame().equals(cm.to_frame())
    assert len(cm.to_frame()) == 6  # 3 sites x 2 sexes


@pytest.mark.parametrize(("change", "where"), [({"threshold": -0.1}, "threshold"),
                                               ({"measure": "fairness"}, "measure"),
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
    if where == "measure":  # the registry's message, then the fairness measures' names
        with pytest.raises(KeyError) as library:
            bcm.metrics.get("fairness")
        assert err.value.message == (f"{library.value.args[0]} Or a fairness measure: "
                                     "equalized_odds, demographic_parity.")
