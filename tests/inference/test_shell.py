"""``fit_kernel``: the family's compiled density from data and priors, sampled without PyMC.

The same seed must give the same numbers as ``bcm.fit`` on the built model (whose
``engine="auto"`` samples the same compiled density with the same nutpie settings):
the comparisons are exact, not within Monte Carlo error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayescm as bcm
from bayescm.inference import engines, fit_kernel
from bayescm.models import spec_of
from tests.fresh import run_fresh

pytestmark = pytest.mark.skipif(not engines.kernel_supported(),
                                reason="the installed nutpie cannot take compiled densities")

TWO_SITES = {"s1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
             "s2": {"++": 260, "+-": 76, "-+": 52, "--": 212}}
SMALL = {"draws": 150, "tune": 150, "chains": 2}


def _table(cells=None):
    return bcm.AgreementTable.from_counts(cells or TWO_SITES)


@pytest.mark.parametrize("case", ["complete", "dependence", "missing and verified"])
def test_the_kernel_inputs_equal_the_built_models(case):
    tab = _table({"++": 40, "+-": 3, "-+": 7, "--": 100, "+?": 6, "++|D+": 9, "--|D-": 14}
                 if case == "missing and verified" else None)
    priors = {"sensitivity": {"A": bcm.priors.Beta(20, 4)}, "prevalence": "beta:2,3"}
    options = {"conditional_dependence": case == "dependence", "identifiability": "ignore"}
    family = bcm.models.get_family("hui_walter")
    form = family.kernel_form(tab, priors, options)
    model = bcm.models.hui_walter(tab, priors=priors, **options)
    built = family.kernel(model, spec_of(model))
    np.testing.assert_array_equal(form.kernel.user_data, built.user_data)
    assert (list(form.kernel.var_names), list(form.kernel.shapes), form.kernel.n_dim) == (
        list(built.var_names), list(built.shapes), built.n_dim)
    assert {n: form.dims[n] for n in built.var_names} == {
        n: tuple(model.named_vars_to_dims[n]) for n in built.var_names}
    assert form.spec.options == spec_of(model).options
    assert form.spec.priors == spec_of(model).priors


def test_same_seed_same_posterior_as_fit_on_the_built_model():
    tab = _table()
    priors = {"specificity": "beta:20,4"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = fit_kernel("hui_walter", tab, priors=priors, random_seed=7, **SMALL)
        idata = bcm.fit(bcm.models.hui_walter(tab, priors=priors), random_seed=7, **SMALL)
    assert tree.attrs["engine"] == idata.attrs["engine"] == "bayescm-kernel"
    for group in ("posterior", "sample_stats", "posterior_predictive", "log_likelihood",
                  "observed_data"):
        ours, theirs = tree[group].to_dataset(), idata[group]
        assert set(theirs.data_vars) <= set(ours.data_vars), group
        for name, da in theirs.data_vars.items():
            np.testing.assert_array_equal(ours[name].transpose(*da.dims).values, da.values,
                                          err_msg=f"{group}/{name}")
    assert "prior" not in tree.children
    for key in ("priors", "model_spec", "parameters", "identifiability", "converged"):
        assert tree.attrs[key] == idata.attrs[key], key
    # what the shell prints: the same summary table
    a = bcm.summary(tree, metrics=["tpr", "ppv"])
    b = bcm.summary(idata, metrics=["tpr", "ppv"])
    np.testing.assert_allclose(a["mean"].values, b["mean"].values, rtol=0, atol=1e-12)


def test_it_checks_and_warns_as_the_builder():
    one = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    with pytest.warns(bcm.models.IdentifiabilityWarning):
        bcm.models.get_family("hui_walter").kernel_form(one)
    with pytest.raises(bcm.models.IdentifiabilityError):
        bcm.models.get_family("hui_walter").kernel_form(one, options={"identifiability":
                                                                       "raise"})
    with pytest.raises(TypeError, match="unexpected keyword"):
        bcm.models.get_family("hui_walter").kernel_form(_table(), options={"dependence": True})
    with pytest.raises(bcm.PriorError, match="Improper"):
        bcm.models.get_family("hui_walter").kernel_form(_table(), {"sensitivity": "beta:0,0"})


def test_a_family_without_a_kernel_form_is_told_to_build_its_model():
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    with pytest.raises(ValueError, match=r"no compiled density.*bayescm\.fit"):
        fit_kernel("three_beta", cm, **SMALL)
    with pytest.raises(ValueError, match="log_likelihood"):
        fit_kernel("hui_walter", _table(), log_likelihood="yes", **SMALL)


def test_unlabeled_from_the_shell_imports_neither_pymc_nor_pytensor():
    script = (
        "import sys, contextlib, io\n"
        "from bayescm import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert cli.main(['unlabeled', '--counts', "
        "'s1:++=89,+-=43,-+=55,--=413;s2:++=260,+-=76,-+=52,--=212', '--draws', '100',"
        " '--seed', '1', '--sampler', 'nuts']) == 0\n"
        "print('LOADED:' + ','.join(m for m in ('pymc', 'pytensor', 'nutpie') "
        "if m in sys.modules))\n")
    out = run_fresh(script)
    assert out.stdout.strip().splitlines()[-1] == "LOADED:nutpie"  # sampled, no PyMC model
