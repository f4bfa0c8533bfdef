"""dawid_skene: structure, the collapsed likelihood, the compiled density, priors,
identifiability, label switching, and what fit makes of it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.special import logsumexp

import bayescm as bcm
from bayescm.data.datasets_ratings import anaesthesia, anaesthesia_table
from bayescm.models import IdentifiabilityError, IdentifiabilityWarning
from bayescm.models.dawid_skene import (
    LabelSwitchingWarning,
    default_priors_for,
    identify,
    label_switching,
)
from bayescm.models.dawid_skene.likelihood import em_start, relabelling
from bayescm.priors import Dirichlet, PriorError


def gold_table() -> bcm.RatingsTable:
    """The anaesthesia data with three gold patients (one a twin of others)."""
    return bcm.RatingsTable.from_long(anaesthesia_table(), gold={3: 2, 1: 1, 36: 4},
                                      labels=[1, 2, 3, 4])


def item_loglik(rt: bcm.RatingsTable, prev: np.ndarray, conf: np.ndarray) -> float:
    """The log-likelihood item by item, nothing collapsed (the definition)."""
    counts, total = rt.counts, 0.0
    for i in range(rt.n_items):
        terms = [np.log(prev[c]) + np.sum(counts[i] * np.log(conf[:, c, :]))
                 for c in range(rt.n_classes)
                 if rt.gold_index[i] < 0 or rt.gold_index[i] == c]
        total += logsumexp(terms)
    return total


# -- structure -----------------------------------------------------------------------------
def test_structure_named_vars_dims_and_finite_logp_and_gradient():
    rt = gold_table()
    m = bcm.models.dawid_skene(rt)
    assert [v.name for v in m.free_RVs] == ["prevalence", "confusion"]
    assert [v.name for v in m.observed_RVs] == ["ratings"]
    assert [v.name for v in m.deterministics] == ["theta"]
    dims = m.named_vars_to_dims
    assert dims["prevalence"] == ("class",)
    assert dims["confusion"] == ("rater", "actual", "predicted")
    assert dims["ratings"] == ("pattern", "rater", "rating")
    assert dims["counts_data"] == ("item", "rater", "rating")
    assert dims["theta"] == ("classifier", "actual", "predicted")
    assert list(m.coords["class"]) == [1, 2, 3, 4] and list(m.coords["rater"]) == list("12345")
    # 27 patterns; gold patient 1 leaves its twins' pattern (+1), patients 3 and 36 have
    # patterns of their own
    assert len(m.coords["pattern"]) == len(rt.patterns()) == 28
    assert {v.name for v in m.data_vars} == {
        "counts_data", "pattern_counts", "multiplicity", "pattern_gold", "prevalence_alpha",
        "confusion_alpha"}
    point = m.initial_point()
    logp = m.compile_logp()(point)
    grad = m.compile_dlogp()(point)
    assert np.isfinite(logp) and np.all(np.isfinite(grad)) and grad.size == 3 + 5 * 4 * 3
    spec = bcm.models.spec_of(m)
    assert spec.options == {"pooling": "none", "identifiability": "warn"}


def test_collapsed_patterns_give_the_item_by_item_log_likelihood():
    """The observed ratings' log density (patterns x multiplicities, gold restricted) equals
    the sum over items of log sum_c pi_c prod theta^n, at random parameters."""
    rt = gold_table()
    m = bcm.models.dawid_skene(rt)
    ratings_logp = m.compile_fn(m.logp(vars=[m["ratings"]], sum=True), inputs=m.value_vars)
    rng = np.random.default_rng(3)
    for _ in range(5):
        prev = rng.dirichlet(np.ones(4))
        conf = rng.dirichlet(np.ones(4), size=(5, 4))
        point = {"prevalence_simplex__": _centred(prev), "confusion_simplex__": _centred(conf)}
        want = item_loglik(rt, prev, conf)
        assert ratings_logp(point) == pytest.approx(want, rel=1e-12, abs=1e-9)
        # and the family's per-item log-likelihood (for az.loo) sums to the same
        family, spec = bcm.models.family_of(m), bcm.models.spec_of(m)
        draws = xr.Dataset({"prevalence": (("chain", "draw", "class"), prev[None, None]),
                            "confusion": (("chain", "draw", "rater", "actual", "predicted"),
                                          conf[None, None])})
        ll = family.log_likelihood(draws, None, spec)
        assert ll.dims == ("chain", "draw", "case") and ll.sizes["case"] == 45
        assert ll["item"].values.tolist() == list(rt.items)
        assert float(ll.sum()) == pytest.approx(want, rel=1e-12)


def _centred(p: np.ndarray) -> np.ndarray:
    lp = np.log(p)
    return (lp - lp.mean(axis=-1, keepdims=True))[..., :-1]


def test_compiled_density_is_the_pymc_posterior():
    """The numba kernel equals the PyMC model's logp up to a constant, with the same
    gradient, at random points (gold items, repeated ratings), in PyMC's coordinates
    shifted by the EM start."""
    from bayescm.models.dawid_skene import kernel as _kernel_ds

    for rt in (anaesthesia(), gold_table()):
        m = bcm.models.dawid_skene(rt, priors={"confusion": {"2": Dirichlet.diagonal(
            4, correct=7, wrong=0.5)}})
        k = bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))
        assert k.module is _kernel_ds and k.n_dim == 3 + 5 * 4 * 3
        assert list(k.var_names) == ["prevalence", "confusion"]
        logp, dlogp = m.compile_logp(), m.compile_dlogp()
        prev0, conf0 = bcm.models.spec_of(m).extra["start"]
        y0 = np.concatenate([_centred(prev0), _centred(conf0).ravel()])
        rng = np.random.default_rng(1)
        diffs = []
        for _ in range(15):
            y = y0 + rng.normal(0, 1.5, y0.size)
            point = {"prevalence_simplex__": y[:3],
                     "confusion_simplex__": y[3:].reshape(5, 4, 3)}
            grad = np.zeros_like(y)
            diffs.append(logp(point) - k.module.log_density(y - y0, k.user_data, grad))
            np.testing.assert_allclose(grad, dlogp(point), rtol=1e-9, atol=1e-9)
        assert np.ptp(diffs) < 1e-8


def test_em_start_is_the_mode_in_pymcs_coordinates():
    """EM with the concentrations added maximises the density in the simplex coordinates
    (prior, Jacobian and likelihood): the gradient vanishes there."""
    m = bcm.models.dawid_skene(gold_table())
    prev0, conf0 = bcm.models.spec_of(m).extra["start"]
    point = {"prevalence_simplex__": _centred(prev0), "confusion_simplex__": _centred(conf0)}
    assert np.abs(m.compile_dlogp()(point)).max() < 1e-5
    # it starts from majority votes: the classes mean what the raters' labels mean
    assert np.all(np.argmax(conf0.sum(axis=0), axis=0) == np.arange(4))


# -- priors ------------------------------------------------------------------------------------
def test_default_priors_are_visible_and_carry_the_same_information_at_every_k():
    assert bcm.priors.defaults("dawid_skene") == default_priors_for(2)
    for k in (2, 3, 5):
        d = default_priors_for(k)
        assert d["prevalence"] == Dirichlet((2 / k,) * k)  # two pseudo-cases
        rows = np.asarray(d["confusion"].alpha)
        # flat rows plus one on the diagonal: recall a priori Beta(2, K - 1); no
        # concentration below 1 (bounded densities, no heavy tails for NUTS)
        np.testing.assert_allclose(rows, np.ones((k, k)) + np.eye(k))
    m = bcm.models.dawid_skene(anaesthesia())
    np.testing.assert_allclose(m["prevalence_alpha"].get_value(), 0.5)
    np.testing.assert_allclose(m["confusion_alpha"].get_value()[2],
                               np.asarray(default_priors_for(4)["confusion"].alpha))


def test_priors_by_name_per_rater_and_matched_by_label():
    rt = anaesthesia()
    skewed = pd.DataFrame([[5, 1, 1, 1], [1, 6, 1, 1], [1, 1, 7, 1], [1, 1, 1, 8]],
                          index=[4, 3, 2, 1], columns=[4, 3, 2, 1])  # reversed labels
    m = bcm.models.dawid_skene(rt, priors={"confusion": {"3": Dirichlet(skewed)},
                                           "prevalence": "dirichlet:3,3,3,3"})
    alpha = m["confusion_alpha"].get_value()
    assert np.diag(alpha[2]).tolist() == [8, 7, 6, 5]  # matched by label, data order
    np.testing.assert_allclose(alpha[0], np.asarray(default_priors_for(4)["confusion"].alpha))
    assert m["prevalence_alpha"].get_value().tolist() == [3, 3, 3, 3]
    one_row = bcm.models.dawid_skene(rt, priors={"confusion": Dirichlet((3, 1, 1, 1))})
    assert one_row["confusion_alpha"].get_value()[4, 2].tolist() == [3, 1, 1, 1]
    record = bcm.models.family_of(m).prior_record(bcm.models.spec_of(m))
    assert list(record) == ["prevalence", "confusion"] and list(record["prevalence"]) == ["all"]
    assert list(record["confusion"]) == list("12345")


@pytest.mark.parametrize(("priors", "words"), [
    ({"rows": Dirichlet((1, 1, 1, 1))}, "no parameter"),
    ({"confusion": Dirichlet((1, 1, 1, 0))}, "Improper priors"),
    ({"prevalence": Dirichlet((1, 1, 1))}, "4 concentrations"),
    ({"confusion": {"9": Dirichlet((1, 1, 1, 1))}}, "not in the data"),
])
def test_bad_priors_are_refused(priors, words):
    with pytest.raises(PriorError, match=words):
        bcm.models.dawid_skene(anaesthesia(), priors=priors)


def test_bad_arguments_are_refused_before_any_compilation():
    with pytest.raises(TypeError, match="RatingsTable"):
        bcm.models.dawid_skene(anaesthesia_table())
    with pytest.raises(PriorError, match="confusion_logit_mean"):
        bcm.models.dawid_skene(anaesthesia(), pooling="partial",
                               priors={"confusion": Dirichlet.diagonal(4, correct=5, wrong=1)})
    with pytest.raises(ValueError, match="pooling"):
        bcm.models.dawid_skene(anaesthesia(), pooling="full")
    with pytest.raises(ValueError, match="identifiability"):
        bcm.models.dawid_skene(anaesthesia(), identifiability="maybe")


# -- identifiability ----------------------------------------------------------------------
def two_raters(n_gold: int = 0) -> bcm.RatingsTable:
    """Two raters, three classes, 60 items; the first ``n_gold`` items gold."""
    rng = np.random.default_rng(0)
    z = rng.integers(0, 3, 60)
    rows = [(i, r, int(z[i]) if rng.random() < 0.8 else int(rng.integers(0, 3)))
            for i in range(60) for r in "ab"]
    return bcm.RatingsTable.from_long(pd.DataFrame(rows, columns=["item", "rater", "rating"]),
                                      gold={i: int(z[i]) for i in range(n_gold)})


def test_two_raters_are_not_identified_and_say_so():
    with pytest.warns(IdentifiabilityWarning, match="not identified") as caught:
        bcm.models.dawid_skene(two_raters())
    text = str(caught[0].message)
    assert "fewer than three ratings in all" in text and "gold labels" in text
    with pytest.raises(IdentifiabilityError, match="ridge"):
        bcm.models.dawid_skene(two_raters(), identifiability="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bcm.models.dawid_skene(two_raters(), identifiability="ignore")


def test_informative_priors_or_gold_of_every_class_identify_two_raters():
    strong = Dirichlet.diagonal(3, correct=40, wrong=5)
    with pytest.warns(IdentifiabilityWarning, match="only through their informative priors"):
        m = bcm.models.dawid_skene(two_raters(), priors={"confusion": strong})
    assert bcm.models.spec_of(m).extra["identifiability"].status == "priors"
    rt = two_raters(n_gold=6)  # the first six items are of all three classes
    ident = identify(rt, [default_priors_for(3)["confusion"]] * 2)
    assert set(rt.gold.tolist()) == {0, 1, 2} and ident.status == "data"
    assert ident.raters == {"a": "gold", "b": "gold"} and ident.gold_items == 6
    assert identify(two_raters(n_gold=1), [strong, default_priors_for(3)["confusion"]]
                    ).raters == {"a": "priors", "b": "none"}


def test_three_ratings_of_an_item_identify_even_from_one_rater_repeating():
    rt = anaesthesia()
    ident = identify(rt, [default_priors_for(4)["confusion"]] * 5)
    assert ident.status == "data" and ident.items_with_three == 45
    # rater "1" alone, three times per patient: Kruskal's three views of one matrix
    only = bcm.RatingsTable.from_long(anaesthesia_table().query("rater == 1"))
    assert identify(only, [default_priors_for(4)["confusion"]]).status == "data"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bcm.models.dawid_skene(rt)


# -- label switching -------------------------------------------------------------------------
def test_relabelling_finds_the_labelling_of_the_raters_labels():
    rng = np.random.default_rng(2)
    good = rng.dirichlet(np.ones(3), size=(50, 4, 3)) * 0.3 + np.eye(3) * 0.7  # (S, R, K, K)
    assert (relabelling(good) == np.arange(3)).all()
    swapped = good[:, :, [1, 0, 2], :]  # classes 0 and 1 exchanged
    assert (relabelling(swapped) == [1, 0, 2]).all()
    # at K = 2 the identity is mean(Se + Sp) > 1, Hui-Walter's constraint
    se, sp = np.array([0.7, 0.4]), np.array([0.8, 0.45])
    conf = np.stack([[[s_, 1 - s_], [1 - e, e]] for e, s_ in zip(se, sp, strict=True)])
    assert (relabelling(conf[None]) == [0, 1]).all() == (np.mean(se + sp) > 1)
    seven = np.broadcast_to(np.eye(7) * 0.5 + 0.5 / 7, (1, 2, 7, 7))[:, :, [1, 0, *range(2, 7)]]
    assert relabelling(seven)[0].tolist() == [1, 0, 2, 3, 4, 5, 6]  # linear assignment


def test_a_chain_in_a_mirror_mode_is_reported():
    rng = np.random.default_rng(4)
    conf = rng.dirichlet(np.ones(3), size=(2, 100, 4, 3)) * 0.2 + np.eye(3) * 0.8
    conf[1] = conf[1][:, :, [2, 1, 0], :]  # chain 1 with classes 0 and 2 exchanged
    labels = ["a", "b", "c"]
    ds = xr.Dataset({"confusion": (("chain", "draw", "rater", "actual", "predicted"), conf),
                     "prevalence": (("chain", "draw", "class"), np.full((2, 100, 3), 1 / 3))},
                    coords={"actual": labels, "predicted": labels, "class": labels})
    note, serious = label_switching(ds)
    assert serious and "chain(s) [1]" in note and "'a' <- 'c'" in note
    assert label_switching(ds.isel(chain=[0])) is None
    # a few relabelled draws (below 1 %) are noted, not warned about; 5 % are both
    few = ds.copy(deep=True)
    few["confusion"][1] = ds["confusion"][0]
    few["confusion"][1, :1] = ds["confusion"][1, :1].values
    note, serious = label_switching(few)
    assert "0.5% of the draws" in note and not serious
    few["confusion"][1, :10] = ds["confusion"][1, :10].values
    assert label_switching(few)[1]
    spec = bcm.models.spec_of(bcm.models.dawid_skene(
        bcm.RatingsTable(np.ones((3, 4, 3)), labels=labels)))
    with pytest.warns(LabelSwitchingWarning, match="mirror-image mode"):
        out = bcm.models.get_family("dawid_skene").complete(ds.copy(), spec)
    assert "label_switching" in out.attrs and out["theta"].dims[-3:] == (
        "classifier", "actual", "predicted")


def test_em_start_from_majority_votes_keeps_the_labels_of_a_swapped_prior_out():
    """However the prior leans, the start's classes are what the raters call them."""
    pat = anaesthesia().patterns()
    prev, conf = em_start(pat, np.full(4, 0.5), np.ones((5, 4, 4)))
    assert np.allclose(prev.sum(), 1) and np.allclose(conf.sum(-1), 1)
    assert (relabelling(conf[None]) == np.arange(4)).all()


# -- what fit makes of it ----------------------------------------------------------------
@pytest.fixture(scope="module")
def fitted():
    m = bcm.models.dawid_skene(gold_table())
    return m, bcm.fit(m, draws=1000, tune=1000, chains=2, random_seed=3)


def test_fit_gives_theta_metrics_per_rater_and_the_groups(fitted):
    _, idata = fitted
    assert idata.attrs["engine"] == "bayescm-kernel" and idata.attrs["model"] == "dawid_skene"
    assert idata.attrs["identifiability_status"] == "data"
    post = idata.posterior
    assert post["theta"].dims == ("chain", "draw", "classifier", "actual", "predicted")
    np.testing.assert_allclose(post["theta"].sum(("actual", "predicted")), 1, atol=1e-12)
    np.testing.assert_allclose(
        post["theta"].sum("predicted").values,
        np.broadcast_to(post["prevalence"].values[:, :, None, :], (2, 1000, 5, 4)), atol=1e-12)
    assert post["tpr"].dims == ("chain", "draw", "classifier", "class")
    # a rater's recall of class c is its confusion[c, c]
    np.testing.assert_allclose(post["tpr"].values,
                               np.diagonal(post["confusion"].values, axis1=-2, axis2=-1),
                               rtol=1e-5)
    table = bcm.summary(idata, metrics=["tpr", "f1_macro"])
    assert table.index.names == ["classifier", "class", "metric"]
    assert idata.prior["theta"].dims == post["theta"].dims
    assert idata.log_likelihood["counts"].sizes["case"] == 45
    rep = idata.posterior_predictive["counts"]
    assert rep.dims == ("chain", "draw", "item", "rater", "rating")
    # the design is held: every item rated as often by the same raters; gold classes kept
    np.testing.assert_array_equal(rep.sum("rating").values[0, 0],
                                  gold_table().counts.sum(axis=-1))
    assert idata.observed_data["counts"].dims == ("item", "rater", "rating")


@pytest.mark.filterwarnings("ignore::bayescm.ConvergenceWarning")  # a short run: identity
def test_loo_and_predictive_n(fitted):
    import arviz as az

    m, idata = fitted
    with warnings.catch_warnings():  # 63 parameters for 45 items: some Pareto k are high
        warnings.simplefilter("ignore", UserWarning)
        loo = az.loo(idata)
    assert np.isfinite(loo.elpd_loo) and loo.n_data_points == 45
    again = bcm.fit(m, draws=100, tune=200, chains=1, random_seed=1, predictive_n=50,
                    prior=False)
    assert "predictions" not in again.groups()  # no design of a new study to repeat


def test_save_load_rebuild(fitted, tmp_path):
    m, idata = fitted
    path = bcm.save(idata, tmp_path / "ds.nc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = bcm.load(path)
    record = json.loads(back.attrs["model_spec"])
    assert record["family"] == "dawid_skene" and record["options"]["pooling"] == "none"
    again = bcm.rebuild(back)
    assert bcm.models.spec_of(again).data == gold_table()
    point = m.initial_point()
    assert again.compile_logp()(point) == pytest.approx(m.compile_logp()(point), abs=1e-9)
    assert "Dawid–Skene latent-class model" in bcm.models.family_of(m).describe(
        bcm.models.spec_of(again))


@pytest.mark.parametrize("prior", [Dirichlet((1, 1, 1)), Dirichlet.diagonal(3, correct=2,
                                                                             wrong=0.5)])
def test_prior_draws_are_the_prior_restricted_to_the_raters_labelling(prior):
    """Folded (a symmetric prior) or rejected (any other): the draws are those of the
    Dirichlet priors restricted to no-better-relabelling, checked against plain
    rejection sampling: every mean within 4.5 standard errors."""
    rt = two_raters()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        m = bcm.models.dawid_skene(rt, priors={"confusion": prior})
    family, spec = bcm.models.family_of(m), bcm.models.spec_of(m)
    draws = family.prior_draws(m, spec, (2, 4000), np.random.default_rng(1))
    conf = draws["confusion"].reshape(-1, 2, 3, 3)
    assert (relabelling(conf) == np.arange(3)).all()
    np.testing.assert_allclose(draws["theta"].sum(axis=(-2, -1)), 1)
    rng = np.random.default_rng(2)
    alpha = np.asarray(prior.alpha, float) * np.ones((3, 3))
    ref = np.stack([np.stack([rng.dirichlet(alpha[c], size=200_000) for c in range(3)], 1)
                    for _ in range(2)], 1)  # (N, R, K, K)
    ref = ref[np.all(relabelling(ref) == np.arange(3), axis=-1)]
    mine, theirs = conf.reshape(len(conf), -1), ref.reshape(len(ref), -1)
    se = np.hypot(mine.std(0) / np.sqrt(len(mine)), theirs.std(0) / np.sqrt(len(theirs)))
    assert np.max(np.abs(mine.mean(0) - theirs.mean(0)) / se) < 4.5
