"""summary, metric_uncertainty and deception on multiclass fits and matrices.

Every number is checked against an independent computation: exact Beta marginals
(scipy), scikit-learn's plug-in values, or a brute-force Monte Carlo of the conjugate
posterior drawn here with NumPy.
"""

import functools

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

import bayescm as bcm
from bayescm.stats import beta_hdi_any

LABELS = ["cat", "dog", "bird"]
K = len(LABELS)
# the default priors: multiclass_rows Dirichlet(2/K) on the class mix and every row,
# multiclass_cells Dirichlet(4/K^2) on every cell
ROW, CELL = 2 / K, 4 / K**2
# two classifiers, K = 3; "zero" never predicts "bird" (a zero column: undefined ppv)
COUNTS = np.array([[[20, 4, 1], [3, 15, 2], [2, 5, 18]],
                   [[12, 6, 0], [5, 9, 0], [4, 3, 0]]])
DRAWS, CHAINS = 4000, 4
N = DRAWS * CHAINS


@functools.cache
def batch() -> bcm.MulticlassConfusionMatrix:
    return bcm.MulticlassConfusionMatrix(COUNTS, labels=LABELS, classifier=["good", "zero"])


@functools.cache
def fitted(builder: str):
    model = getattr(bcm.models, builder)(batch())
    return bcm.fit(model, sampler="exact", draws=DRAWS, chains=CHAINS, random_seed=7)


def _hdi_ends(a: float, b: float, hdi_prob: float = 0.95, n: int = N
              ) -> list[tuple[float, float]]:
    """The exact HDI of Beta(a, b) (``beta_hdi_any``) and a tolerance for each end of
    the HDI of n i.i.d. draws: 5 times the standard error of a sample quantile at the
    end's tail mass q, sqrt(q(1-q)/n) / f(end) (q = (1 - hdi_prob)/2 for a unimodal
    density; 1 - hdi_prob for the one free end of a density unbounded at 0, a < 1, whose
    HDI starts at 0: there the sampled window starts among the smallest draws, below
    the quantile 20/n with probability 1 - e^-20)."""
    dist = stats.beta(a, b)
    lo, hi = (float(x) for x in beta_hdi_any(a, b, hdi_prob=hdi_prob))
    if a >= 1 and b >= 1:
        q = (1 - hdi_prob) / 2
        return [(end, 5 * np.sqrt(q * (1 - q) / n) / dist.pdf(end)) for end in (lo, hi)]
    assert a < 1 <= b  # the cases below
    q = 1 - hdi_prob
    return [(lo, float(dist.ppf(20 / n))), (hi, 5 * np.sqrt(q * (1 - q) / n) / dist.pdf(hi))]


def _check_beta(row, a: float, b: float, hdi_prob: float = 0.95, n: int = N) -> None:
    """Summary row against Beta(a, b), tolerances from Monte Carlo error of N i.i.d. draws.

    mean: 4 standard errors sd/sqrt(N); sd: 4 standard errors of a sample sd,
    sd/sqrt(2(N-1)) (near-normal draws; for a < 1 the sample variance's own standard
    error sqrt((m4 - var^2)/N)); HDI ends: :func:`_hdi_ends`, the HDI's window choice
    adding less than that spread (ArviZ's estimator).
    """
    dist = stats.beta(a, b)
    sd = dist.std()
    assert row["mean"] == pytest.approx(dist.mean(), abs=4 * sd / np.sqrt(n))
    m4 = dist.expect(lambda t: (t - dist.mean()) ** 4)
    assert row["sd"] ** 2 == pytest.approx(dist.var(), abs=4 * np.sqrt((m4 - dist.var() ** 2)
                                                                       / n))
    for got, (end, tol) in zip((row["hdi_lower"], row["hdi_upper"]),
                               _hdi_ends(a, b, hdi_prob, n), strict=True):
        assert got == pytest.approx(end, abs=tol)


def test_cells_accuracy_is_beta_and_index_convention():
    table = bcm.summary(fitted("multiclass_cells"))
    assert list(table.index.names) == ["classifier", "class", "metric"]
    k = len(LABELS)
    # Dirichlet(4/K^2 + C) over the K^2 cells: accuracy ~ Beta(K 4/K^2 + trace,
    # (K^2 - K) 4/K^2 + N - trace)
    for i, name in enumerate(["good", "zero"]):
        c = COUNTS[i]
        _check_beta(table.loc[(name, "", "acc")], k * CELL + np.trace(c),
                    (k * k - k) * CELL + c.sum() - np.trace(c))
        rows = table.loc[name]
        overall = rows.loc[""].index
        # every metric without a class appears once, under class "", before the classes
        assert overall.is_unique and "acc" in overall and "f1_macro" in overall
        assert list(rows.index.get_level_values("class").unique()) == ["", *LABELS]
        for label in LABELS:
            assert "acc" not in rows.loc[label].index
            assert "tpr" in rows.loc[label].index
    reg = bcm.metrics.registry_for(fitted("multiclass_cells"))
    per_class = [m for m in reg.names() if reg.per_class(m)]
    assert len(table) == 2 * (len(reg.names()) - len(per_class) + k * len(per_class))


def test_rows_recall_is_beta_per_class_and_prevalence_is_not_a_parameter():
    idata = fitted("multiclass_rows")
    table = bcm.summary(idata, metrics=["recall", "prevalence"])
    assert list(table.index.names) == ["classifier", "class", "metric"]
    assert set(table.index.get_level_values("class")) == set(LABELS)
    k = len(LABELS)
    for i, name in enumerate(["good", "zero"]):
        for a, label in enumerate(LABELS):
            row = COUNTS[i, a]
            # Dirichlet(2/K + C_a.) row: recall ~ Beta(2/K + C_aa, (K - 1) 2/K + r_a - C_aa)
            # ("zero" never predicts bird: Beta(2/3, 25/3), unbounded at 0)
            _check_beta(table.loc[(name, label, "tpr")], ROW + row[a],
                        (k - 1) * ROW + row.sum() - row[a])
    # the per-class metric prevalence is the model's parameter on dim actual: exactly
    # Beta(2/K + r_a, K 2/K + N - 2/K - r_a); the summary's mean (exact, or of the draws)
    # and the parameter draws' mean both within 4 standard errors sd/sqrt(N) of its mean
    prevalence = idata.posterior["prevalence"].mean(("chain", "draw"))
    got = table.xs("prevalence", level="metric")["mean"]
    for (name, label), value in got.items():
        r, a = COUNTS[["good", "zero"].index(name)].sum(axis=1), LABELS.index(label)
        dist = stats.beta(ROW + r[a], k * ROW + r.sum() - ROW - r[a])
        for mean in (value, float(prevalence.sel(classifier=name, actual=label))):
            assert mean == pytest.approx(dist.mean(), abs=4 * dist.std() / np.sqrt(N))
    # no parameter's draws are broadcast into the table
    full = bcm.summary(idata)
    assert not {"rows", "theta"} & set(full.index.get_level_values("metric"))
    assert (full.xs("acc", level="metric").index.get_level_values("class") == "").all()


def test_overall_only_request_has_no_class_level_and_aliases_resolve():
    idata = fitted("multiclass_cells")
    table = bcm.summary(idata, metrics=["f1_macro", "cohen_kappa", "f1_micro"],
                        classifiers="zero", hdi_prob=0.9)
    assert list(table.index.names) == ["classifier", "metric"]
    assert list(table.index) == [("zero", "f1_macro"), ("zero", "kappa"), ("zero", "acc")]
    assert table.attrs["hdi_prob"] == 0.9
    # same draws, same estimator: summary's numbers are the draws' own
    kappa = idata.posterior["kappa"].sel(classifier="zero").values.ravel()
    assert table.loc[("zero", "kappa"), "mean"] == pytest.approx(kappa.mean(), rel=1e-6)
    lo, hi = bcm.stats.hdi(kappa, 0.9)
    assert table.loc[("zero", "kappa"), "hdi_lower"] == pytest.approx(float(lo))
    assert table.loc[("zero", "kappa"), "hdi_upper"] == pytest.approx(float(hi))
    with pytest.raises(KeyError, match="Unknown multiclass metric"):
        bcm.summary(idata, metrics=["acc_macro"])


def _labels(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """y_true, y_pred reproducing a K x K table."""
    pairs = [(a, p) for a in range(counts.shape[0]) for p in range(counts.shape[1])
             for _ in range(counts[a, p])]
    y = np.array(pairs)
    return y[:, 0], y[:, 1]


@pytest.mark.parametrize("name", ["good", "zero"])
def test_plug_in_equals_scikit_learn(name):
    table = bcm.summary(fitted("multiclass_rows"), classifiers=name)
    y_true, y_pred = _labels(COUNTS[["good", "zero"].index(name)])
    labels = list(range(len(LABELS)))
    prec, rec, f1, _ = skm.precision_recall_fscore_support(
        y_true, y_pred, labels=labels, zero_division=np.nan)
    for key, ref in (("ppv", prec), ("tpr", rec), ("f1", f1)):
        got = table.xs(key, level="metric")["plug_in"].to_numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-12)  # NaN where sklearn has NaN
    if name == "zero":  # "bird" is never predicted: its precision is undefined
        assert np.isnan(table.loc[(name, "bird", "ppv"), "plug_in"])
    overall = table.xs((name, ""), level=("classifier", "class"))["plug_in"]
    assert overall["acc"] == pytest.approx(skm.accuracy_score(y_true, y_pred))
    assert overall["ba"] == pytest.approx(skm.balanced_accuracy_score(y_true, y_pred))
    assert overall["kappa"] == pytest.approx(skm.cohen_kappa_score(y_true, y_pred))
    assert overall["mcc"] == pytest.approx(skm.matthews_corrcoef(y_true, y_pred))
    for avg in ("macro", "weighted"):
        p, r, f, _ = skm.precision_recall_fscore_support(
            y_true, y_pred, labels=labels, average=avg, zero_division=np.nan)
        assert overall[f"ppv_{avg}"] == pytest.approx(p)
        # macro recall is ba, prevalence-weighted recall is acc (aliases, not twins)
        assert overall["ba" if avg == "macro" else "acc"] == pytest.approx(r)
        assert overall[f"f1_{avg}"] == pytest.approx(f)


def test_predictive_group_counts_undefined_from_the_replicated_tables():
    idata = fitted("multiclass_cells")
    table = bcm.summary(idata, group="posterior_predictive", metrics=["ppv", "acc"])
    assert "undefined" in table.columns
    counts = idata.posterior_predictive["counts"].sel(classifier="zero")
    n = COUNTS[1].sum()
    # accuracy of each replicated table, computed here from its diagonal
    acc = (counts.values[..., [0, 1, 2], [0, 1, 2]].sum(-1) / n).ravel()
    assert table.loc[("zero", "", "acc"), "mean"] == pytest.approx(acc.mean(), rel=1e-6)
    assert table.loc[("zero", "", "acc"), "undefined"] == 0
    # ppv of "bird" is undefined exactly in the replicates that never predict "bird"
    never = (counts.sel(predicted="bird").sum("actual").values == 0).mean()
    assert never > 0
    assert table.loc[("zero", "bird", "ppv"), "undefined"] == pytest.approx(never)


def test_metric_uncertainty_multiclass():
    mc = batch()
    mu = bcm.analysis.metric_uncertainty(mc, "recall", random_seed=3, draws=20_000)
    assert list(mu.index.names) == ["classifier", "class"]
    k = len(LABELS)
    for i, name in enumerate(["good", "zero"]):
        for a, label in enumerate(LABELS):
            row = COUNTS[i, a]
            a_, b_ = ROW + row[a], (k - 1) * ROW + row.sum() - row[a]
            # width error: both ends' errors (_hdi_ends), n = 20,000
            (lo, tol_lo), (hi, tol_hi) = _hdi_ends(a_, b_, n=20_000)
            assert mu.loc[(name, label), "mu"] == pytest.approx(hi - lo, abs=tol_lo + tol_hi)
    idata = fitted("multiclass_cells")
    fit_mu = bcm.analysis.metric_uncertainty(idata, "f1_macro")
    table = bcm.summary(idata, metrics=["f1_macro"])
    np.testing.assert_allclose(fit_mu["mu"].to_numpy(), table["hdi_width"].to_numpy())


# brute force: the formulas written out here, on Dirichlet draws made here
def _kappa_bm(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r, c = theta.sum(-1), theta.sum(-2)
    diag = np.diagonal(theta, axis1=-2, axis2=-1)
    chance = (r * c).sum(-1)
    kappa = (diag.sum(-1) - chance) / (1 - chance)
    bm_k = (diag - r * c) / (r * (1 - r))  # one-vs-rest informedness, n = 1
    return kappa, (c * bm_k).sum(-1)


def _check_shares(got, x: np.ndarray, rope: float, n_got: int) -> None:
    """Shares of two independent Monte Carlo samples: 5 standard errors of a difference
    of proportions, sqrt(p(1-p)(1/n1 + 1/n2)), plus 1e-3 for p near 0 or 1."""
    for col, ref in (("r_deceptive", (x < -rope).mean()), ("r_informative", (x > rope).mean()),
                     ("p_uninformative", (np.abs(x) <= rope).mean())):
        se = np.sqrt(ref * (1 - ref) * (1 / n_got + 1 / x.size))
        assert got[col] == pytest.approx(ref, abs=5 * se + 1e-3), col


@pytest.mark.parametrize("metric", ["bm", "kappa"])
def test_deception_multiclass_matrix_against_brute_force(metric):
    # a classifier that mostly swaps "dog" and "bird": near or below chance
    counts = np.array([[5, 2, 3], [3, 2, 6], [2, 7, 3]])
    mc = bcm.MulticlassConfusionMatrix(counts, labels=LABELS)
    rope = 0.05
    got = bcm.analysis.deception(mc, rope=rope, metric=metric, draws=20_000,
                                 random_seed=5).loc["cm"]
    assert got[["r_informative", "r_deceptive", "p_uninformative", "undefined"]].sum() \
        == pytest.approx(1)
    rng = np.random.default_rng(12345)
    # the default multiclass_rows posterior: Dirichlet(2/K + counts) class mix and rows
    pi = rng.dirichlet(ROW + counts.sum(1), size=40_000)
    rows = np.stack([rng.dirichlet(ROW + counts[a], size=40_000) for a in range(3)], axis=1)
    kappa, bm = _kappa_bm(pi[:, :, None] * rows)
    x = bm if metric == "bm" else kappa
    assert 0.2 < (x < -rope).mean() < 0.8  # a case where the split matters
    _check_shares(got, x, rope, 20_000)


def test_deception_multiclass_fit_against_brute_force():
    idata = fitted("multiclass_cells")
    got = bcm.analysis.deception(idata, rope=0.3, metric="kappa").loc["zero"]
    rng = np.random.default_rng(99)
    theta = rng.dirichlet(CELL + COUNTS[1].ravel(), size=40_000).reshape(-1, 3, 3)
    kappa, _ = _kappa_bm(theta)
    _check_shares(got, kappa, 0.3, N)
    with pytest.raises(ValueError, match="0 at chance"):
        bcm.analysis.deception(idata, metric="f1_macro")


def test_deception_binary_unchanged():
    cm = bcm.ConfusionMatrix(tp=28, fn=9, fp=4, tn=3)
    exact = bcm.analysis.deception(cm, rope=0.1).loc["cm"]
    # exact: P(TPR + TNR - 1 < -rope) with TPR ~ Beta(29, 10), TNR ~ Beta(4, 5)
    tpr, tnr = stats.beta(29, 10), stats.beta(4, 5)
    x = np.linspace(0, 1, 200_001)
    below = np.trapezoid(tpr.pdf(x) * tnr.cdf(1 - 0.1 - x), x)
    assert exact["r_deceptive"] == pytest.approx(below, abs=1e-6)
    # kappa of a binary matrix: shares of exact draws
    k = bcm.analysis.deception(cm, metric="kappa", random_seed=1)
    assert k.loc["cm"].sum() == pytest.approx(1)
