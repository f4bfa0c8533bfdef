"""K-class defaults that carry the same information at every K, and the prior-weight check.

multiclass_rows' defaults are Dirichlet(2/K, ..., 2/K) for the class prevalence and for
every actual class's row (two pseudo-cases each, Beta(1, 1)'s two at K = 2);
multiclass_cells' default is Dirichlet(4/K², ...) over the K² cells (four pseudo-cases,
Dirichlet(1, 1, 1, 1) at K = 2).  By Dirichlet-multinomial conjugacy each row's posterior
is Dirichlet(2/K + counts), so a class's recall is exactly
Beta(2/K + C_aa, 2 (K - 1)/K + r_a - C_aa).

Tolerances follow from Monte Carlo error of the i.i.d. draws used: a mean within
Z = 4.5 standard errors sd / sqrt(n); an HDI endpoint within Z times the sd of that
endpoint over 200 replicate samples of the same size from the exact Beta (the sampled
HDI's own spread).
"""

from __future__ import annotations

import pathlib
import re
import warnings

import numpy as np
import pytest
from scipy import stats as sps

import bayescm as bcm
from bayescm.inference import fit_closed_form
from bayescm.models.multiclass_rows.weight import SHARE, PriorWeightWarning
from bayescm.priors import Beta, Dirichlet
from bayescm.stats import beta_hdi

Z = 4.5
K = 10
PER_CLASS = 15
LABELS = [str(d) for d in range(K)]
DRAWS = (4, 5000)  # chains x draws: 20,000 i.i.d. draws
ROOT = pathlib.Path(__file__).resolve().parents[3]


def _digits_like() -> bcm.MulticlassConfusionMatrix:
    """K = 10 classes, 15 test cases each, every one predicted right (N = 150)."""
    return bcm.MulticlassConfusionMatrix(np.eye(K, dtype=int) * PER_CLASS, labels=LABELS)


def _weight_warnings(call, *args, **kwargs) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(*args, **kwargs)
    return [w for w in caught if issubclass(w.category, PriorWeightWarning)]


def _hdi_sd(a: float, b: float, n: int) -> tuple[float, float]:
    """The sd of the sampled 95 % HDI's endpoints for n draws of Beta(a, b)."""
    rng = np.random.default_rng(0)
    lo, hi = bcm.stats.hdi(rng.beta(a, b, size=(200, n)), axis=-1)
    return float(lo.std()), float(hi.std())


# -- the defaults ----------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 4, 7, 10, 25])
def test_defaults_hold_two_and_four_pseudo_cases_at_every_k(k):
    labels = [f"c{i}" for i in range(k)]
    mc = bcm.MulticlassConfusionMatrix(np.eye(k, dtype=int) * 40, labels=labels)
    rows = bcm.models.spec_of(bcm.models.multiclass_rows(mc)).priors
    cells = bcm.models.spec_of(bcm.models.multiclass_cells(mc)).priors
    for name in ("prevalence", "rows"):
        assert rows[name][0] == Dirichlet((2 / k,) * k)
        assert sum(rows[name][0].alpha) == pytest.approx(2, rel=1e-12)
    assert cells["theta"][0] == Dirichlet((4 / k**2,) * k**2)
    assert sum(cells["theta"][0].alpha) == pytest.approx(4, rel=1e-12)
    # the model's data hold them
    m = bcm.models.multiclass_rows(mc)
    np.testing.assert_array_equal(m["rows_alpha"].get_value(), np.full((1, k, k), 2 / k))
    np.testing.assert_array_equal(m["prevalence_alpha"].get_value(), np.full((1, k), 2 / k))
    c = bcm.models.multiclass_cells(mc)
    np.testing.assert_array_equal(c["theta_alpha"].get_value(), np.full((1, k * k), 4 / k**2))
    # the public record of how they were stated
    assert rows["rows"][0].elicited == f"Dirichlet.weighted({k}, total=2)"
    assert "2/K" in bcm.models.multiclass_rows.__doc__
    assert "4/K²" in bcm.models.multiclass_cells.__doc__


def test_k2_defaults_are_three_beta_and_dirichlet_multinomial_exactly():
    """At K = 2 the registered and the built defaults are Beta(1, 1) and
    Dirichlet(1, 1, 1, 1), and the conjugate posteriors equal the binary models' to the
    last bit (a Dirichlet of two is a Beta; the cells in actual-major order are tp, fn,
    fp, tn)."""
    three = bcm.priors.defaults("three_beta")
    shown = bcm.priors.defaults("multiclass_rows")
    assert shown == {"prevalence": Dirichlet((1, 1)), "rows": Dirichlet((1, 1))}
    assert shown["rows"].alpha == three["tpr"].params == three["tnr"].params
    assert shown["prevalence"].alpha == three["prevalence"].params == Beta(1, 1).params
    assert "2/K" in shown["rows"].rationale
    assert (bcm.priors.defaults("multiclass_cells")["theta"]
            == bcm.priors.defaults("dirichlet_multinomial")["theta"] == Dirichlet((1, 1, 1, 1)))
    assert "4/K²" in bcm.priors.defaults("multiclass_cells")["theta"].rationale
    for cells in [(26, 0, 2, 6), (0, 5, 0, 9), (10, 3, 4, 0), (40, 7, 12, 300)]:
        cm = bcm.ConfusionMatrix(*cells)
        mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("pos", "neg"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PriorWeightWarning)  # (0, 5, 0, 9): 5 positives
            rows = bcm.models.get_family("multiclass_rows").closed_form(mc).conjugate
            mcells = bcm.models.get_family("multiclass_cells").closed_form(mc).conjugate
        ref = bcm.models.get_family("three_beta").closed_form(cm).conjugate
        np.testing.assert_array_equal(rows.dirichlets["prevalence"][:, 0],
                                      ref.betas["prevalence"][0])
        np.testing.assert_array_equal(rows.dirichlets["rows"][:, 0], np.stack(ref.betas["tpr"], -1))
        np.testing.assert_array_equal(rows.dirichlets["rows"][:, 1, ::-1],
                                      np.stack(ref.betas["tnr"], -1))
        dm = bcm.models.get_family("dirichlet_multinomial").closed_form(cm).conjugate
        np.testing.assert_array_equal(mcells.dirichlets["cells"], dm.dirichlets["theta"])
        np.testing.assert_array_equal(mcells.dirichlets["cells"][0], np.asarray(cells) + 1.0)


# -- digits-like data: what the default says ---------------------------------------------
def test_digits_like_closed_form():
    """Each row's posterior is Dirichlet(0.2 + counts): recall ~ Beta(15.2, 1.8), mean
    0.894 >= 0.85; the class mix Dirichlet(15.2, ...).  The flat Dirichlet(1) rows gave
    Beta(16, 9), mean 0.64, whose 95 % HDI stops at 0.82."""
    mc = _digits_like()
    conj = bcm.models.get_family("multiclass_rows").closed_form(mc).conjugate
    np.testing.assert_allclose(conj.dirichlets["rows"][0], 0.2 + 15 * np.eye(K), rtol=1e-15)
    np.testing.assert_allclose(conj.dirichlets["prevalence"][0], np.full(K, 15.2), rtol=1e-15)
    a, b = 0.2 + PER_CLASS, 1.8
    assert sps.beta(a, b).mean() == pytest.approx(15.2 / 17) and 15.2 / 17 >= 0.85
    lo, hi = (float(x) for x in beta_hdi(a, b))
    assert lo == pytest.approx(0.75235, abs=1e-5) and hi == pytest.approx(0.99837, abs=1e-5)
    # before: flat rows, Beta(1 + 15, 9 + 0): the interval missed the observed 1.0 by far
    assert float(beta_hdi(16, 9)[1]) < 0.83 and sps.beta(16, 9).mean() == pytest.approx(0.64)


@pytest.mark.parametrize("path", ["builder", "light"])
def test_digits_like_default_posterior_recall(path):
    """The exact sampler's recall draws of every class: mean >= 0.85 and equal to
    15.2/17, 95 % HDI equal to Beta(15.2, 1.8)'s exact [0.7524, 0.9984], within Monte
    Carlo error; through the builder and through the light path of the CLI."""
    mc = _digits_like()
    kw = {"chains": DRAWS[0], "draws": DRAWS[1], "random_seed": 5, "metrics": ["tpr", "acc"]}
    if path == "builder":
        post = bcm.fit(bcm.models.multiclass_rows(mc), sampler="exact", predictive=False,
                       **kw).posterior
    else:
        post = fit_closed_form("multiclass_rows", mc, **kw)["posterior"]
    recall = post["tpr"].isel(classifier=0).transpose("chain", "draw", "class").values
    recall = recall.reshape(-1, K)
    n = recall.shape[0]
    a, b = 0.2 + PER_CLASS, 1.8
    mean, sd = sps.beta(a, b).mean(), sps.beta(a, b).std()
    lo, hi = (float(x) for x in beta_hdi(a, b))
    sd_lo, sd_hi = _hdi_sd(a, b, n)
    for k in range(K):
        x = recall[:, k]
        assert x.mean() >= 0.85
        assert abs(x.mean() - mean) < Z * sd / np.sqrt(n), (k, x.mean())
        slo, shi = (float(v) for v in bcm.stats.hdi(x))
        assert abs(slo - lo) < Z * sd_lo and abs(shi - hi) < Z * sd_hi, (k, slo, shi)
    # accuracy sum_k pi_k rho_kk: by symmetry and independence its mean is 15.2/17 too
    acc = post["acc"].values.ravel()
    assert abs(acc.mean() - mean) < Z * acc.std() / np.sqrt(acc.size)


def test_digits_like_cells_default():
    """multiclass_cells: accuracy is exactly Beta(0.4 + 150, 3.6), mean 0.977 (flat:
    Beta(160, 90), mean 0.64); each recall Beta(0.04 + 15, 0.36)."""
    mc = _digits_like()
    post = fit_closed_form("multiclass_cells", mc, chains=DRAWS[0],
                                         draws=DRAWS[1], random_seed=6,
                                         metrics=["acc", "tpr"])["posterior"]
    acc = post["acc"].values.ravel()
    a, b = 0.4 + 150, 3.6
    assert abs(acc.mean() - a / (a + b)) < Z * acc.std() / np.sqrt(acc.size)
    assert sps.kstest(acc, sps.beta(a, b).cdf).pvalue > 1e-4
    recall = post["tpr"].isel(classifier=0).values.reshape(-1, K)
    assert np.all(np.abs(recall.mean(axis=0) - 15.04 / 15.4)
                  < Z * recall.std(axis=0) / np.sqrt(recall.shape[0]))


# -- the warning ---------------------------------------------------------------------------
def test_no_warning_for_the_defaults_on_digits_like_data():
    mc = _digits_like()
    for call in (bcm.models.multiclass_rows, bcm.models.multiclass_cells,
                 bcm.models.get_family("multiclass_rows").closed_form,
                 bcm.models.get_family("multiclass_cells").closed_form):
        assert _weight_warnings(call, mc) == []
    assert _weight_warnings(fit_closed_form, "multiclass_rows", mc,
                            draws=10, chains=1) == []


def test_heavy_prior_on_a_small_class_warns_once_naming_a_lighter_prior():
    """A diagonal prior of 10 pseudo-cases per row against classes of 6 and 3: one
    warning (several findings), pointing at the caller's line, naming the classes and a
    lighter prior that passes."""
    mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 1, 0], [0, 3, 40]],
                                       labels=["cat", "dog", "bird"])
    heavy = bcm.priors.Dirichlet.diagonal(3, correct=8, wrong=1)
    caught = _weight_warnings(bcm.models.multiclass_rows, mc, priors={"rows": heavy})
    assert len(caught) == 1
    assert caught[0].filename == __file__  # the user's line, not bayescm's
    text = str(caught[0].message)
    assert "25%" in text and "'cat'" in text and "'dog'" in text and "'bird'" not in text
    assert "bcm.priors.Dirichlet.weighted(3, total=0.75)" in text  # 0.25 x 3 cases
    lighter = bcm.priors.Dirichlet.weighted(3, total=0.75)
    assert _weight_warnings(bcm.models.multiclass_rows, mc, priors={"rows": lighter}) == []
    # the closed form (the CLI's light path, the app) is built by the same check
    caught = _weight_warnings(bcm.models.get_family("multiclass_rows").closed_form, mc,
                              {"rows": heavy})
    assert len(caught) == 1 and str(caught[0].message) == text


def test_perks_is_named_when_it_passes():
    """Default rows (2 pseudo-cases) against a class of 5: Perks' Dirichlet(1/K) (one
    pseudo-case, 20 % of 5) is the lighter prior named, and it passes."""
    mc = bcm.MulticlassConfusionMatrix([[4, 1, 0], [2, 30, 0], [0, 3, 40]],
                                       labels=["cat", "dog", "bird"])
    (w,) = _weight_warnings(bcm.models.multiclass_rows, mc)
    assert "'cat' (5)" in str(w.message)
    assert "priors={'rows': bcm.priors.Dirichlet.perks(3)}" in str(w.message)
    assert _weight_warnings(bcm.models.multiclass_rows, mc,
                            priors={"rows": bcm.priors.Dirichlet.perks(3)}) == []


def test_the_share_is_a_strict_bound():
    """2 pseudo-cases against a class of exactly 8 (25 %) pass; against 7 they warn."""
    assert SHARE == 0.25
    for size, warns in ((8, False), (7, True)):
        counts = np.diag([size, 30, 30])
        mc = bcm.MulticlassConfusionMatrix(counts, labels=["a", "b", "c"])
        assert bool(_weight_warnings(bcm.models.multiclass_rows, mc)) is warns


def test_prevalence_and_cells_weights():
    """The class mix: the prevalence prior's total against N (a fixed prevalence takes no
    prior and is not checked); the cells prior's row sums (4/K each by default) against
    each class and its total (4) against N."""
    mc = bcm.MulticlassConfusionMatrix([[8, 0], [0, 10]], labels=["a", "b"])  # N = 18
    assert _weight_warnings(bcm.models.multiclass_rows, mc) == []
    assert _weight_warnings(bcm.models.multiclass_cells, mc) == []
    (w,) = _weight_warnings(bcm.models.multiclass_rows, mc,
                            priors={"prevalence": Dirichlet((3, 3))})  # 6 > 0.25 x 18
    assert "'prevalence' adds 6 pseudo-cases to the class mix of only 18" in str(w.message)
    assert "priors={'prevalence': bcm.priors.Dirichlet.perks(2)}" in str(w.message)
    assert _weight_warnings(bcm.models.multiclass_rows, mc, prevalence=[0.5, 0.5]) == []
    small = bcm.MulticlassConfusionMatrix([[3, 0], [0, 3]], labels=["a", "b"])
    (w,) = _weight_warnings(bcm.models.multiclass_cells, small)
    text = str(w.message)
    assert "'theta' adds 2 pseudo-cases to each class" in text  # 4/K = 2 against 3
    assert "'theta' adds 4 pseudo-cases to the class mix of only 6 test cases" in text
    assert "priors={'theta': bcm.priors.Dirichlet.perks(4)}" in text
    assert _weight_warnings(bcm.models.multiclass_cells, small,
                            priors={"theta": bcm.priors.Dirichlet.perks(4)}) == []


def test_a_batch_and_a_class_without_cases():
    mc = bcm.MulticlassConfusionMatrix([[[30, 0, 0], [0, 30, 0], [0, 0, 30]],
                                        [[30, 0, 0], [0, 0, 0], [0, 0, 30]]],
                                       labels=["x", "y", "z"], classifier=["ok", "gap"])
    (w,) = _weight_warnings(bcm.models.multiclass_rows, mc)
    text = str(w.message)
    assert "'y' (classifier 'gap') have no test cases" in text and "'ok'" not in text


# -- the model cards' before/after numbers --------------------------------------------------
CARD_DRAWS = 4 * 100_000  # what the cards' command draws


def _card_table(family: str) -> dict[str, list[float]]:
    """The card's digits-like table: ``before``/``after`` -> [acc mean, acc HDI lower,
    acc HDI upper, recall mean, recall HDI lower, recall HDI upper] (sampled numbers)."""
    text = (ROOT / "models" / family / "README.md").read_text()
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 8 and cells[1] in ("before", "after"):
            numbers = []
            for mean, interval in ((cells[3], cells[4]), (cells[5], cells[6])):
                lo, hi = re.match(r"\[([\d.]+), ([\d.]+)\]", interval).groups()
                numbers += [float(mean), float(lo), float(hi)]
            out[cells[1]] = numbers
    assert set(out) == {"before", "after"}, f"{family} card has no digits-like table"
    return out


@pytest.mark.parametrize("family", ["multiclass_rows", "multiclass_cells"])
def test_card_before_after_numbers(family):
    """The cards' accuracy and recall on digits-like data under the flat Dirichlet(1)
    ("before") and the default ("after"): mean and 95 % HDI from the exact sampler,
    checked against 40,000 fresh draws.  Tolerance: Z standard errors of the difference
    of two estimates (ours and the card's 400,000 draws: a factor sqrt(1 + 0.1) on
    ours; an HDI endpoint's standard error from 50 bootstrap resamples) plus half a unit
    of the card's third digit."""
    table = _card_table(family)
    flat = {"multiclass_rows": {"prevalence": Dirichlet.flat(K), "rows": Dirichlet.flat(K)},
            "multiclass_cells": {"theta": Dirichlet.flat(K * K)}}[family]
    rng = np.random.default_rng(1)
    for key, priors in (("before", flat), ("after", None)):
        with warnings.catch_warnings(record=True) as caught:  # the flat prior is flagged
            warnings.simplefilter("always")
            post = fit_closed_form(family, _digits_like(), priors=priors, chains=4,
                                   draws=10_000, random_seed=11,
                                   metrics=["acc", "tpr"])["posterior"]
        flagged = [w for w in caught if issubclass(w.category, PriorWeightWarning)]
        assert len(flagged) == (key == "before")
        if flagged:
            assert "10 pseudo-cases to each class" in str(flagged[0].message)
            assert "and 4 more" in str(flagged[0].message)  # ten classes: six named
        for i, x in enumerate((post["acc"].values.ravel(),
                               post["tpr"].isel({"class": 0}).values.ravel())):
            inflate = np.sqrt(1 + x.size / CARD_DRAWS)
            mean, lo, hi = table[key][3 * i: 3 * i + 3]
            assert abs(x.mean() - mean) < Z * inflate * x.std() / np.sqrt(x.size) + 5e-4
            boot = bcm.stats.hdi(rng.choice(x, size=(50, x.size)), axis=-1)
            for got, card, spread in zip(bcm.stats.hdi(x), (lo, hi), boot, strict=True):
                assert abs(float(got) - card) < Z * inflate * spread.std() + 5e-4, (key, i, card)
