"""Property-based tests (hypothesis) over the public entry points.

Random valid inputs give finite results with the documented invariants
(probabilities in [0, 1], HDIs ordered and containing the median, pmfs and rank
tables summing to 1); random invalid inputs give bayescm's own errors with a message
-- never a raw NumPy, pandas, xarray or PyTensor exception -- and nothing hangs: every
call runs under a time bound.

Each property runs under two profiles: ``fast`` in the default suite (a few examples,
derandomised, so the suite is deterministic) and ``slow`` under ``-m slow`` (many
random examples).
"""

from __future__ import annotations

import io
import json
import math
import os
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import bayescm as bcm
from bayescm import cli, exact, intervals
from bayescm.data.agreement import pattern_matrix, patterns
from bayescm.models.hui_walter.model import IdentifiabilityError

from .timebound import time_bound

BOUND = 60  # seconds for one call: generous on a loaded 2-core machine; a hang fails
_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                      HealthCheck.data_too_large])
# fast: no shrinking (one example costs up to a second; shrinking could take minutes)
PROFILES = {"fast": settings(max_examples=8, derandomize=True, **_COMMON,
                             phases=(Phase.explicit, Phase.reuse, Phase.generate)),
            "slow": settings(max_examples=150, **_COMMON)}
OWN = (bcm.CountsError, bcm.PriorError, IdentifiabilityError, bcm.ConvergenceError)
PACKAGE = os.path.dirname(bcm.__file__)


def prop(**strategies):
    """Make ``body`` a property test run under the fast profile and, with -m slow, the slow one."""
    def wrap(body):
        @pytest.mark.parametrize("profile", ["fast", pytest.param("slow", marks=pytest.mark.slow)])
        def test(profile):
            def fresh(**kwargs):
                return body(**kwargs)

            given(**strategies)(PROFILES[profile](fresh))()

        test.__name__ = test.__qualname__ = body.__name__
        test.__doc__ = body.__doc__
        return test
    return wrap


def bounded(call, *args, **kwargs):
    with time_bound(BOUND, getattr(call, "__name__", "the call")), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def assert_own_error(err: BaseException) -> None:
    """bayescm's own error type, or a ValueError/TypeError/KeyError raised in bayescm."""
    assert str(err), f"{type(err).__name__} without a message"
    if isinstance(err, OWN):
        return
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    origin = tb.tb_frame.f_code.co_filename if tb is not None else "?"
    assert isinstance(err, ValueError | TypeError | KeyError) and origin.startswith(PACKAGE), (
        f"{type(err).__module__}.{type(err).__name__} raised in {origin}: {err}")


def rejects(call, *args, **kwargs) -> BaseException:
    """The call raises bayescm's own error (within the time bound)."""
    try:
        bounded(call, *args, **kwargs)
    except Exception as err:  # the point is to inspect any error
        assert_own_error(err)
        return err
    raise AssertionError(f"{getattr(call, '__name__', call)} accepted {args} {kwargs}")


# -- strategies ---------------------------------------------------------------------------
count = st.integers(0, 10**6)
small = st.integers(0, 40)


@st.composite
def cells(draw, value=count):
    c = {k: draw(value) for k in bcm.CELLS}
    if sum(c.values()) == 0:
        c[draw(st.sampled_from(bcm.CELLS))] = 1
    return c


bad_count = st.one_of(
    st.integers(max_value=-1), st.just(math.nan), st.just(math.inf), st.just(-math.inf),
    st.floats(0.01, 1e6).filter(lambda x: x != int(x)), st.booleans(), st.just(np.True_),
    st.text(max_size=3), st.none(), st.just([[1, 2], [3, 4]]), st.just({"a": 1}),
    st.just(2.0**60),
)
prob = st.floats(0.5, 0.99)  # HDI mass: a mass > 1/2 always holds the median
bad_prob = st.one_of(st.floats(allow_nan=True).filter(lambda x: not 0 < x < 1),
                     st.just(math.nan), st.booleans(), st.text(max_size=2), st.none())
beta_param = st.floats(0.2, 60)
bad_prior = st.one_of(
    st.tuples(st.floats(max_value=-0.01), beta_param), st.tuples(beta_param, st.just(math.nan)),
    st.tuples(st.just(math.inf), beta_param), st.tuples(st.just(True), beta_param),
    st.just("beta:x,y"), st.just("gamma"), st.just(42), st.just([1, 2, 3]),
)
RATES = ["prevalence", "tpr", "tnr", "ppv", "npv", "acc", "ba", "f1", "jaccard"]
SIGNED = ["mcc", "bm", "mk", "kappa"]
metric = st.sampled_from(RATES + SIGNED)


def cm_of(c: dict) -> bcm.ConfusionMatrix:
    return bcm.ConfusionMatrix(**c)


# -- constructors -------------------------------------------------------------------------
@prop(c=st.lists(cells(), min_size=1, max_size=4))
def test_confusion_matrix_keeps_valid_counts(c):
    cm = bounded(bcm.ConfusionMatrix, **{k: [x[k] for x in c] for k in bcm.CELLS})
    assert cm.counts.shape == (len(c), 4) and cm.counts.dtype == np.int64
    assert [int(n) for n in cm.n] == [sum(x.values()) for x in c]


@prop(c=cells(), cell=st.sampled_from(bcm.CELLS), bad=bad_count)
def test_confusion_matrix_rejects_invalid_counts(c, cell, bad):
    err = rejects(bcm.ConfusionMatrix, **{**c, cell: bad})
    assert isinstance(err, bcm.CountsError)


@prop(t=st.integers(2, 3), p=st.integers(1, 3), data=st.data())
def test_agreement_table_keeps_valid_counts(t, p, data):
    counts = data.draw(st.lists(st.lists(count, min_size=2**t, max_size=2**t).filter(any),
                                min_size=p, max_size=p))
    tab = bounded(bcm.AgreementTable, counts)
    assert tab.counts.shape == (p, 2**t) and len(tab.classifiers) == t
    np.testing.assert_array_equal(tab.counts, counts)


@prop(width=st.sampled_from([0, 1, 3, 5, 6, 7]), bad=bad_count, data=st.data())
def test_agreement_table_rejects_invalid_counts(width, bad, data):
    good = data.draw(st.lists(count, min_size=4, max_size=4).filter(any))
    assert isinstance(rejects(bcm.AgreementTable, [1] * width), bcm.CountsError)
    assert isinstance(rejects(bcm.AgreementTable, [*good[:3], bad]), bcm.CountsError)
    assert isinstance(rejects(bcm.AgreementTable, [[good]]), bcm.CountsError)


call = st.sampled_from([0, 1, None])


@prop(t=st.integers(1, 3), data=st.data())
def test_agreement_table_from_incomplete_predictions(t, data):
    # any mix of missing results and verified cases: every case is counted once, in a
    # canonical cell, and each block's cell probabilities sum to one
    n = data.draw(st.integers(1, 30))
    preds = [data.draw(st.lists(call, min_size=n, max_size=n)) for _ in range(t)]
    truth = data.draw(st.lists(call, min_size=n, max_size=n))
    if all(v is None for p in preds for v in p) and all(v is None for v in truth):
        assert isinstance(rejects(bcm.AgreementTable.from_predictions, *preds, y_true=truth),
                          bcm.CountsError)
        return
    tab = bounded(bcm.AgreementTable.from_predictions, *preds, y_true=truth, positive=1)
    assert int(tab.counts.sum()) == n and tab.patterns[: 2**t] == patterns(t)
    d = tab.design()
    rng = np.random.default_rng(0)
    se, sp, prev = rng.uniform(0.5, 1, t), rng.uniform(0.5, 1, t), rng.uniform()
    r = pattern_matrix(t)
    prob = (prev * d.pos @ np.prod(np.where(r == 1, se, 1 - se), axis=1)
            + (1 - prev) * d.neg @ np.prod(np.where(r == 1, 1 - sp, sp), axis=1))
    np.testing.assert_allclose(np.bincount(d.block, weights=prob), 1.0, rtol=1e-12)


# -- builders (build only) ----------------------------------------------------------------
@prop(c=cells(), a=beta_param, b=beta_param, builder=st.sampled_from(["three_beta",
                                                                      "dirichlet_multinomial"]))
def test_labelled_builders_build(c, a, b, builder):
    priors = ({"tpr": bcm.priors.Beta(a, b)} if builder == "three_beta"
              else {"theta": bcm.priors.Dirichlet([a, b, a, b])})
    m = bounded(getattr(bcm.models, builder), cm_of(c), priors=priors)
    assert {"counts"} <= {v.name for v in m.observed_RVs}


@prop(c=cells(), bad=bad_prior, builder=st.sampled_from(["three_beta", "dirichlet_multinomial"]))
def test_labelled_builders_reject_bad_priors(c, bad, builder):
    name = "tpr" if builder == "three_beta" else "theta"
    rejects(getattr(bcm.models, builder), cm_of(c), priors={name: bad})
    rejects(getattr(bcm.models, builder), cm_of(c), priors={"no_such_parameter": (1, 1)})


@prop(counts=st.lists(small, min_size=4, max_size=4).filter(any), a=beta_param, b=beta_param,
      dependence=st.booleans())
def test_hui_walter_builds(counts, a, b, dependence):
    tab = bcm.AgreementTable(counts)
    m = bounded(bcm.models.hui_walter, tab, priors={"sensitivity": bcm.priors.Beta(a, b)},
                conditional_dependence=dependence, identifiability="ignore")
    assert {"sensitivity", "specificity", "prevalence"} <= {v.name for v in m.free_RVs}


@prop(counts=st.lists(small, min_size=4, max_size=4).filter(any), bad=bad_prior)
def test_hui_walter_rejects_bad_priors(counts, bad):
    rejects(bcm.models.hui_walter, bcm.AgreementTable(counts), priors={"specificity": bad},
            identifiability="ignore")


@prop(folds=st.lists(cells(small), min_size=2, max_size=5))
def test_folds_builds(folds):
    cms = bcm.ConfusionMatrix(**{k: [x[k] for x in folds] for k in bcm.CELLS})
    m = bounded(bcm.models.folds, cms)
    assert len(m.free_RVs) > 0


@prop(c=cells(), bad=st.one_of(st.integers(), st.text(max_size=3), st.none(), st.floats()))
def test_builders_reject_what_is_not_data(c, bad):
    for builder in (bcm.models.three_beta, bcm.models.dirichlet_multinomial,
                    bcm.models.hui_walter, bcm.models.folds):
        rejects(builder, bad)


# -- fit (exact) and summary --------------------------------------------------------------
def check_summary(table) -> None:
    assert np.isfinite(table[["mean", "median", "hdi_lower", "hdi_upper"]]).all().all()
    assert (table["hdi_lower"] <= table["median"]).all()
    assert (table["median"] <= table["hdi_upper"]).all()
    keys = table.index.get_level_values("metric")
    rates = table[keys.isin(RATES)]
    assert ((rates["hdi_lower"] >= 0) & (rates["hdi_upper"] <= 1)).all()
    signed = table[keys.isin(SIGNED)]
    assert ((signed["hdi_lower"] >= -1) & (signed["hdi_upper"] <= 1)).all()


@prop(c=cells(), builder=st.sampled_from(["three_beta", "dirichlet_multinomial"]),
      draws=st.integers(4, 300), chains=st.integers(1, 3), hdi_prob=prob,
      seed=st.integers(0, 2**31 - 1))
def test_exact_fit_and_summary(c, builder, draws, chains, hdi_prob, seed):
    model = getattr(bcm.models, builder)(cm_of(c))
    idata = bounded(bcm.fit, model, sampler="exact", draws=draws, chains=chains,
                    random_seed=seed)
    assert idata.posterior.sizes == {"chain": chains, "draw": draws, "classifier": 1, "cell": 4}
    theta = idata.posterior["theta"]
    assert bool(((theta >= 0) & (theta <= 1)).all())
    np.testing.assert_allclose(theta.sum("cell"), 1, rtol=1e-5)
    check_summary(bounded(bcm.summary, idata, metrics=RATES + SIGNED, hdi_prob=hdi_prob))


@prop(c=cells(), draws=st.one_of(st.integers(max_value=3), st.floats(), st.booleans(),
                                 st.text(max_size=2)),
      sampler=st.sampled_from(["exact", "nuts"]))
def test_fit_rejects_bad_arguments(c, draws, sampler):
    model = bcm.models.three_beta(cm_of(c))
    rejects(bcm.fit, model, draws=draws, sampler=sampler)
    rejects(bcm.fit, model, chains=draws, sampler=sampler)
    rejects(bcm.fit, model, sampler="nope")
    rejects(bcm.fit, "not a model")


@prop(c=cells(), hdi_prob=bad_prob, metrics=st.sampled_from(["nope", ["tpr", 3], ""]))
def test_summary_rejects_bad_arguments(c, hdi_prob, metrics):
    idata = bounded(bcm.fit, bcm.models.three_beta(cm_of(c)), sampler="exact", draws=20,
                    chains=2, random_seed=1)
    rejects(bcm.summary, idata, hdi_prob=hdi_prob)
    rejects(bcm.summary, idata, metrics=metrics)
    rejects(bcm.summary, idata, group="nope")


# -- analysis given a ConfusionMatrix -----------------------------------------------------
@prop(c=cells(), m=metric, hdi_prob=prob, rope=st.floats(0, 0.5), seed=st.integers(0, 99))
def test_analysis_of_a_confusion_matrix(c, m, hdi_prob, rope, seed):
    cm = cm_of(c)
    mu = bounded(bcm.analysis.metric_uncertainty, cm, m, hdi_prob, draws=2000, random_seed=seed)
    row = mu.iloc[0]
    assert 0 <= row["undefined"] <= 1
    if row["undefined"] < 1:
        assert row["hdi_lower"] <= row["hdi_upper"] and row["mu"] >= 0
    dec = bounded(bcm.analysis.deception, cm, rope)
    assert ((dec >= 0) & (dec <= 1 + 1e-9)).all().all()
    np.testing.assert_allclose(dec.sum(axis=1), 1.0, atol=1e-6)


@prop(a=cells(), b=cells(), m=metric, margin=st.floats(0, 0.3), seed=st.integers(0, 99))
def test_compare_gives_a_probability(a, b, m, margin, seed):
    res = bounded(bcm.analysis.compare, cm_of(a), cm_of(b), m, margin, draws=2000,
                  random_seed=seed)
    assert 0 <= res.probability <= 1


@prop(c=st.lists(cells(small), min_size=2, max_size=6), m=metric, seed=st.integers(0, 99))
def test_leaderboard_rank_tables_sum_to_one(c, m, seed):
    cms = bcm.ConfusionMatrix(**{k: [x[k] for x in c] for k in bcm.CELLS})
    board = bounded(bcm.analysis.leaderboard, cms, m, draws=400, random_seed=seed)
    ranks = board.rank_probabilities
    assert ranks.shape == (len(c), len(c))
    np.testing.assert_allclose(ranks.sum(axis=0), 1.0, atol=1e-6)
    np.testing.assert_allclose(ranks.sum(axis=1), 1.0, atol=1e-6)
    assert ((board.summary["p_best"] >= 0) & (board.summary["p_best"] <= 1)).all()


@prop(mu=st.floats(0.001, 0.99), hdi_prob=st.floats(0.01, 0.999), p=st.floats(0.01, 0.99))
def test_sample_size_rule_is_finite_and_positive(mu, hdi_prob, p):
    n = bounded(bcm.analysis.sample_size_rule, mu, hdi_prob=hdi_prob, p=p)
    assert np.isfinite(n) and n > 0


@prop(c=cells(), hdi_prob=bad_prob, rope=st.one_of(st.floats(max_value=-1e-9), st.just(math.nan),
                                                  st.text(max_size=2), st.none(), st.booleans()),
      mu=st.one_of(st.floats(max_value=0), st.just(math.nan), st.text(max_size=2), st.none()))
def test_analysis_rejects_bad_arguments(c, hdi_prob, rope, mu):
    cm = cm_of(c)
    rejects(bcm.analysis.metric_uncertainty, cm, "tpr", hdi_prob, draws=100)
    rejects(bcm.analysis.metric_uncertainty, cm, "no_such_metric", draws=100)
    rejects(bcm.analysis.deception, cm, rope)
    rejects(bcm.analysis.compare, cm, cm, "tpr", hdi_prob=hdi_prob, draws=100)
    rejects(bcm.analysis.leaderboard, cm, "tpr", draws=100)  # one submission: nothing to rank
    rejects(bcm.analysis.sample_size_rule, mu)


# -- exact pmfs and intervals -------------------------------------------------------------
@prop(c=cells(), n_pos=st.integers(0, 25), n_neg=st.integers(0, 25), m=metric,
      model=st.sampled_from(["beta_binomial", "binomial"]))
def test_exact_pmfs_sum_to_one(c, n_pos, n_neg, m, model):
    cm = cm_of(c)
    impossible = (n_pos + n_neg == 0 or (model == "binomial" and (
        (n_pos and c["tp"] + c["fn"] == 0) or (n_neg and c["tn"] + c["fp"] == 0))))
    if impossible:
        rejects(exact.predictive_pmf, cm, n_pos, n_neg, model=model)
        return
    pmf = bounded(exact.predictive_pmf, cm, n_pos, n_neg, model=model)
    assert bool((pmf >= 0).all()) and bool(np.isfinite(pmf).all())
    np.testing.assert_allclose(pmf.sum(("tp", "tn")), 1.0, atol=1e-9)
    table = bounded(exact.metric_pmf, cm, m, n_pos, n_neg, model=model)
    p = table["probability"]
    assert ((p >= 0) & (p <= 1 + 1e-12)).all()
    np.testing.assert_allclose(p.sum(), 1.0, atol=1e-9)


@prop(c=cells(), n_pos=st.one_of(st.integers(max_value=-1), st.floats(0.1, 10).filter(
    lambda x: x != int(x)), st.just(math.nan), st.booleans(), st.text(max_size=2)))
def test_exact_pmfs_reject_bad_sizes(c, n_pos):
    rejects(exact.predictive_pmf, cm_of(c), n_pos, 5)
    rejects(exact.metric_pmf, cm_of(c), "mcc", n_pos, 5)
    rejects(exact.predictive_pmf, {"tp": 1}, 5, 5)


@prop(n=st.integers(1, 10**6), data=st.data(), method=st.sampled_from(intervals.METHODS),
      hdi_prob=st.floats(0.5, 0.999))
def test_binomial_intervals_are_ordered_in_unit_interval(n, data, method, hdi_prob):
    k = data.draw(st.integers(0, n))
    lo, hi = bounded(intervals.binomial, k, n, method=method, hdi_prob=hdi_prob)
    lo, hi = float(np.squeeze(lo)), float(np.squeeze(hi))
    assert 0 <= lo <= hi <= 1


@prop(k=bad_count.filter(lambda x: not isinstance(x, list)), hdi_prob=bad_prob,
      method=st.text(max_size=4))
def test_binomial_intervals_reject_bad_input(k, hdi_prob, method):
    rejects(intervals.binomial, k, 10)
    rejects(intervals.binomial, 11, 10)
    rejects(intervals.binomial, 3, 10, hdi_prob=hdi_prob)
    rejects(intervals.binomial, 3, 10, method=method)


# -- the command line ---------------------------------------------------------------------
def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = bounded(cli.main, argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


@prop(c=cells(), draws=st.integers(4, 200), hdi_prob=prob, seed=st.integers(0, 99))
def test_cli_summarize(c, draws, hdi_prob, seed):
    argv = ["summarize", *(x for k in bcm.CELLS for x in (f"--{k}", str(c[k]))),
            "--draws", str(draws), "--hdi-prob", str(hdi_prob), "--seed", str(seed), "--json"]
    code, out, _ = run_cli(argv)
    assert code == 0
    result = json.loads(out)
    for key in ("tpr", "tnr", "acc"):
        row = result["metrics"][key]
        assert 0 <= row["hdi_lower"] <= row["median"] <= row["hdi_upper"] <= 1


@prop(c=cells(), cell=st.sampled_from(bcm.CELLS),
      bad=st.sampled_from(["-1", "2.5", "nan", "inf", "x", "", "1e300", "True"]),
      hdi=st.sampled_from(["0", "1", "-0.5", "nan", "2"]))
def test_cli_rejects_bad_input_with_a_message(c, cell, bad, hdi):
    args = {k: str(v) for k, v in c.items()}
    for argv in (["summarize", *(x for k in bcm.CELLS
                                 for x in (f"--{k}", bad if k == cell else args[k]))],
                 ["summarize", *(x for k in bcm.CELLS for x in (f"--{k}", args[k])),
                  "--hdi-prob", hdi],
                 ["unlabeled", "--counts", f"++={bad},+-=1,-+=1,--=1"]):
        code, _, err = run_cli(argv)
        assert code == 2 and "error" in err, (argv, err)
