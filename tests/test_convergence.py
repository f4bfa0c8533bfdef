import arviz as az
import numpy as np
import pytest
import xarray as xr

import bayescm as bcm
from bayescm import diagnostics


def _ar1(rng, shape, phi):
    x = np.zeros(shape)
    e = rng.normal(size=shape)
    for t in range(1, shape[-1]):
        x[..., t] = phi * x[..., t - 1] + e[..., t]
    return x


@pytest.mark.parametrize(("chains", "draws", "phi"),
                         [(4, 1000, 0.0), (4, 1000, 0.9), (2, 101, 0.5), (4, 7, 0.1),
                          (4, 400, 0.99), (1, 50, 0.3)])
def test_vectorised_diagnostics_equal_arviz(chains, draws, phi):
    rng = np.random.default_rng(chains * draws)
    x = _ar1(rng, (12, chains, draws), phi)
    x[0, -1] += 2.0  # one chain off target
    x[1] = np.round(x[1])  # ties
    r, eb, et = diagnostics.rhat(x), diagnostics.ess_bulk(x), diagnostics.ess_tail(x)
    for s in range(x.shape[0]):
        np.testing.assert_allclose(r[s], az.rhat(x[s]), rtol=1e-10, equal_nan=True)
        np.testing.assert_allclose(eb[s], az.ess(x[s], method="bulk"), rtol=1e-10)
        np.testing.assert_allclose(et[s], az.ess(x[s], method="tail"), rtol=1e-10)


def _idata(x, diverging=0):
    post = xr.Dataset({"tpr": (("chain", "draw", "classifier"), x)},
                      coords={"classifier": ["a", "b"]})
    div = np.zeros(x.shape[:2], bool)
    div.flat[:diverging] = True
    return az.InferenceData(posterior=post,
                            sample_stats=xr.Dataset({"diverging": (("chain", "draw"), div)}))


def test_report_flags_each_problem_in_plain_words():
    rng = np.random.default_rng(3)
    good = rng.normal(size=(4, 1000, 2))
    rep = bcm.check_convergence(_idata(good))
    assert rep.ok and "Converged" in repr(rep) and "<b" in rep._repr_html_()
    assert set(rep.table.index) == {"tpr[a]", "tpr[b]"}

    shifted = good.copy()
    shifted[0, :, 1] += 3
    rep = bcm.check_convergence(_idata(shifted))
    assert not rep.ok
    assert any("R-hat" in p and "tpr[b]" in p for p in rep.problems)

    sticky = _ar1(rng, (2, 4, 200), 0.995).transpose(1, 2, 0)
    rep = bcm.check_convergence(_idata(sticky))
    assert any("ESS" in p.upper() or "ess" in p for p in rep.problems)

    rep = bcm.check_convergence(_idata(good, diverging=3))
    assert not rep.ok and any("3 divergent" in p for p in rep.problems)
    with pytest.raises(KeyError, match="not in the posterior"):
        bcm.check_convergence(_idata(good), var_names=["nope"])
