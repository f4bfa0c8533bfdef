"""A model family is one unit: registration from outside, save/load/rebuild, the seams."""

from __future__ import annotations

import ast
import json
import pathlib
import warnings

import numpy as np
import pymc as pm
import pytest
import xarray as xr
from scipy import stats

import bayescm as bcm
from bayescm import idata as idata_mod
from bayescm.inference import persist
from bayescm.models import Conjugate, Family, ModelSpec, attach, register_family

PACKAGE = pathlib.Path(bcm.__file__).parent


# -- a family defined outside the package: one Beta-binomial rate ----------------------
class BetaBinomialRate(Family):
    """k of n positives found, rate r ~ Beta(a, b): posterior Beta(a + k, b + n - k).

    All cases are positive, so the confusion probabilities are (r, 1 - r, 0, 0) and the
    registry's metrics that need no negatives (tpr, fnr, acc) apply.
    """

    name = "test_beta_binomial_rate"

    def parameters(self, spec):
        return ["rate"]

    def complete(self, ds, spec, conjugate=None):
        r = ds["rate"]
        ds["theta"] = xr.concat([r, 1 - r, 0 * r, 0 * r], dim="cell").transpose(
            ..., "cell").assign_coords(cell=list(bcm.CELLS))
        return ds

    def conjugate(self, model, spec):
        k = np.asarray(model["k_data"].get_value(), float)
        n = np.asarray(model["n_data"].get_value(), float)
        a, b = spec.priors["rate"][0].params
        return Conjugate(betas={"rate": (a + k, b + n - k)})

    def prior_draws(self, model, spec, size, rng):
        a, b = spec.priors["rate"][0].params
        return {"rate": rng.beta(a, b, size=(*size, len(spec.data["k"])))}

    def predictive(self, draws, n, rng, spec):
        rate = draws["rate"].transpose("chain", "draw", "classifier")
        counts = rng.binomial(n.values, rate.values)
        da = xr.DataArray(counts, dims=rate.dims, coords=rate.coords, name="counts")
        return da, "success counts", False

    def encode_data(self, data):
        return data

    def decode_data(self, payload):
        return payload


def beta_binomial_rate(data, *, priors=None):
    prior = (priors or {}).get("rate", bcm.priors.Beta(1, 1))
    if isinstance(prior, dict):  # per unit, as rebuild passes it back
        prior = next(iter(prior.values()))
    units = [f"u{i}" for i in range(len(data["k"]))]
    k_n = np.stack([data["k"], np.subtract(data["n"], data["k"])], axis=-1)
    with pm.Model(coords={"classifier": units, "outcome": ["found", "missed"]}) as model:
        k = pm.Data("k_data", np.asarray(data["k"]), dims="classifier")
        n = pm.Data("n_data", np.asarray(data["n"]), dims="classifier")
        # the observed table (units x outcomes): what predictive draws replicate
        pm.Data("counts_data", k_n, dims=("classifier", "outcome"))
        rate = pm.Beta("rate", prior.alpha, prior.beta, dims="classifier")
        pm.Binomial("k", n=n, p=rate, observed=k, dims="classifier")
    spec = ModelSpec(BetaBinomialRate.name, dict(data), {"rate": [prior] * len(units)})
    return attach(model, spec)


register_family(BetaBinomialRate(beta_binomial_rate), replace=True)
DATA = {"k": [7, 30], "n": [10, 40]}
POSTERIOR = stats.beta(1 + np.array(DATA["k"]), 1 + np.subtract(DATA["n"], DATA["k"]))


def _agrees_with_the_beta_posterior(idata) -> None:
    """Each unit's rate, and the registry's TPR of it, within 4.5 Monte Carlo standard
    errors (ESS from the convergence report) of the Beta posterior's mean."""
    report = bcm.check_convergence(idata)
    assert report.ok
    ess = report.table["ess_bulk"].values
    draws = idata.posterior["rate"].values.reshape(-1, 2)
    assert np.all(np.abs(draws.mean(0) - POSTERIOR.mean()) < 4.5 * POSTERIOR.std()
                  / np.sqrt(ess.min()))
    # the family's theta feeds the metric registry: summary of the TPR posterior
    table = bcm.summary(idata, metrics=["tpr"])
    assert np.all(np.abs(table["mean"].values - POSTERIOR.mean())
                  < 4.5 * POSTERIOR.std() / np.sqrt(ess))


def test_a_new_family_fits_exactly_summarises_and_predicts():
    """Registered from outside bayescm: the exact sampler, the convergence check, prior
    and predictive draws all come from the family, with no change to bayescm (NUTS on
    it, through nutpie's compilation of the PyMC model, under ``-m slow`` below)."""
    exact = bcm.fit(beta_binomial_rate(DATA), sampler="exact", draws=2000, random_seed=1)
    assert exact.attrs["model"] == "test_beta_binomial_rate"
    _agrees_with_the_beta_posterior(exact)
    # predictive counts: a repeat of each unit's n trials, mean n * E[rate]
    pred = exact.posterior_predictive["counts"]
    assert pred.dims == ("chain", "draw", "classifier")
    assert "success counts" in exact.posterior_predictive.attrs["meaning"]
    want = np.array(DATA["n"]) * POSTERIOR.mean()
    sd = np.sqrt(pred.values.reshape(-1, 2).var(0) / pred.values.reshape(-1, 2).shape[0])
    assert np.all(np.abs(pred.values.reshape(-1, 2).mean(0) - want) < 5 * sd)
    assert set(exact.prior["rate"].dims) == {"chain", "draw", "classifier"}
    rebuilt = bcm.rebuild(exact)
    assert sorted(v.name for v in rebuilt.free_RVs) == ["rate"]


@pytest.mark.slow  # nutpie compiles the PyMC model through numba: about 20 s
def test_a_new_family_fits_with_nuts():
    nuts = bcm.fit(beta_binomial_rate(DATA), draws=1000, random_seed=2)
    assert nuts.attrs["model"] == "test_beta_binomial_rate"
    assert nuts.attrs["engine"] == "nutpie" and nuts.attrs["parameters"] == "rate"
    _agrees_with_the_beta_posterior(nuts)


def test_register_family_refuses_a_clash_and_attach_needs_registration():
    with pytest.raises(ValueError, match="registered already"):
        register_family(BetaBinomialRate(beta_binomial_rate))
    with pytest.raises(KeyError, match="Register the family"):
        attach(pm.Model(), ModelSpec("nobody", None, {}))
    with pytest.raises(TypeError, match="Family"):
        register_family(object())


def test_defaults_of_built_in_families_come_from_the_families():
    fam = bcm.models.get_family("three_beta")
    assert bcm.priors.defaults("three_beta") == dict(fam.default_priors)
    assert set(bcm.models.families()) >= {"dirichlet_multinomial", "folds", "hui_walter",
                                          "three_beta"}


def _names_branched_on(path: pathlib.Path, names: set[str]) -> list[str]:
    """Comparisons of anything with a family name (==, !=, in) in a module."""
    hits = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for c in [node.left, *node.comparators]:
                values = [c] if isinstance(c, ast.Constant) else (
                    c.elts if isinstance(c, ast.Tuple | ast.List | ast.Set) else [])
                for v in values:
                    if isinstance(v, ast.Constant) and v.value in names:
                        hits.append(f"{path.name}:{node.lineno} compares with {v.value!r}")
    return hits


def test_no_module_outside_models_branches_on_a_family_name():
    names = set(bcm.models.families())
    hits = []
    for path in PACKAGE.rglob("*.py"):
        if "models" in path.relative_to(PACKAGE).parts[:1]:
            continue
        hits += _names_branched_on(path, names)
    assert hits == []


def _is_cell_count(node: ast.AST) -> bool:
    """``tp``, ``tp[part]``, ``x.tp``, ``cm.cell("tp")`` or ``tp.astype(float)``: a cell's count."""
    while isinstance(node, ast.Subscript) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "astype"):
        node = node.value if isinstance(node, ast.Subscript) else node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "cell":
        return any(isinstance(a, ast.Constant) and a.value in bcm.CELLS for a in node.args)
    return (isinstance(node, ast.Name) and node.id in bcm.CELLS) or (
        isinstance(node, ast.Attribute) and node.attr in bcm.CELLS)


def _terms(node: ast.AST) -> list[ast.AST]:
    """The operands of a chain of + and - (``1 + n_pos - tp`` -> 1, n_pos, tp)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        return _terms(node.left) + _terms(node.right)
    return [node]


def conjugate_updates_in(source: str, name: str = "<module>") -> list[str]:
    """Where a module writes a Beta update of its own: a pseudo-count added to cell counts
    (``1 + tp``, ``1 + tp + fn``, ``1 + n_pos - tp[part]``), or the old helper
    ``three_beta_params`` that did so."""
    hits, inner = [], set()
    for node in ast.walk(ast.parse(source)):  # breadth first: a chain before its links
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub) \
                and id(node) not in inner:
            inner |= {id(n) for n in ast.walk(node)}
            terms = _terms(node)
            if any(isinstance(t, ast.Constant) and isinstance(t.value, int | float)
                   and not isinstance(t.value, bool) for t in terms) \
                    and any(_is_cell_count(t) for t in terms):
                hits.append(f"{name}:{node.lineno} {ast.unparse(node)}")
        names = ([node.id] if isinstance(node, ast.Name) else
                 [node.attr] if isinstance(node, ast.Attribute) else
                 [node.name] if isinstance(node, ast.FunctionDef) else
                 [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else [])
        hits += [f"{name}:{node.lineno} {n}" for n in names if n == "three_beta_params"]
    return hits


def test_conjugate_updates_are_written_only_in_the_families():
    # the detector sees the forms the three-Beta update took outside bayescm/models/
    old = ("a = stats.beta(1 + tp, 1 + fn)\nb = (1 + tp + fn, 1 + fp + tn)\n"
           "c = (1 + n_pos - tp[part])[:, None]\nd = 1.0 + cm.cell('tn')\n"
           "from bayescm.inference.posterior import three_beta_params\n")
    found = conjugate_updates_in(old)
    assert len(found) == 7 and {h.split()[0] for h in found} == {
        f"<module>:{i}" for i in range(1, 6)}
    assert conjugate_updates_in("n = tp + fn\nx = 1 - tpr\ny = a + tp\nz = 1 + n\n") == []
    hits = []
    for path in PACKAGE.rglob("*.py"):
        if "models" in path.relative_to(PACKAGE).parts[:1]:
            continue  # a family's update lives in its folder (bayescm/models/<family>/)
        hits += conjugate_updates_in(path.read_text(), str(path.relative_to(PACKAGE)))
    assert hits == [], ("ask the family (bayescm.family.default_family(kind)."
                        f"rate_posteriors / closed_form) instead: {hits}")


def families_named_in_calls(source: str, names: set[str], name: str = "<module>") -> list[str]:
    """Calls given a family's name as a literal argument (``resolve("three_beta", ...)``)."""
    return [f"{name}:{node.lineno} {ast.unparse(node)}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and any(
                isinstance(a, ast.Constant) and a.value in names
                for a in [*node.args, *(k.value for k in node.keywords)])]


def test_no_module_below_the_front_ends_asks_for_a_family_by_name():
    # defaults, priors and updates are asked of default_family(kind), not of a name;
    # the registry (family.py) and the front ends (cli, app) name the families they offer
    names = set(bcm.models.families())
    assert families_named_in_calls('p = resolve("three_beta", None, ["a"])', names)
    hits = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("models", "cli", "app", "family.py"):
            continue
        hits += families_named_in_calls(path.read_text(), names, str(rel))
    assert hits == []


def test_rate_posteriors_are_the_closed_form_of_the_binary_family():
    fam = bcm.family.default_family("binary")
    cm = bcm.ConfusionMatrix(tp=[26, 40], fn=[0, 8], fp=[2, 5], tn=[6, 47],
                             classifier=["a", "b"])
    closed = fam.closed_form(cm).conjugate.betas
    post = fam.rate_posteriors({c: cm.cell(c) for c in bcm.CELLS})
    assert list(post) == list(closed)  # the order seeded draws depend on
    for name, (a, b) in post.items():
        np.testing.assert_array_equal(a, closed[name][0])
        np.testing.assert_array_equal(b, closed[name][1])
    # priors by rate broadcast against simulated counts of any shape
    sims = {c: np.full((3, 1), 5) for c in bcm.CELLS}
    tpr = fam.rate_posteriors(sims, {"tpr": (np.array([2.0, 3.0]), 4.0)})["tpr"]
    np.testing.assert_array_equal(tpr[0], np.broadcast_to([7.0, 8.0], (3, 2)))
    np.testing.assert_array_equal(tpr[1], np.full((3, 1), 9.0))
    with pytest.raises(KeyError, match="missing cells"):
        fam.rate_posteriors({"tp": 1, "fn": 2})
    with pytest.raises(KeyError, match="unknown rates"):
        fam.rate_posteriors(sims, {"sensitivity": (1, 1)})
    with pytest.raises(NotImplementedError, match="Beta posteriors"):
        bcm.family.default_family("multiclass").rate_posteriors(sims)


# -- save, load, rebuild --------------------------------------------------------------
@pytest.fixture
def hw_model():
    tab = bcm.AgreementTable.from_counts({"site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
                                          "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
    return bcm.models.hui_walter(tab, priors={"sensitivity": {"A": bcm.priors.Beta(20, 4)}},
                                 conditional_dependence=[("A", "B")], identifiability="ignore")


@pytest.mark.parametrize("build", [
    lambda: bcm.models.three_beta(bcm.ConfusionMatrix(tp=[26, 40], fn=[0, 8], fp=[2, 5],
                                                      tn=[6, 47], classifier=["a", "b"]),
                                  priors={"tpr": {"a": bcm.priors.Beta(3, 2)}}, prevalence=0.4),
    lambda: bcm.models.dirichlet_multinomial(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6),
                                             priors={"theta": bcm.priors.Dirichlet((2, 1, 1, 2))}),
    lambda: bcm.models.folds(bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7],
                                                 tn=[47, 44, 43], classifier=["f1", "f2", "f3"]),
                             priors={"tnr_kappa": bcm.priors.Gamma(3, 0.05)}),
], ids=["three_beta", "dirichlet_multinomial", "folds"])
def test_rebuild_gives_the_same_model(build):
    """The record fit writes (family, data, priors, options) rebuilds the same model:
    same variables, dims, coords, data and log density."""
    model = build()
    record = persist.encode_spec(bcm.models.family_of(model), bcm.models.spec_of(model))
    idata = idata_mod.make({"posterior": xr.Dataset({"x": (("chain", "draw"), np.zeros((1, 2)))})},
                           {"model_spec": record})
    again = bcm.rebuild(idata)
    assert _structure(again) == _structure(model)
    assert bcm.models.spec_of(again).options == bcm.models.spec_of(model).options
    point = model.initial_point()
    assert again.compile_logp()(point) == pytest.approx(model.compile_logp()(point), abs=1e-12)
    # fit writes the same record
    if bcm.models.family_of(model).conjugate(model, bcm.models.spec_of(model)) is not None:
        fitted = bcm.fit(model, sampler="exact", draws=10, random_seed=1)
        assert fitted.attrs["model_spec"] == record


def _structure(model: pm.Model) -> dict:
    return {
        "free": sorted(v.name for v in model.free_RVs),
        "dims": dict(model.named_vars_to_dims),
        "coords": {k: list(v) for k, v in model.coords.items() if v is not None},
        "data": {v.name: np.asarray(v.get_value()).tolist() for v in model.data_vars},
    }


@pytest.mark.filterwarnings("ignore::bayescm.ConvergenceWarning")  # short runs: identity only
def test_save_load_rebuild_refit_round_trip(tmp_path, hw_model):
    idata = bcm.fit(hw_model, draws=300, tune=300, chains=2, random_seed=5)
    path = bcm.save(idata, tmp_path / "fit.nc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an untouched file of this version: no warning
        back = bcm.load(path)
    for group in idata.groups():
        for name, da in idata[group].data_vars.items():
            np.testing.assert_array_equal(back[group][name].values, da.values)
    record = json.loads(back.attrs["model_spec"])
    assert record["family"] == "hui_walter"
    assert record["options"]["conditional_dependence"] == [["A", "B"]]
    assert record["priors"]["sensitivity"]["A"] == {"kind": "Beta", "params": [20.0, 4.0]}
    assert back.attrs["bayescm_version"] == bcm.__version__
    model = bcm.rebuild(back)
    assert _structure(model) == _structure(hw_model)
    refit = bcm.fit(model, draws=300, tune=300, chains=2, random_seed=5)
    np.testing.assert_array_equal(refit.posterior["sensitivity"].values,
                                  idata.posterior["sensitivity"].values)  # same seed, same fit


def test_a_tampered_or_foreign_file_warns(tmp_path):
    import arviz as az

    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    # 2,000 exact draws: a default exact fit (10^6 draws) takes ~15 s to compress
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=2000, random_seed=1)
    path = bcm.save(idata, tmp_path / "fit.nc")
    tampered = az.from_netcdf(path)
    tampered.posterior["tpr"] = tampered.posterior["tpr"] * 0.99
    tampered.to_netcdf(str(tmp_path / "tampered.nc"))
    with pytest.warns(persist.FileMismatchWarning, match="content hash"):
        bcm.load(tmp_path / "tampered.nc")
    foreign = az.from_netcdf(path)
    foreign.attrs["bayescm_version"] = "0.0.1"
    foreign.to_netcdf(str(tmp_path / "foreign.nc"))
    with pytest.warns(persist.FileMismatchWarning, match="0.0.1"):
        bcm.load(tmp_path / "foreign.nc")
    idata.to_netcdf(str(tmp_path / "plain.nc"))  # not through bcm.save
    with pytest.warns(persist.FileMismatchWarning):
        back = bcm.load(tmp_path / "plain.nc")
    assert bcm.rebuild(back) is not None  # fit recorded the model: still rebuildable
    with pytest.raises(ValueError, match="records no model"):
        bcm.rebuild(az.from_dict(posterior={"x": np.zeros((1, 10))}))


# -- the nutpie seam ------------------------------------------------------------------
def test_an_unknown_nutpie_hands_the_model_to_nutpies_compilation(monkeypatch, batch):
    """The fallback's decision and hand-over, without nutpie's minute-long compilation
    (the slow test below runs it): one one-line notice, nutpie's own compilation of the
    PyMC model with a structure key that other counts share (so nutpie's compilation is
    reused), and the fit labelled ``engine="nutpie"``.  The spy samples the kernel, so
    the fit is still a real posterior."""
    from bayescm.inference import engines

    calls = []

    def spy(model, *, structure, **kwargs):
        calls.append((model, structure))
        kernel = bcm.models.family_of(model).kernel(model, bcm.models.spec_of(model), None)
        return engines.sample_kernel(kernel, **kwargs)

    monkeypatch.setattr(engines, "_KERNEL_FIELDS", engines._KERNEL_FIELDS | {"new_field"})
    monkeypatch.setattr(engines, "sample_nutpie", spy)
    with pytest.warns(engines.EngineNotice, match="engine='nutpie'") as record:
        first = bcm.models.three_beta(batch)
        fallback = bcm.fit(first, draws=1000, random_seed=4)
    notices = [r for r in record if r.category is engines.EngineNotice]
    assert len(notices) == 1 and "\n" not in str(notices[0].message)
    assert fallback.attrs["engine"] == "nutpie"
    assert calls[0][0] is first and calls[0][1] is not None
    other = bcm.ConfusionMatrix(
        **{c: np.asarray(getattr(batch, c)) + 3 for c in bcm.CELLS}, classifier=batch.classifier)
    with pytest.warns(engines.EngineNotice):
        bcm.fit(bcm.models.three_beta(other), draws=1000, random_seed=4)
    assert calls[1][1] == calls[0][1]  # the same structure: nutpie's compilation reused
    # an extra matrix is another structure (another compilation)
    three = batch.take([0, 1, 2])
    with pytest.warns(engines.EngineNotice):
        bcm.fit(bcm.models.three_beta(three), draws=1000, random_seed=4)
    assert calls[2][1] != calls[0][1]


@pytest.mark.slow
@pytest.mark.xdist_group("nutpie-three-beta")  # one nutpie compilation for both
def test_an_unknown_nutpie_falls_back_with_a_notice_and_the_same_posterior(monkeypatch, batch):
    """When nutpie's model class is not the one bayescm's kernels fit, fit says so in one
    line and samples with nutpie's own compilation: the same posterior within MC error.
    It fits the session's ``batch``, as the generic-engine test of ``tests/inference``
    (also under ``-m slow``) does, in the same xdist group: nutpie compiles the model
    once for both."""
    from bayescm.inference import engines

    cm = batch
    monkeypatch.setattr(engines, "_KERNEL_FIELDS", engines._KERNEL_FIELDS | {"new_field"})
    assert not engines.kernel_supported()
    with pytest.warns(engines.EngineNotice, match="engine='nutpie'") as record:
        fallback = bcm.fit(bcm.models.three_beta(cm), draws=1000, random_seed=4)
    assert len(record) == 1 and "\n" not in str(record[0].message)
    assert fallback.attrs["engine"] == "nutpie"
    # other counts of the same structure reuse nutpie's compilation (its data change)
    import nutpie

    monkeypatch.setattr(nutpie, "compile_pymc_model",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("recompiled")))
    other = bcm.ConfusionMatrix(
        **{c: np.asarray(getattr(cm, c)) + 3 for c in bcm.CELLS}, classifier=cm.classifier)
    with pytest.warns(engines.EngineNotice):
        refit = bcm.fit(bcm.models.three_beta(other), draws=500, random_seed=4)
    assert refit.attrs["engine"] == "nutpie"
    np.testing.assert_array_equal(refit.observed_data["counts"].values, other.counts)
    monkeypatch.undo()
    assert engines.kernel_supported()
    kernel = bcm.fit(bcm.models.three_beta(cm), draws=1000, random_seed=4)
    assert kernel.attrs["engine"] == "bayescm-kernel"
    exact = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=5000, random_seed=4)
    for name in ("tpr", "tnr", "prevalence"):
        truth = exact.posterior[name].mean(("chain", "draw")).values
        sd = exact.posterior[name].std(("chain", "draw")).values
        for idata in (fallback, kernel):
            ess = bcm.check_convergence(idata, var_names=[name]).table["ess_bulk"].values
            got = idata.posterior[name].mean(("chain", "draw")).values
            assert np.all(np.abs(got - truth) < 4.5 * sd / np.sqrt(ess))
