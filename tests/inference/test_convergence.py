"""Convergence report: ArviZ's own numbers, i.i.d. draws, one chain, plain words.

The report's R-hat and ESS equal az.rhat / az.ess to 1e-12 relative (in fact
bit for bit), its MCSE az.mcse to 1e-11 (ArviZ's own functions round differently,
see RTOL); the vectorised twin used for large batches equals ArviZ to 1e-10.
"""

import contextlib
import warnings

import arviz as az
import numpy as np
import pytest
import xarray as xr

import bayescm as bcm
from bayescm.inference import diagnostics
from bayescm.priors import Beta


def _ar1(rng, shape, phi):
    x = np.zeros(shape)
    e = rng.normal(size=shape)
    for t in range(1, shape[-1]):
        x[..., t] = phi * x[..., t - 1] + e[..., t]
    return x


@contextlib.contextmanager
def _arviz_without_numba():
    # arviz 0.23.4's az.mcse(method="sd") fails on its numba path with NumPy >= 2.4
    # (float() of a 1-element array); its plain NumPy path computes the same estimator.
    flag = az.Numba.numba_flag
    az.Numba.disable_numba()
    try:
        yield
    finally:
        if flag:
            az.Numba.enable_numba()


def _arviz_reference(data, var_names=None):
    """ArviZ's R-hat, bulk/tail ESS and MCSE, each from its own public function."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Shape validation failed")
        out = {
            "r_hat": az.rhat(data, var_names=var_names),
            "ess_bulk": az.ess(data, var_names=var_names, method="bulk"),
            "ess_tail": az.ess(data, var_names=var_names, method="tail"),
            "mcse_mean": az.mcse(data, var_names=var_names, method="mean"),
        }
        with _arviz_without_numba():
            out["mcse_sd"] = az.mcse(data, var_names=var_names, method="sd")
    return out


# R-hat and ESS: the report's numbers are bit-identical to az.rhat / az.ess.  MCSE:
# az.summary (the report) and az.mcse are both ArviZ but round differently: az.mcse
# takes the variance from numba's one-pass formula, az.summary from a two-pass sum,
# and ArviZ's numba and NumPy paths differ in the ESS's last digits.  Measured on the
# fits below: up to 1.5e-12 relative between ArviZ's own functions.
RTOL = {"r_hat": 1e-12, "ess_bulk": 1e-12, "ess_tail": 1e-12, "mcse_mean": 1e-11,
        "mcse_sd": 1e-11}


def _assert_table_is(table, reference, rtol=None):
    """Every row of the report's table equals ArviZ's value for that scalar."""
    for column, ds in reference.items():
        tol = RTOL[column] if rtol is None else rtol
        for name, da in ds.data_vars.items():
            other = list(da.dims)
            if not other:
                np.testing.assert_allclose(table.loc[name, column], float(da), rtol=tol,
                                           equal_nan=True, err_msg=f"{column} {name}")
                continue
            for idx in da.stack(s=other).indexes["s"]:
                idx = idx if isinstance(idx, tuple) else (idx,)
                label = f"{name}[{', '.join(map(str, idx))}]"
                value = float(da.sel(dict(zip(other, idx, strict=True))))
                np.testing.assert_allclose(table.loc[label, column], value, rtol=tol,
                                           equal_nan=True, err_msg=f"{column} {label}")


@pytest.mark.parametrize(("chains", "draws", "phi"),
                         [(4, 1000, 0.0), (4, 1000, 0.9), (2, 101, 0.5), (4, 7, 0.1),
                          (4, 400, 0.99), (1, 50, 0.3)])
def test_vectorised_diagnostics_equal_arviz(chains, draws, phi):
    rng = np.random.default_rng(chains * draws)
    x = _ar1(rng, (12, chains, draws), phi)
    x[0, -1] += 2.0  # one chain off target
    x[1] = np.round(x[1])  # ties
    out = diagnostics.diagnose(x)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Shape validation failed")
        for s in range(x.shape[0]):
            np.testing.assert_allclose(out["r_hat"][s], az.rhat(x[s]), rtol=1e-10,
                                       equal_nan=True)
            np.testing.assert_allclose(out["ess_bulk"][s], az.ess(x[s], method="bulk"),
                                       rtol=1e-10)
            np.testing.assert_allclose(out["ess_tail"][s], az.ess(x[s], method="tail"),
                                       rtol=1e-10)
            np.testing.assert_allclose(out["mcse_mean"][s], az.mcse(x[s], method="mean"),
                                       rtol=1e-10)
            with _arviz_without_numba():
                np.testing.assert_allclose(out["mcse_sd"][s], az.mcse(x[s], method="sd"),
                                           rtol=1e-10)


def _idata(x, diverging=0, sampler=None):
    post = xr.Dataset({"tpr": (("chain", "draw", "classifier"), x)},
                      coords={"classifier": [f"c{i}" for i in range(x.shape[-1])]})
    div = np.zeros(x.shape[:2], bool)
    div.flat[:diverging] = True
    idata = az.InferenceData(posterior=post,
                             sample_stats=xr.Dataset({"diverging": (("chain", "draw"), div)}))
    if sampler is not None:
        idata.attrs["sampler"] = sampler
    return idata


def test_report_flags_each_problem_in_plain_words():
    rng = np.random.default_rng(3)
    good = rng.normal(size=(4, 1000, 2))
    rep = bcm.check_convergence(_idata(good))
    assert rep.ok and "Converged" in repr(rep) and "<b" in rep._repr_html_()
    assert set(rep.table.index) == {"tpr[c0]", "tpr[c1]"}
    assert list(rep.to_frame().columns) == ["r_hat", "ess_bulk", "ess_tail", "mcse_mean",
                                            "mcse_sd"]
    assert f"computed by ArviZ {az.__version__}" in rep.message()

    shifted = good.copy()
    shifted[0, :, 1] += 3
    rep = bcm.check_convergence(_idata(shifted))
    assert not rep.ok
    assert any("R-hat" in p and "tpr[c1]" in p for p in rep.problems)

    sticky = _ar1(rng, (2, 4, 200), 0.995).transpose(1, 2, 0)
    rep = bcm.check_convergence(_idata(sticky))
    assert any("ESS" in p.upper() or "ess" in p for p in rep.problems)

    rep = bcm.check_convergence(_idata(good, diverging=3))
    assert not rep.ok and any("3 divergent" in p for p in rep.problems)
    with pytest.raises(KeyError, match="not in the posterior"):
        bcm.check_convergence(_idata(good), var_names=["nope"])
    with pytest.raises(ValueError, match="backend"):
        bcm.check_convergence(_idata(good), backend="stan")


def test_to_frame_is_a_copy_of_the_table():
    rep = bcm.check_convergence(_idata(np.random.default_rng(1).normal(size=(4, 200, 2))))
    frame = rep.to_frame()
    assert frame.equals(rep.table) and frame is not rep.table
    frame.iloc[0, 0] = -1.0
    assert rep.table.iloc[0, 0] != -1.0


def test_report_numbers_are_arviz_three_beta_nuts():
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    idata = bcm.fit(bcm.models.three_beta(cm), draws=500, random_seed=5)
    rep = bcm.check_convergence(idata)
    assert not rep.independent
    assert rep.computed_by == f"ArviZ {az.__version__}"
    assert f"computed by ArviZ {az.__version__}" in rep.message()
    assert f"computed by ArviZ {az.__version__}" in idata.attrs["convergence"]
    params = ["tpr", "tnr", "prevalence"]
    assert len(rep.table) == 3
    _assert_table_is(rep.table, _arviz_reference(idata, params))


def test_report_numbers_are_arviz_hui_walter_nuts():
    tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    with warnings.catch_warnings():  # Evans's design: identified through its priors
        warnings.simplefilter("ignore", bcm.models.IdentifiabilityWarning)
        model = bcm.models.hui_walter(tab, priors={"sensitivity": Beta(20, 4),
                                                   "specificity": Beta(20, 4)})
    idata = bcm.fit(model, draws=500, random_seed=6)
    params = idata.attrs["parameters"].split(",")
    assert {"sensitivity", "specificity", "prevalence"} <= set(params)
    # 7 scalars: fit's check is ArviZ's unless ArviZ, timed on a probe, would cost more
    # than 20% of this (fast) fit; then the vectorised twin, equal to ArviZ to 1e-10
    rep = bcm.check_convergence(idata)
    assert f"ArviZ {az.__version__}" in rep.computed_by
    _assert_table_is(rep.table, _arviz_reference(idata, params), rtol=1e-10)
    rep = bcm.check_convergence(idata, backend="arviz")
    assert rep.computed_by == f"ArviZ {az.__version__}"
    _assert_table_is(rep.table, _arviz_reference(idata, params))


def test_large_batch_uses_the_vectorised_twin_with_arviz_numbers():
    """ArviZ unless it would make the check more than ARVIZ_MAX_SHARE of the recorded fit
    time; then the vectorised twin, with ArviZ's numbers."""
    n = 15
    x = _ar1(np.random.default_rng(8), (n, 4, 300), 0.6).transpose(1, 2, 0)
    idata = _idata(x)
    assert bcm.check_convergence(idata).computed_by == f"ArviZ {az.__version__}"  # no timing
    idata.attrs["fit_seconds"] = 1000.0  # ArviZ is affordable next to a long run
    assert bcm.check_convergence(idata).computed_by == f"ArviZ {az.__version__}"
    idata.attrs["fit_seconds"] = 1e-4  # a fast fit: ArviZ would dominate
    rep = bcm.check_convergence(idata)
    assert "vectorised" in rep.computed_by and f"ArviZ {az.__version__}" in rep.computed_by
    _assert_table_is(rep.table, _arviz_reference(idata), rtol=1e-10)
    forced = bcm.check_convergence(idata, backend="arviz")
    assert forced.computed_by == f"ArviZ {az.__version__}"
    _assert_table_is(forced.table, _arviz_reference(idata))


def test_exact_draws_are_reported_independent_without_mcmc_diagnostics():
    cm = bcm.ConfusionMatrix(tp=[26, 10], fn=[0, 5], fp=[2, 3], tn=[6, 20],
                             classifier=["cocaine", "other"])
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=300, chains=3,
                    random_seed=2)
    assert idata.attrs["sampler"] == "exact"
    rep = bcm.check_convergence(idata)
    assert rep.ok and rep.independent and not rep.problems
    t = rep.to_frame()
    assert len(t) == 6 and t["r_hat"].isna().all()
    assert (t["ess_bulk"] == 900).all() and (t["ess_tail"] == 900).all()
    text = repr(rep)
    assert "independent by construction" in text and "R-hat does not apply" in text
    assert "no MCMC diagnostics" in text and "ArviZ" not in rep.computed_by
    assert "<b style='color:#1a7f37'>" in rep._repr_html_()
    # i.i.d. Monte Carlo standard errors
    x = idata.posterior["tpr"].sel(classifier="other").values.ravel()
    np.testing.assert_allclose(t.loc["tpr[other]", "mcse_mean"],
                               x.std(ddof=1) / np.sqrt(x.size), rtol=1e-10)
    assert np.isfinite(t["mcse_sd"]).all() and (t["mcse_sd"] > 0).all()


def test_exact_attr_alone_marks_draws_independent_even_with_one_chain():
    x = np.random.default_rng(4).normal(size=(1, 500, 2))
    rep = bcm.check_convergence(_idata(x, sampler="exact"))
    assert rep.ok and rep.independent
    assert (rep.table["ess_bulk"] == 500).all() and rep.table["r_hat"].isna().all()
    assert not bcm.check_convergence(_idata(x, sampler="nuts")).ok


def test_one_chain_does_not_crash_and_says_why_in_plain_words():
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    with pytest.warns(bcm.ConvergenceWarning, match="one chain|Only one chain"):
        idata = bcm.fit(bcm.models.three_beta(cm), chains=1, draws=400, random_seed=3)
    rep = bcm.check_convergence(idata)
    assert not rep.ok
    assert rep.table["r_hat"].isna().all()
    assert (rep.table["ess_bulk"] > 0).all() and (rep.table["ess_tail"] > 0).all()
    assert any("Only one chain" in p and "at least 2" in p and "chains >= 2" in p
               for p in rep.problems)
    assert not any("could not be computed" in p for p in rep.problems)
    text = repr(rep)
    assert "1 chain x 400 draws" in text and "R-hat not computed (needs >= 2 chains)" in text
    assert np.isnan(rep.worst["r_hat"]) and rep._repr_html_().startswith("<div>")
    _assert_table_is(rep.table, _arviz_reference(idata, ["tpr", "tnr", "prevalence"]))


def test_nan_rhat_with_two_chains_is_a_problem_not_a_crash():
    x = np.random.default_rng(5).normal(size=(4, 200, 2))
    x[:, :, 1] = 0.5  # a constant quantity: R-hat is 0/0
    rep = bcm.check_convergence(_idata(x))
    assert not rep.ok
    assert any("could not be computed" in p and "tpr[c1]" in p for p in rep.problems)
    repr(rep)
    rep._repr_html_()


@pytest.mark.parametrize("kind", ["continuous", "few values", "folded", "constant"])
def test_vectorised_ranks_equal_scipys_average_ranks(kind):
    """The twin's ranks (one sort, runs of ties averaged at once) are rankdata's, and
    its normal scores ArviZ's formula on them."""
    from scipy import special, stats

    rng = np.random.default_rng(3)
    x = {"continuous": rng.normal(size=(20, 400)),
         "few values": rng.integers(0, 4, size=(20, 400)).astype(float),
         "folded": rng.normal(size=(20, 400)),
         "constant": np.ones((3, 50))}[kind]
    if kind == "folded":  # |x - median| ties at the two middle draws of every row
        x = np.abs(x - np.median(x, axis=-1, keepdims=True))
    ranks = stats.rankdata(x, method="average", axis=-1)
    order, run_sums = diagnostics._sorted_runs(x)
    by_position = (np.broadcast_to(np.arange(x.shape[-1], dtype=float), x.shape) + 1.0
                   if run_sums is None else run_sums / 2.0 + 1.0)
    np.testing.assert_array_equal(np.take_along_axis(ranks, order, axis=-1), by_position)
    # the normal scores, looked up from a table of every half-integer rank, are
    # ndtri's of the same numbers to the bit
    np.testing.assert_array_equal(diagnostics._z_scale(x),
                                  special.ndtri((ranks - 0.375) / (x.shape[-1] + 0.25)))


def test_arviz_is_probed_once_per_posterior_size(monkeypatch):
    """A batch's later checks decide between ArviZ and the twin without probing again."""
    from bayescm.inference import convergence

    monkeypatch.setattr(convergence, "_ARVIZ_COST", {})
    calls = []
    real = convergence._arviz_table
    monkeypatch.setattr(convergence, "_arviz_table", lambda post: calls.append(1) or real(post))
    x = _ar1(np.random.default_rng(9), (15, 4, 200), 0.5).transpose(1, 2, 0)
    idata = _idata(x)
    idata.attrs["fit_seconds"] = 1e-4  # ArviZ would dominate: the twin
    first = bcm.check_convergence(idata)
    assert len(calls) == 2 and "vectorised" in first.computed_by  # probes of 1 and 4 scalars
    second = bcm.check_convergence(idata)
    assert len(calls) == 2 and "vectorised" in second.computed_by
    idata.attrs["fit_seconds"] = 1000.0  # a long fit: ArviZ, still without a new probe
    assert bcm.check_convergence(idata).computed_by.startswith("ArviZ")
    assert len(calls) == 3


def test_next_fast_len_is_scipys():
    """The FFT padding of the autocovariance, computed without scipy.fft, is scipy's
    (ArviZ's) for every length up to 20,000 and at scattered large ones."""
    from scipy import fft

    rng = np.random.default_rng(0)
    for n in [*range(1, 20_001), *rng.integers(20_001, 10**9, 2_000).tolist()]:
        assert diagnostics.next_fast_len(n) == fft.next_fast_len(n), n


def test_one_chain_leaves_no_arviz_log_line():
    """ArviZ logs "Shape validation failed" for one chain (once per process, hence a fresh
    one here); the report says it in words, and by default the estimators vectorised
    (the same numbers, see above) give it without the log line."""
    from tests.fresh import run_fresh

    script = (
        "import numpy as np, xarray as xr, arviz as az\n"
        "import bayescm as bcm\n"
        "x = np.random.default_rng(0).normal(size=(1, 100, 2))\n"
        "post = xr.Dataset({'tpr': (('chain', 'draw', 'classifier'), x)},\n"
        "                  coords={'classifier': ['a', 'b']})\n"
        "report = bcm.check_convergence(az.InferenceData(posterior=post))\n"
        "print(report.ok, 'bayescm.inference.diagnostics' in report.message())\n")
    out = run_fresh(script)
    assert out.stdout.strip() == "False True"
    assert "Shape validation" not in out.stderr + out.stdout


@pytest.mark.parametrize("shape", [(1, 4), (2, 4), (1, 5)])
def test_vectorised_diagnostics_equal_arviz_summary_at_the_fewest_draws(shape):
    """Two or three draws per split chain (``fit``'s fewest, draws=4, one chain): Geyer's
    sequence has no pair, which crashed the vectorised ESS; ArviZ's table (``az.summary``,
    what the ArviZ backend reads) is matched, NaN for NaN."""
    x = np.random.default_rng(sum(shape)).normal(size=(3, *shape))
    out = diagnostics.diagnose(x)
    post = xr.Dataset({"v": (("chain", "draw", "s"), np.moveaxis(x, 0, -1))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = az.summary(post, kind="diagnostics", round_to="none")
    for column in ("r_hat", "ess_bulk", "ess_tail", "mcse_mean", "mcse_sd"):
        np.testing.assert_allclose(out[column], ref[column].to_numpy(), rtol=1e-10,
                                   equal_nan=True, err_msg=column)
