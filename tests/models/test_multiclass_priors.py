"""What the multiclass model cards say about priors and posteriors, checked on draws.

Every fact stated in models/multiclass_rows/README.md and
models/multiclass_cells/README.md about the distribution of prevalence and metrics is
checked here on the families' own i.i.d. prior draws (``fit(...).prior``) or exact
posterior draws.  Tolerances follow from Monte Carlo error of n i.i.d. draws:

* "X is Beta(a, b)": Kolmogorov-Smirnov test, p > 1e-4 (a false alarm in 1e-4 of
  seeds per comparison; its power at n = 20,000 detects a shift of the CDF by 0.03);
* a mean: Z = 4.5 standard errors sd / sqrt(n); a variance: Z sqrt((m4 - var^2) / n);
  a probability p: Z sqrt(p (1 - p) / n); plus half a unit of the last digit when the
  value is one the card prints rounded.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from scipy import stats as sps

import bayescm as bcm
from bayescm.priors import Beta, Dirichlet

Z = 4.5
N_DRAWS = (2, 10_000)  # chains x draws: 20,000 i.i.d. draws
LABELS = ["a", "b", "c", "d"]
COUNTS = np.array([[30, 4, 0, 1], [5, 12, 3, 0], [2, 2, 20, 6], [0, 1, 4, 9]])
P_KS = 1e-4


def _draws(model, group: str) -> dict[str, np.ndarray]:
    """The group's parameters and metrics, flattened to (draws, ...) for one classifier."""
    idata = bcm.fit(model, sampler="exact", chains=N_DRAWS[0], draws=N_DRAWS[1],
                    random_seed=3, predictive=False, metrics=[])
    ds = getattr(idata, group)
    theta = ds["theta"]
    out = {name: ds[name] for name in ("prevalence", "rows") if name in ds}
    out["theta"] = theta
    out.update(bcm.metrics.compute_multiclass(theta, ["acc", "tpr", "ppv", "ba"]).data_vars)
    return {k: v.isel(classifier=0).transpose("chain", "draw", ...).values
            .reshape(N_DRAWS[0] * N_DRAWS[1], *v.shape[3:]) for k, v in out.items()}


def _is_beta(x: np.ndarray, a: float, b: float) -> None:
    p = sps.kstest(np.ravel(x), sps.beta(a, b).cdf).pvalue
    assert p > P_KS, (a, b, p)


def _mean_is(x: np.ndarray, value: float, rounding: float = 0.0) -> None:
    x = np.ravel(x)
    assert abs(x.mean() - value) < Z * x.std() / np.sqrt(x.size) + rounding, (x.mean(), value)


def _var_is(x: np.ndarray, value: float, rounding: float = 0.0) -> None:
    x = np.ravel(x)
    m4 = np.mean((x - x.mean()) ** 4)
    assert abs(x.var() - value) < Z * np.sqrt((m4 - x.var() ** 2) / x.size) + rounding


def _prob_is(event: np.ndarray, p: float, rounding: float) -> None:
    assert abs(event.mean() - p) < Z * np.sqrt(p * (1 - p) / event.size) + rounding


def _cm(counts=COUNTS, labels=LABELS):
    return bcm.MulticlassConfusionMatrix(counts, labels=labels)


# -- multiclass_cells ------------------------------------------------------------------
def test_cells_prior_and_posterior_marginals_are_beta():
    """acc ~ Beta(sum of diagonal, sum off the diagonal); recall_k and precision_k
    ~ Beta(alpha_kk, rest of row / column k); prevalence ~ Dirichlet(row sums); the
    posterior the same with alpha + counts."""
    alpha = np.random.default_rng(1).uniform(0.3, 3, (4, 4))
    model = bcm.models.multiclass_cells(_cm(), priors={"theta": Dirichlet(alpha.ravel())})
    for group, a in (("prior", alpha), ("posterior", alpha + COUNTS)):
        d = _draws(model, group)
        diag = np.trace(a)
        _is_beta(d["acc"], diag, a.sum() - diag)
        for k in range(4):
            _is_beta(d["tpr"][:, k], a[k, k], a[k].sum() - a[k, k])
            _is_beta(d["ppv"][:, k], a[k, k], a[:, k].sum() - a[k, k])
            _is_beta(d["theta"].sum(-1)[:, k], a[k].sum(), a.sum() - a[k].sum())
    # the test has power: accuracy is not the Beta of one cell
    p = sps.kstest(d["acc"], sps.beta(a[0, 0], a.sum() - a[0, 0]).cdf).pvalue
    assert p < 1e-12


def test_cells_default_flat_and_balanced_priors_at_k10():
    """The default Dirichlet(4/K²) over 100 cells: accuracy Beta(4/K, 4(K - 1)/K) with the
    card's sd, recall and precision Beta(4/K², 4(K - 1)/K²), prevalence Beta(4/K, ...), and
    the card's example (20 cases per class, 18 right) has posterior mean 180.4/204.  The
    flat Dirichlet(1): accuracy Beta(10, 90), prior mean 1/K, posterior mean 190/300; the
    balanced prior (1/2 on the diagonal, 1/(2(K - 1)) off it) gives Beta(K/2, K/2),
    Jeffreys recall and precision, uniform prevalence, and 185/210."""
    k, labels = 10, [f"c{i}" for i in range(10)]
    counts = np.full((k, k), 0) + np.diag(np.full(k, 18))
    counts[np.arange(k), (np.arange(k) + 1) % k] = 2
    cm = _cm(counts, labels)
    default = _draws(bcm.models.multiclass_cells(cm), "prior")
    _is_beta(default["acc"], 4 / k, 4 * (k - 1) / k)
    _mean_is(default["acc"], 1 / k)
    _var_is(default["acc"], (k - 1) / (5 * k**2), rounding=2 * 0.134 * 0.0005)  # sd 0.134
    _is_beta(default["tpr"][:, 2], 4 / k**2, 4 * (k - 1) / k**2)
    _is_beta(default["ppv"][:, 2], 4 / k**2, 4 * (k - 1) / k**2)
    _is_beta(default["theta"].sum(-1)[:, 3], 4 / k, 4 * (k - 1) / k)
    _mean_is(_draws(bcm.models.multiclass_cells(cm), "posterior")["acc"], 180.4 / 204)
    flat_prior = {"theta": Dirichlet.flat(k * k)}
    flat = _draws(bcm.models.multiclass_cells(cm, priors=flat_prior), "prior")
    _is_beta(flat["acc"], 10, 90)
    _mean_is(flat["acc"], 1 / k)
    _is_beta(flat["theta"].sum(-1)[:, 3], k, k * (k - 1))  # prevalence pulled to 1/K
    _mean_is(_draws(bcm.models.multiclass_cells(cm, priors=flat_prior), "posterior")["acc"],
             190 / 300)
    balanced = np.full((k, k), 1 / (2 * (k - 1)))
    np.fill_diagonal(balanced, 0.5)
    model = bcm.models.multiclass_cells(cm, priors={"theta": Dirichlet(balanced.ravel())})
    d = _draws(model, "prior")
    _is_beta(d["acc"], k / 2, k / 2)
    _is_beta(d["tpr"][:, 0], 0.5, 0.5)
    _is_beta(d["ppv"][:, 0], 0.5, 0.5)
    _is_beta(d["theta"].sum(-1)[:, 0], 1, k - 1)
    _mean_is(_draws(model, "posterior")["acc"], 185 / 210)


# -- multiclass_rows -------------------------------------------------------------------
def test_rows_prior_and_posterior_marginals():
    """prevalence_k ~ Beta(alpha_k, A - alpha_k); recall_k ~ Beta(beta_k, B - beta_k);
    E[ba] = 1/K for every row prior; E[acc] = sum alpha_a beta_a / (A B) with the
    card's variance; the posterior the same with alpha + row sums, beta + row a."""
    alpha, beta = np.array([2.0, 0.5, 1.0, 3.0]), np.array([4.0, 1.0, 0.5, 2.0])
    a_sum, b_sum = alpha.sum(), beta.sum()
    model = bcm.models.multiclass_rows(_cm(), priors={"prevalence": Dirichlet(alpha),
                                                      "rows": Dirichlet(beta)})
    d = _draws(model, "prior")
    for k in range(4):
        _is_beta(d["prevalence"][:, k], alpha[k], a_sum - alpha[k])
        _is_beta(d["tpr"][:, k], beta[k], b_sum - beta[k])
    _mean_is(d["ba"], 1 / 4)
    _mean_is(d["acc"], alpha @ beta / (a_sum * b_sum))
    second = (np.sum(alpha * (alpha + 1) * beta * (beta + 1)) / (b_sum * (b_sum + 1))
              + (np.outer(alpha * beta, alpha * beta).sum() - np.sum((alpha * beta) ** 2))
              / b_sum**2) / (a_sum * (a_sum + 1))
    _var_is(d["acc"], second - (alpha @ beta / (a_sum * b_sum)) ** 2)
    post = _draws(model, "posterior")
    sizes = COUNTS.sum(1)
    for k in range(4):
        _is_beta(post["prevalence"][:, k], alpha[k] + sizes[k],
                 a_sum + sizes.sum() - alpha[k] - sizes[k])
        _is_beta(post["tpr"][:, k], beta[k] + COUNTS[k, k],
                 b_sum - beta[k] + sizes[k] - COUNTS[k, k])


@pytest.mark.parametrize(("prior", "k", "sd", "above_half"), [
    ("default", 3, 0.317, 0.302), ("default", 10, 0.224, 0.083),
    ("flat", 3, 0.280, 0.283), ("flat", 10, 0.127, 0.020)])
def test_rows_precision_prior_is_not_beta(prior, k, sd, above_half):
    """Under the default Dirichlet(2/K) (and the flat Dirichlet(1)) prevalence and rows,
    precision_k has prior mean 1/K (exchangeable rows), the card's sd and
    P(precision > 0.5), and at K = 10 is not the Beta of those moments; accuracy's sd is
    sqrt((K + 2)(K - 1)) / (3 K^1.5) (flat: sqrt(2(K - 1)) / (K (K + 1)))."""
    labels = [f"c{i}" for i in range(k)]
    priors = ({"prevalence": Dirichlet.flat(k), "rows": Dirichlet.flat(k)} if prior == "flat"
              else None)
    d = _draws(bcm.models.multiclass_rows(_cm(np.eye(k, dtype=int) * 5, labels),
                                          priors=priors), "prior")
    ppv = d["ppv"][:, 1]
    _mean_is(ppv, 1 / k)
    _var_is(ppv, sd**2, rounding=2 * sd * 0.0005)
    _prob_is(ppv > 0.5, above_half, 0.0005)
    acc_var = ((k + 2) * (k - 1) / (9 * k**3) if prior == "default"
               else 2 * (k - 1) / (k * (k + 1)) ** 2)
    _var_is(d["acc"], acc_var)
    m, v = ppv.mean(), ppv.var()
    c = m * (1 - m) / v - 1
    if k == 10:  # at K = 3 it is close to that Beta: 20,000 draws cannot tell them apart
        assert sps.kstest(ppv, sps.beta(m * c, (1 - m) * c).cdf).pvalue < 1e-6


def test_rows_equal_cells_when_prevalence_weight_is_the_row_weight():
    """multiclass_rows with prevalence Dirichlet(B, ..., B) and rows Dirichlet(beta) is
    multiclass_cells with alpha_ap = beta_p: precision_k is then Beta(beta_k,
    (K - 1) beta_k) a priori and Beta(beta_k + C_kk, sum_{a != k} beta_k + C_ak) a
    posteriori, accuracy Beta(B, (K - 1) B) a priori."""
    beta = np.array([2.0, 0.5, 1.0, 1.5])
    b_sum = beta.sum()
    rows = bcm.models.multiclass_rows(_cm(), priors={"prevalence": Dirichlet([b_sum] * 4),
                                                     "rows": Dirichlet(beta)})
    prior, post = _draws(rows, "prior"), _draws(rows, "posterior")
    cells_alpha = np.tile(beta, (4, 1))
    _is_beta(prior["acc"], b_sum, 3 * b_sum)
    _is_beta(post["acc"], np.trace(cells_alpha + COUNTS),
             (cells_alpha + COUNTS).sum() - np.trace(cells_alpha + COUNTS))
    for k in range(4):
        _is_beta(prior["ppv"][:, k], beta[k], 3 * beta[k])
        col = cells_alpha[:, k] + COUNTS[:, k]
        _is_beta(post["ppv"][:, k], col[k], col.sum() - col[k])


# -- K = 2 ------------------------------------------------------------------------------
def test_k2_prior_parameters_map_exactly():
    """rows at K = 2: prevalence Dirichlet(a1, a2) is Beta(a1, a2), rows Dirichlet(b1, b2)
    is tpr ~ Beta(b1, b2) and tnr ~ Beta(b2, b1); cells: alpha in the order (pos|pos,
    pos|neg, neg|pos, neg|neg) is dirichlet_multinomial's (tp, fn, fp, tn)."""
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("pos", "neg"))

    def conj(model):
        return bcm.models.family_of(model).conjugate(model, bcm.models.spec_of(model))

    rows = conj(bcm.models.multiclass_rows(mc, priors={"prevalence": Dirichlet((2, 0.5)),
                                                       "rows": Dirichlet((3, 1.5))}))
    three = conj(bcm.models.three_beta(cm, priors={"prevalence": Beta(2, 0.5),
                                                   "tpr": Beta(3, 1.5), "tnr": Beta(1.5, 3)}))
    np.testing.assert_array_equal(rows.dirichlets["prevalence"][0], np.ravel(
        three.betas["prevalence"]))
    np.testing.assert_array_equal(rows.dirichlets["rows"][0, 0], np.ravel(three.betas["tpr"]))
    np.testing.assert_array_equal(rows.dirichlets["rows"][0, 1, ::-1],
                                  np.ravel(three.betas["tnr"]))
    alpha = (0.5, 2, 1, 3)
    cells = conj(bcm.models.multiclass_cells(mc, priors={"theta": Dirichlet(alpha)}))
    dm = conj(bcm.models.dirichlet_multinomial(cm, priors={"theta": Dirichlet(alpha)}))
    np.testing.assert_array_equal(cells.dirichlets["cells"], dm.dirichlets["theta"])


def test_rows_card_examples():
    """The card's numbers: the cat/dog/bird posterior under the default Dirichlet(2/3)
    (and the flat prior's accuracy), the pull at K = 10 under the default, the flat and
    the Dirichlet(1/K) row prior, and a fixed prevalence leaving the rows alone."""
    mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
                                       labels=["cat", "dog", "bird"])
    d = _draws(bcm.models.multiclass_rows(mc), "posterior")
    for k, (a, b) in enumerate([(17 / 3, 7 / 3), (23 / 3, 13 / 3), (29 / 3, 13 / 3)]):
        _is_beta(d["tpr"][:, k], a, b)
    for k, mean in enumerate((0.222, 0.356, 0.422)):
        _mean_is(d["prevalence"][:, k], mean, rounding=0.0005)
    _mean_is(d["acc"], 0.676, rounding=0.0005)
    flat3 = {"prevalence": Dirichlet.flat(3), "rows": Dirichlet.flat(3)}
    _mean_is(_draws(bcm.models.multiclass_rows(mc, priors=flat3), "posterior")["acc"], 0.648,
             rounding=0.0005)
    k, labels = 10, [f"c{i}" for i in range(10)]
    counts = np.diag(np.full(k, 18))
    counts[np.arange(k), (np.arange(k) + 1) % k] = 2
    cm = _cm(counts, labels)
    default = _draws(bcm.models.multiclass_rows(cm), "posterior")
    _is_beta(default["tpr"][:, 4], 18.2, 3.8)
    for key in ("ba", "acc"):
        _mean_is(default[key], 18.2 / 22)
    flat = _draws(bcm.models.multiclass_rows(cm, priors={"prevalence": Dirichlet.flat(k),
                                                         "rows": Dirichlet.flat(k)}),
                  "posterior")
    _is_beta(flat["tpr"][:, 4], 19, 11)
    for key in ("ba", "acc"):
        _mean_is(flat[key], 19 / 30)
    light = bcm.models.multiclass_rows(cm, priors={"rows": Dirichlet([1 / k] * k)})
    _mean_is(_draws(light, "posterior")["tpr"][:, 4], 18.1 / 21)

    def rows_posterior(model):
        return bcm.models.family_of(model).conjugate(model, bcm.models.spec_of(model)
                                                     ).dirichlets["rows"]

    np.testing.assert_array_equal(
        rows_posterior(bcm.models.multiclass_rows(mc, prevalence=[0.5, 0.25, 0.25])),
        rows_posterior(bcm.models.multiclass_rows(mc)))


def test_cells_card_examples():
    """cat/dog/bird under the default 4/9 per cell: accuracy Beta(67/3, 29/3) (mean 0.698,
    central 95 % interval [0.531, 0.841]), cat's recall Beta(49/9, 17/9) (mean 0.742) and
    precision Beta(49/9, 26/9) (mean 0.653); the flat prior's Beta(24, 13) (mean 0.649);
    a normalised row is Dirichlet(alpha's row) and uncorrelated with the prevalence."""
    mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
                                       labels=["cat", "dog", "bird"])
    d = _draws(bcm.models.multiclass_cells(mc), "posterior")
    _is_beta(d["acc"], 67 / 3, 29 / 3)
    lo, hi = sps.beta(67 / 3, 29 / 3).interval(0.95)
    assert round(lo, 3) == 0.531 and round(hi, 3) == 0.841
    assert round(67 / 96, 3) == 0.698
    _is_beta(d["tpr"][:, 0], 49 / 9, 17 / 9)
    _is_beta(d["ppv"][:, 0], 49 / 9, 26 / 9)
    assert round(49 / 66, 3) == 0.742 and round(49 / 75, 3) == 0.653
    flat = _draws(bcm.models.multiclass_cells(mc, priors={"theta": Dirichlet.flat(9)}),
                  "posterior")
    _is_beta(flat["acc"], 24, 13)
    assert round(24 / 37, 3) == 0.649
    alpha = np.random.default_rng(2).uniform(0.3, 3, (4, 4))
    prior = _draws(bcm.models.multiclass_cells(_cm(), priors={"theta": Dirichlet(
        alpha.ravel())}), "prior")
    pi = prior["theta"].sum(-1)
    rows = prior["theta"] / pi[..., None]
    _is_beta(rows[:, 1, 3], alpha[1, 3], alpha[1].sum() - alpha[1, 3])
    # a correlation of independent variables has standard error 1 / sqrt(n)
    assert abs(np.corrcoef(rows[:, 1, 1], pi[:, 1])[0, 1]) < Z / np.sqrt(pi.shape[0])


@pytest.mark.parametrize("family", ["multiclass_rows", "multiclass_cells"])
def test_card_code_runs_and_links_resolve(family):
    """Every python block of the card runs (in order, one namespace) and every relative
    link points at a file of the repository (the JAGS twin shipped in the package)."""
    card = pathlib.Path(__file__).resolve().parents[2] / "models" / family / "README.md"
    text = card.read_text()
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(compile(block, str(card), "exec"), namespace)
    # the card's accuracy under the default: rows mean 0.676 (sd 0.079), cells 0.698 (sd
    # 0.080): 4,000 draws have standard error 0.0013; plus half a unit of the third digit
    mean = {"multiclass_rows": 0.676, "multiclass_cells": 0.698}[family]
    assert float(namespace["idata"].posterior["acc"].mean()) == pytest.approx(
        mean, abs=Z * 0.0013 + 0.0005)
    links = re.findall(r"\]\((\.\./[^)]+)\)", text)
    assert f"../../bayescm/models/{family}/{family}.jags" in links
    for link in links:
        assert (card.parent / link).resolve().is_file(), link
