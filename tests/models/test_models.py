import ctypes
from collections.abc import Callable

import numpy as np
import pymc as pm
import pytest

import bayescm as bcm
from bayescm.models import _kernel_conjugate as _kernels
from bayescm.priors import Beta, Dirichlet, PriorError


def test_three_beta_structure(batch):
    m = bcm.models.three_beta(batch)
    assert sorted(v.name for v in m.free_RVs) == ["prevalence", "tnr", "tpr"]
    assert m.named_vars_to_dims["theta"] == ("classifier", "cell")
    assert m.named_vars_to_dims["tpr"] == ("classifier",)
    assert list(m.coords["cell"]) == ["tp", "fn", "fp", "tn"]
    assert list(m.coords["classifier"]) == list(batch.classifiers)
    for name in ("counts_data", "tpr_alpha", "tpr_beta", "prevalence_alpha"):
        assert isinstance(m[name], pm.model.core.SharedVariable | type(m["counts_data"]))
    ip = m.initial_point()
    assert np.isfinite(m.compile_logp()(ip))
    assert np.all(np.isfinite(m.compile_dlogp()(ip)))


def test_dirichlet_structure(batch):
    m = bcm.models.dirichlet_multinomial(batch)
    assert [v.name for v in m.free_RVs] == ["theta"]
    assert m.named_vars_to_dims["theta"] == ("classifier", "cell")
    ip = m.initial_point()
    assert np.isfinite(m.compile_logp()(ip))


def test_fixed_prevalence():
    m = bcm.models.three_beta(bcm.ConfusionMatrix(tp=20, fn=5, fp=3, tn=22), prevalence=0.5)
    assert sorted(v.name for v in m.free_RVs) == ["tnr", "tpr"]
    with pytest.raises(ValueError, match="strictly between"):
        bcm.models.three_beta(bcm.ConfusionMatrix(tp=1, fn=1, fp=1, tn=1), prevalence=1.0)
    with pytest.raises(PriorError, match="fixed prevalence"):
        bcm.models.three_beta(bcm.ConfusionMatrix(tp=1, fn=1, fp=1, tn=1), prevalence=0.5,
                              priors={"prevalence": Beta(2, 2)})


def test_haldane_only_when_proper(cocaine):
    # tpr has fn = 0: Beta(0, 0) + (26, 0) = Beta(26, 0) is improper
    with pytest.raises(PriorError, match=r"'tpr'.*'cm'.*improper"):
        bcm.models.three_beta(cocaine, priors={"tpr": Beta(0, 0)})
    # tnr has tn = 6, fp = 2: proper
    m = bcm.models.three_beta(cocaine, priors={"tnr": Beta(0, 0)})
    idata = bcm.fit(m, sampler="exact", random_seed=3)
    assert float(idata.posterior["tnr"].mean()) == pytest.approx(6 / 8, abs=0.01)
    assert "prior" not in idata.groups()  # an improper prior has no draws
    with pytest.raises(PriorError, match="theta"):
        bcm.models.dirichlet_multinomial(cocaine, priors={"theta": Dirichlet((0, 0, 0, 0))})


def test_bad_input_fails_before_any_model_is_built(monkeypatch, cocaine):
    import importlib

    dm = importlib.import_module("bayescm.models.dirichlet_multinomial")
    tb = importlib.import_module("bayescm.models.three_beta")

    def boom(*a, **k):
        raise AssertionError("a PyMC model was built before the input was checked")

    import pymc  # the builders import PyMC when they build (bayescm's import is light)

    monkeypatch.setattr(pymc, "Model", boom)
    with pytest.raises(PriorError):
        tb.three_beta(cocaine, priors={"sensitivity": Beta(1, 1)})
    with pytest.raises(PriorError):
        tb.three_beta(cocaine, priors={"tpr": Beta(0, 0)})
    with pytest.raises(ValueError):
        tb.three_beta({"tp": -1, "fn": 0, "fp": 1, "tn": 1})
    with pytest.raises(TypeError, match="ConfusionMatrix"):
        tb.three_beta([26, 0, 2, 6])
    with pytest.raises(PriorError):
        dm.dirichlet_multinomial(cocaine, priors={"theta": Dirichlet((1, 1))})


def _kernel_logp(kernel, x: np.ndarray):
    ud = np.ascontiguousarray(kernel.user_data, float)
    x = np.ascontiguousarray(x, float)
    grad = np.zeros_like(x)
    out = np.zeros(1)
    ptr = ctypes.POINTER(ctypes.c_double)
    rc = kernel.module.logp.ctypes(x.size, x.ctypes.data_as(ptr), grad.ctypes.data_as(ptr),
                              out.ctypes.data_as(ptr), ud.ctypes.data_as(ptr))
    assert rc == 0
    return out[0], grad


@pytest.mark.parametrize("family", ["three_beta", "dirichlet_multinomial"])
def test_kernel_is_the_pymc_posterior(batch, family):
    """The compiled NUTS kernel equals the PyMC model's log density up to a constant,
    with the same gradient, in PyMC's own unconstrained coordinates."""
    prior = {"three_beta": {"tpr": Beta(3, 2), "tnr": Beta(0.5, 0.5)},
             "dirichlet_multinomial": {"theta": Dirichlet((2, 1, 0.5, 3))}}[family]
    m = getattr(bcm.models, family)(batch, priors=prior)
    kernel = bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))
    assert kernel.module is _kernels
    assert_kernel_is_model(m, kernel)


def assert_kernel_is_model(m: pm.Model, kernel, points: int = 20, scale: float = 1.5, *,
                           rng: np.random.Generator | None = None, rtol: float = 1e-9,
                           atol: float | Callable[[np.ndarray], float] = 1e-9) -> None:
    """``kernel``'s log density equals ``m``'s up to a constant, with its gradient, at
    random points (sd ``scale``, drawn from ``rng``; default seed 5) of PyMC's
    unconstrained coordinates (variable order included).  The gradients agree to
    ``rtol`` and ``atol``, which may be a function of PyMC's gradient at the point."""
    logp, dlogp = m.compile_logp(), m.compile_dlogp()
    start = m.initial_point()  # compiles a function: once, not per variable and point
    rng = np.random.default_rng(5) if rng is None else rng
    diffs = []
    for _ in range(points):
        point = {v.name: rng.normal(0, scale, size=start[v.name].shape)
                 for v in m.value_vars}
        x = np.concatenate([np.ravel(point[v.name]) for v in m.value_vars])
        assert x.size == kernel.n_dim
        lk, gk = _kernel_logp(kernel, x)
        diffs.append(logp(point) - lk)
        want = dlogp(point)
        np.testing.assert_allclose(gk, want, rtol=rtol,
                                   atol=atol(want) if callable(atol) else atol)
    assert np.ptp(diffs) < 1e-8
