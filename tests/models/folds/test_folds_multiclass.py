"""K-class folds: Dirichlet rows around a mean row, integrated out (Dirichlet-multinomial)."""

import functools
import warnings

import arviz as az
import numpy as np
import pytest
import xarray as xr

import bayescm as bcm
from bayescm.models.folds.multiclass import _fold_rows

LABELS = ["a", "b", "c"]
ROWS = np.array([[0.8, 0.15, 0.05], [0.1, 0.75, 0.15], [0.05, 0.15, 0.8]])


def simulate(seed, k=12, n=300, prevalence=(0.3, 0.3, 0.4), rows=ROWS):
    """k folds of n cases whose rows are all equal (no between-fold variation)."""
    rng = np.random.default_rng(seed)
    sizes = rng.multinomial(n, prevalence, size=k)
    counts = np.stack([[rng.multinomial(s, r) for s, r in zip(row, rows, strict=True)]
                       for row in sizes])
    return bcm.MulticlassConfusionMatrix(counts, labels=LABELS,
                                         classifier=[f"f{i}" for i in range(k)])


def test_structure_without_sampling():
    mc = simulate(0, k=4)
    model = bcm.models.folds(mc)
    assert [v.name for v in model.free_RVs] == ["prevalence", "rows_mean", "rows_spread"]
    dims = model.named_vars_to_dims
    assert dims["row_counts"] == ("fold", "actual", "predicted")
    assert dims["class_counts"] == ("fold", "actual")
    assert dims["rows_mean"] == ("actual", "predicted")
    assert dims["rows_kappa"] == ("actual",)
    assert list(model.coords["fold"]) == list(mc.classifiers)
    ip = model.initial_point()
    assert np.isfinite(model.compile_logp()(ip))
    assert np.all(np.isfinite(model.compile_dlogp()(ip)))
    # defaults: two pseudo-cases per row at every K (Dirichlet(2/K)), Beta(1, 1) spreads
    np.testing.assert_allclose(model["rows_mean_alpha"].get_value(), np.full((3, 3), 2 / 3))
    np.testing.assert_allclose(model["rows_spread_alpha"].get_value(), [1, 1, 1])
    assert bcm.models.family_of(model) is not bcm.models.family_of(
        bcm.models.folds(bcm.ConfusionMatrix(tp=[5, 6], fn=[1, 2], fp=[2, 1], tn=[7, 8])))


def test_priors_and_errors():
    mc = simulate(0, k=3)
    model = bcm.models.folds(mc, priors={"rows_spread": {"b": bcm.priors.Beta(1, 9)},
                                         "rows_mean": bcm.priors.Dirichlet.diagonal(
                                             LABELS, correct=4, wrong=1)})
    np.testing.assert_allclose(model["rows_spread_beta"].get_value(), [1, 9, 1])
    assert model["rows_mean_alpha"].get_value()[1].tolist() == [1.0, 4.0, 1.0]
    with pytest.raises(ValueError, match="two folds"):
        bcm.models.folds(mc[0])
    with pytest.raises(bcm.PriorError, match="improper"):
        bcm.models.folds(mc, priors={"rows_spread": bcm.priors.Beta(0, 1)})
    with pytest.raises(bcm.PriorError, match="no parameter"):
        bcm.models.folds(mc, priors={"tpr_kappa": bcm.priors.Gamma(2, 1)})


def _logp(model, values):
    """The model's log density without Jacobians at untransformed ``values``."""
    import pytensor.tensor as pt

    point = {}
    for rv in model.free_RVs:
        value = np.asarray(values[rv.name], dtype=float)
        transform = model.rvs_to_transforms[rv]
        if transform is not None:
            value = transform.forward(pt.as_tensor(value), *rv.owner.inputs).eval()
        point[model.rvs_to_values[rv].name] = value
    return float(model.compile_logp(jacobian=False)(point))


def test_two_classes_have_the_binary_density():
    """At K = 2 the Dirichlet-multinomial is the Beta-binomial and Dirichlet(1, 1) is
    Beta(1, 1): the two models' densities agree exactly at matching points."""
    cms = bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7], tn=[47, 44, 43],
                              classifier=["f1", "f2", "f3"])
    binary = bcm.models.folds(cms)
    multi = bcm.models.folds(bcm.MulticlassConfusionMatrix.from_binary(cms))
    for tpr, tnr, phi, s_pos, s_neg in [(0.8, 0.7, 0.4, 0.2, 0.3), (0.9, 0.85, 0.5, 0.05, 0.6)]:
        got = _logp(multi, {"prevalence": [phi, 1 - phi],
                            "rows_mean": [[tpr, 1 - tpr], [1 - tnr, tnr]],
                            "rows_spread": [s_pos, s_neg]})
        want = _logp(binary, {"prevalence": phi, "tpr_mean": tpr, "tnr_mean": tnr,
                              "tpr_spread": s_pos, "tnr_spread": s_neg})
        assert got == pytest.approx(want, rel=1e-10)


def test_fold_rows_are_the_exact_conditionals():
    """Given (mu, kappa) fold f's row a is Dirichlet(kappa_a mu_a + C_fa): with the posterior
    pinned to one point the drawn rows have that Dirichlet's mean (20,000 draws: MC sd of
    a mean ~ sd / 141; allow 5 of them)."""
    mc = simulate(1, k=3, n=60)
    shape = (4, 5000)
    ds = xr.Dataset({"rows_mean": (("chain", "draw", "actual", "predicted"),
                                   np.broadcast_to(ROWS, (*shape, 3, 3)).copy()),
                     "rows_kappa": (("chain", "draw", "actual"),
                                    np.broadcast_to([30.0, 10.0, 50.0], (*shape, 3)).copy())},
                    coords={"actual": LABELS, "predicted": LABELS})
    out = _fold_rows(ds.copy(), mc)
    alpha = np.array([30.0, 10.0, 50.0])[:, None] * ROWS + mc.counts
    mean = alpha / alpha.sum(-1, keepdims=True)
    sd = np.sqrt(mean * (1 - mean) / (alpha.sum(-1, keepdims=True) + 1))
    got = out["rows_fold"].mean(("chain", "draw")).values
    np.testing.assert_allclose(got, mean, atol=5 * float(sd.max()) / np.sqrt(20000))
    new = out["rows_new"].mean(("chain", "draw")).values
    np.testing.assert_allclose(new, ROWS, atol=5 * np.sqrt(0.25 / 11) / np.sqrt(20000))
    # the between-fold sd of each class's recall: sqrt(mu_aa (1 - mu_aa) / (kappa_a + 1))
    np.testing.assert_allclose(out["tpr_sd"][0, 0].values,
                               np.sqrt(np.diag(ROWS) * (1 - np.diag(ROWS)) / [31, 11, 51]))
    again = _fold_rows(ds.copy(), mc)
    np.testing.assert_array_equal(again["rows_fold"], out["rows_fold"])


@functools.cache
def equal_rows_fit():
    mc = simulate(3)
    idata = bcm.fit(bcm.models.folds(mc), draws=500, chains=4, random_seed=2,
                    progressbar=False)
    return mc, idata


def test_equal_rows_mean_recall_matches_the_pooled_posterior():
    """12 folds with equal rows: the mean recall's posterior is close to the pooled
    Dirichlet posterior, recall_a ~ Beta(2/3 + C_aa, 4/3 + r_a - C_aa) (exact), within 3
    pooled sds plus 4 MC standard errors; at most twice as wide (between-fold variation
    the data cannot rule out widens it a little)."""
    mc, idata = equal_rows_fit()
    report = bcm.check_convergence(idata)
    assert report.ok and report.divergences == 0, report.message()
    pooled = mc.counts.sum(axis=0)
    a = 2 / 3 + np.diag(pooled)
    b = 4 / 3 + pooled.sum(axis=1) - np.diag(pooled)
    exact_mean, exact_sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    recall = idata.posterior["tpr"].sel(classifier="mean")
    mcse = az.mcse(recall.to_dataset(name="r"))["r"].values
    got, got_sd = recall.mean(("chain", "draw")).values, recall.std(("chain", "draw")).values
    np.testing.assert_array_less(np.abs(got - exact_mean), 3 * exact_sd + 4 * mcse)
    np.testing.assert_array_less(got_sd, 2 * exact_sd)
    # a new fold's recall is wider than the mean's; the spreads are small and positive
    assert np.all(idata.posterior["tpr"].sel(classifier="new fold").std(("chain", "draw"))
                  > got_sd)
    assert idata.posterior["tpr_sd"].dims == ("chain", "draw", "class")
    assert float(idata.posterior["tpr_sd"].mean()) < 0.05
    table = bcm.summary(idata, metrics=["acc", "ba"])
    assert set(table.index.get_level_values("classifier")) == {"mean", "new fold"}
    pp = idata.posterior_predictive["counts"]
    assert pp.dims == ("chain", "draw", "fold", "actual", "predicted")
    np.testing.assert_array_equal(pp.sum(("actual", "predicted")).isel(chain=0, draw=0), mc.n)


def test_two_classes_agree_with_the_binary_posterior():
    """K = 2 against the binary model on the same folds: the posterior means of the mean
    TPR and TNR agree within 4 combined MC standard errors (ArviZ's mcse of each fit)."""
    rng = np.random.default_rng(11)
    pos = rng.binomial(150, 0.4, 6)
    tp = rng.binomial(pos, rng.beta(85, 15, 6))
    tn = rng.binomial(150 - pos, rng.beta(80, 20, 6))
    cms = bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=150 - pos - tn, tn=tn,
                              classifier=[f"f{i}" for i in range(6)])
    kw = {"draws": 1000, "chains": 4, "progressbar": False, "predictive": False,
          "prior": False}
    binary = bcm.fit(bcm.models.folds(cms), random_seed=3, metrics=[], **kw).posterior
    multi = bcm.fit(bcm.models.folds(bcm.MulticlassConfusionMatrix.from_binary(cms)),
                    random_seed=4, metrics=["tpr"], **kw).posterior
    for name, cls in (("tpr", 1), ("tnr", 0)):
        b = binary[f"{name}_mean"]
        m = multi["tpr"].sel(classifier="mean", **{"class": cls})
        se = np.hypot(float(az.mcse(b.to_dataset(name="x"))["x"]),
                      float(az.mcse(m.drop_vars(["classifier", "class"]).to_dataset(
                          name="x"))["x"]))
        assert abs(float(b.mean()) - float(m.mean())) < 4 * se
        # the between-fold sds are the same quantity: compare with their MC error too
        sd_b, sd_m = binary[f"{name}_sd"], multi["tpr_sd"].sel({"class": cls})
        se = np.hypot(float(az.mcse(sd_b.to_dataset(name="x"))["x"]),
                      float(az.mcse(sd_m.drop_vars("class").to_dataset(name="x"))["x"]))
        assert abs(float(sd_b.mean()) - float(sd_m.mean())) < 4 * se


def test_save_and_rebuild_round_trip(tmp_path):
    mc, idata = equal_rows_fit()
    path = tmp_path / "fit.nc"
    bcm.save(idata, path)
    again = bcm.rebuild(bcm.load(path))
    assert [v.name for v in again.free_RVs] == ["prevalence", "rows_mean", "rows_spread"]
    np.testing.assert_array_equal(again["counts_data"].get_value(), mc.counts)


@pytest.mark.parametrize(("k", "folds"), [(2, 3), (3, 4), (4, 2)])
def test_kernel_is_the_model(k, folds):
    """The compiled density equals PyMC's up to a constant (spread of the differences
    < 1e-8 over 10 random points of the unconstrained coordinates, sd 1), with its
    gradient to 1e-7 relative (PyTensor's digamma is accurate to about 1e-9 there; the
    binary kernel's test checks the same formulas against SciPy's to 1e-11).  Counts
    with zero cells."""
    from bayescm.models.folds import kernel_multiclass
    from tests.models.test_models import assert_kernel_is_model

    rng = np.random.default_rng(k)
    counts = rng.integers(0, 30, size=(folds, k, k))
    counts[0, 0, 1] = 0
    mc = bcm.MulticlassConfusionMatrix(counts, labels=[f"c{i}" for i in range(k)],
                                       classifier=[f"f{i}" for i in range(folds)])
    m = bcm.models.folds(mc, priors={"rows_spread": {"c1": bcm.priors.Beta(1, 3)}})
    kernel = bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))
    assert kernel.module is kernel_multiclass
    assert_kernel_is_model(m, kernel, points=10, scale=1.0, rng=rng, rtol=1e-7,
                           atol=lambda want: 1e-7 * np.abs(want).max())


def test_kclass_folds_with_a_wide_spread_give_finite_draws_without_warnings():
    """Two identical 2-class folds of 10 cases: the spread's posterior reaches very wide
    spreads, where a new fold's row parameters all underflow (it gave NaN draws and a
    numpy RuntimeWarning)."""
    cms = bcm.MulticlassConfusionMatrix([[[5, 0], [0, 5]], [[5, 0], [0, 5]]], labels=["x", "y"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", bcm.ConvergenceWarning)
        fit = bcm.fit(bcm.models.folds(cms), draws=200, tune=200, chains=2, random_seed=1)
    assert np.isfinite(fit.posterior["rows_new"].values).all()
    assert np.isfinite(fit.posterior["acc"].values).all()
