"""Priors from expert statements (issue 13 item 6): each helper meets its statement."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import special, stats

import bayescm as bcm
from bayescm.inference import persist
from bayescm.priors import Beta, Dirichlet, PriorError, elicitation

STATEMENTS = [  # (mode, side, bound, prob): the brief's three BetaBuster-style statements
    (0.9, "lower", 0.8, 0.95),
    (0.5, "upper", 0.7, 0.95),
    (0.99, "lower", 0.9, 0.95),
    (0.2, "upper", 0.5, 0.99),
    (1.0, "lower", 0.9, 0.95),  # mode at the edge: Beta(a, 1)
    (0.0, "upper", 0.1, 0.9),  # Beta(1, b)
]


def _prob(a: float, b: float, side: str, bound: float) -> float:
    d = stats.beta(a, b)
    return float(d.sf(bound) if side == "lower" else d.cdf(bound))


def _brute_force(mode: float, side: str, bound: float, prob: float) -> float:
    """The concentration c = a + b - 2 by scanning a fine log grid (no root finder):
    the grid point where P(beyond bound) crosses prob, refined by linear interpolation."""
    c = np.logspace(-3, 5, 400_001)  # step 4.6e-5 in log c
    a, b = 1 + mode * c, 1 + (1 - mode) * c
    p = special.betaincc(a, b, bound) if side == "lower" else special.betainc(a, b, bound)
    i = np.flatnonzero(np.diff(np.sign(p - prob)))
    assert i.size == 1  # one crossing: the statement has one answer
    i = int(i[0])
    t = (prob - p[i]) / (p[i + 1] - p[i])
    return float(np.exp(np.log(c[i]) + t * (np.log(c[i + 1]) - np.log(c[i]))))


@pytest.mark.parametrize(("mode", "side", "bound", "prob"), STATEMENTS)
def test_elicit_beta_meets_the_statement(mode, side, bound, prob):
    p = bcm.priors.elicit_beta(mode=mode, prob=prob, **{side: bound})
    assert isinstance(p, Beta)
    assert _prob(p.alpha, p.beta, side, bound) == pytest.approx(prob, abs=1e-8)
    c = p.alpha + p.beta - 2
    assert (p.alpha - 1) / c == pytest.approx(mode, abs=1e-12)  # the mode, to rounding
    assert p.alpha >= 1 and p.beta >= 1
    # The grid's log-step is 4.6e-5 and P is smooth in log c, so linear interpolation is
    # good to ~ (step)^2 relative; 1e-6 relative leaves a wide margin.
    assert c == pytest.approx(_brute_force(mode, side, bound, prob), rel=1e-6)
    assert p.elicited == f"elicit_beta(mode={mode!r}, {side}={bound!r}, prob={prob!r})"


def test_elicit_beta_symmetry_and_monotonicity():
    """Reflecting the statement (X -> 1 - X) swaps a and b; being surer sharpens it."""
    p = bcm.priors.elicit_beta(mode=0.9, lower=0.8, prob=0.95)
    q = bcm.priors.elicit_beta(mode=0.1, upper=0.2, prob=0.95)
    assert (q.alpha, q.beta) == pytest.approx((p.beta, p.alpha), rel=1e-12)
    surer = bcm.priors.elicit_beta(mode=0.9, lower=0.8, prob=0.99)
    assert surer.alpha + surer.beta > p.alpha + p.beta
    assert bcm.priors.elicit_beta(mode=0.9, lower=0.8) == p  # prob=0.95 by default


@settings(max_examples=200, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mode=st.floats(0, 1), bound=st.floats(0.001, 0.999), prob=st.floats(0.001, 0.999),
       side=st.sampled_from(["lower", "upper"]))
def test_elicit_beta_meets_any_statement_a_beta_can_meet(mode, bound, prob, side):
    """Issue 13: every elicited Beta meets its statement to 1e-6; the statements no Beta
    with that mode meets (prob outside [flat, all mass at the mode]) get bayescm's error."""
    beyond_mode = bound < mode if side == "lower" else bound > mode
    flat = 1 - bound if side == "lower" else bound
    limit = 1.0 if beyond_mode else 0.5 if bound == mode else 0.0
    inside = min(flat, limit) + 1e-9 < prob < max(flat, limit) - 1e-9
    try:
        p = bcm.priors.elicit_beta(mode=mode, prob=prob, **{side: bound})
    except PriorError:
        # refused: outside the range, or so near its ends that a + b would pass 1e12 or
        # fall under 2 + 1e-9
        assert (not inside or abs(bound - mode) < 1e-3 or abs(prob - limit) < 1e-3
                or abs(prob - flat) < 1e-6)
        return
    assert inside or abs(prob - flat) < 1e-9  # at the flat end: a nearly flat Beta
    assert _prob(p.alpha, p.beta, side, bound) == pytest.approx(prob, abs=1e-6)
    assert (p.alpha - 1) / (p.alpha + p.beta - 2) == pytest.approx(mode, abs=1e-9)


def test_a_statement_too_sharp_for_any_beta_is_refused():
    with pytest.raises(PriorError, match="sharper than"):
        bcm.priors.elicit_beta(mode=0.5, lower=0.5 - 1e-9, prob=0.99)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"mode": 0.9, "lower": 0.95, "prob": 0.95}, "between 0.05 .flat. and 0 "),
    ({"mode": 0.9, "lower": 0.8, "prob": 0.1}, "between 0.2 .flat. and 1 "),
    ({"mode": 0.5, "lower": 0.5, "prob": 0.6}, "No Beta meets"),
    ({"mode": 0.9, "upper": 0.95, "prob": 0.5}, "between 0.95 .flat. and 1"),
    ({"mode": 0.9, "lower": 0.8, "prob": 1.0}, "strictly between 0 and 1"),
    ({"mode": 0.9, "lower": 0.8, "prob": 0.0}, "strictly between 0 and 1"),
    ({"mode": 1.2, "lower": 0.8}, r"in \[0, 1\]"),
    ({"mode": 0.9, "lower": 1.0}, "lower must lie strictly"),
    ({"mode": 0.9}, "exactly one bound"),
    ({"mode": 0.9, "lower": 0.8, "upper": 0.95}, "exactly one bound"),
    ({"mode": "0.9", "lower": 0.8}, "mode must be a number"),
    ({"mode": float("nan"), "lower": 0.8}, "finite"),
])
def test_elicit_beta_refuses_statements_no_beta_meets(kwargs, match):
    with pytest.raises(PriorError, match=match):
        bcm.priors.elicit_beta(**kwargs)


def test_beta_pert_on_the_unit_interval():
    p = bcm.priors.beta_pert(0, 0.9, 1)
    assert (p.alpha, p.beta) == pytest.approx((4.6, 1.4), abs=1e-12)
    d = stats.beta(p.alpha, p.beta)
    assert d.mean() == pytest.approx((0 + 4 * 0.9 + 1) / 6, abs=1e-12)  # PERT's mean
    grid = np.linspace(0, 1, 100_001)
    assert grid[np.argmax(d.pdf(grid))] == pytest.approx(0.9, abs=1e-5)  # its mode
    wide = bcm.priors.beta_pert(0, 0.3, 1, lam=10)
    assert (wide.alpha, wide.beta) == pytest.approx((4.0, 8.0), abs=1e-12)
    assert wide.elicited == "beta_pert(0.0, 0.3, 1.0, lam=10.0)"
    assert p.elicited == "beta_pert(0.0, 0.9, 1.0)"


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((0.7, 0.9, 0.98), {}, r"rules out every value outside.*elicit_beta\(mode=0.9, lower=0.7"),
    ((0, 0.1, 0.4), {}, r"elicit_beta\(mode=0.1, upper=0.4"),
    ((0, 1.2, 1), {}, "minimum <= mode <= maximum"),
    ((0.5, 0.5, 0.5), {}, "minimum < maximum"),
    ((0, 0.5, 1), {"lam": 0}, "lam must be > 0"),
])
def test_beta_pert_refuses_what_no_rate_prior_can_say(args, kwargs, match):
    with pytest.raises(PriorError, match=match):
        bcm.priors.beta_pert(*args, **kwargs)


def test_beta_and_dirichlet_from_mean():
    p = bcm.priors.beta_from_mean(0.85, 40)
    assert (p.alpha, p.beta) == pytest.approx((34.0, 6.0), abs=1e-12)
    assert stats.beta(p.alpha, p.beta).mean() == pytest.approx(0.85, abs=1e-12)
    mean = np.array([0.3, 0.05, 0.1, 0.55])
    d = bcm.priors.dirichlet_from_mean(mean, 20)
    assert isinstance(d, Dirichlet)
    np.testing.assert_allclose(d.alpha, 20 * mean, atol=1e-12)
    np.testing.assert_allclose(stats.dirichlet(d.alpha).mean(), mean, atol=1e-12)
    rows = bcm.priors.dirichlet_from_mean([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]],
                                          10)
    np.testing.assert_allclose(rows.alpha, [[7, 2, 1], [1, 8, 1], [2, 2, 6]], atol=1e-12)
    assert bcm.priors.coerce(d, kind="dirichlet", name="theta") is d  # kept, note and all


def test_dirichlet_from_a_labelled_frame_keeps_labels():
    import pandas as pd

    frame = pd.DataFrame([[0.9, 0.1], [0.2, 0.8]], index=["dog", "cat"], columns=["cat", "dog"])
    d = bcm.priors.dirichlet_from_mean(frame, 5)
    assert d.labels == ("dog", "cat")
    # columns reordered to the index: row dog = (dog 0.1, cat 0.9) * 5
    np.testing.assert_allclose(d.alpha, [[0.5, 4.5], [4.0, 1.0]], atol=1e-12)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: bcm.priors.dirichlet_from_mean([0.5, 0.6], 10), "sum to 1"),
    (lambda: bcm.priors.dirichlet_from_mean([3, 1], 10), "Divide by the sum"),
    (lambda: bcm.priors.dirichlet_from_mean([1.0, 0.0], 10), "> 0"),
    (lambda: bcm.priors.dirichlet_from_mean([0.5, 0.5], 0), "weight"),
    (lambda: bcm.priors.dirichlet_from_mean([1.0], 10), "K >= 2"),
    (lambda: bcm.priors.dirichlet_from_mean(["a", "b"], 10), "must be numbers"),
    (lambda: bcm.priors.beta_from_mean(1.0, 10), "strictly between 0 and 1"),
    (lambda: bcm.priors.beta_from_mean(0.5, -1), "weight"),
    (lambda: Dirichlet.flat(1), "k >= 2"),
    (lambda: Dirichlet.perks(2.5), "k >= 2"),
    (lambda: Dirichlet.jeffreys(True), "k >= 2"),
])
def test_from_mean_and_presets_refuse_bad_input(call, match):
    with pytest.raises(PriorError, match=match):
        call()


def test_dirichlet_presets():
    assert Dirichlet.flat(4) == Dirichlet((1, 1, 1, 1))
    assert Dirichlet.jeffreys(3) == Dirichlet((0.5, 0.5, 0.5))
    assert Dirichlet.perks(5) == Dirichlet((0.2,) * 5)
    assert sum(Dirichlet.perks(7).alpha) == pytest.approx(1.0, abs=1e-12)
    assert Dirichlet.jeffreys(np.int64(2)).elicited == "Dirichlet.jeffreys(2)"


def test_elicited_is_a_note_not_part_of_identity():
    p = bcm.priors.elicit_beta(mode=0.9, lower=0.8)
    plain = Beta(p.alpha, p.beta)
    assert p == plain and hash(p) == hash(plain) and repr(p) == repr(plain)
    assert plain.elicited is None
    assert elicitation.describe(p) == f"{p!r} from elicit_beta(mode=0.9, lower=0.8, prob=0.95)"
    assert bcm.priors.describe(plain) == repr(plain)
    names = {"elicit_beta", "beta_pert", "beta_from_mean", "dirichlet_from_mean", "describe"}
    assert names <= set(dir(bcm.priors)) and names <= set(bcm.priors.__all__)
    assert bcm.priors.elicit_beta is elicitation.elicit_beta
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bcm.priors.nope  # noqa: B018


def test_import_bayescm_does_not_load_the_root_finder():
    code = ("import sys, bayescm as bcm; bcm.priors.defaults('three_beta'); "
            "print('scipy.optimize' in sys.modules, 'bayescm.priors.elicitation' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_fit_with_an_elicited_prior_is_the_conjugate_posterior_and_round_trips(tmp_path):
    cm = bcm.ConfusionMatrix(tp=40, fn=8, fp=5, tn=47)
    prior = bcm.priors.elicit_beta(mode=0.9, lower=0.8)
    model = bcm.models.three_beta(cm, priors={"tpr": prior})
    idata = bcm.fit(model, sampler="exact", draws=2000, chains=2, random_seed=3)
    draws = idata.posterior["tpr"].values.ravel()
    post = stats.beta(prior.alpha + 40, prior.beta + 8)  # Beta(a + tp, b + fn)
    # 4000 independent exact draws: the mean's standard error is sd / sqrt(4000); 5 of them
    # is a false alarm rate of 6e-7; a KS p-value below 1e-4 would reject the law itself.
    assert draws.mean() == pytest.approx(post.mean(), abs=5 * post.std() / np.sqrt(draws.size))
    assert stats.kstest(draws, post.cdf).pvalue > 1e-4
    assert list(json.loads(idata.attrs["priors"])["tpr"].values()) == [repr(prior)]
    record = json.loads(idata.attrs["model_spec"])["priors"]["tpr"]
    (unit,) = record.values()
    assert unit["elicited"] == "elicit_beta(mode=0.9, lower=0.8, prob=0.95)"
    assert unit["params"] == [prior.alpha, prior.beta]
    path = bcm.save(idata, tmp_path / "fit.nc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = bcm.load(path)
    again = bcm.rebuild(back)
    spec = bcm.models.spec_of(again)
    (used,) = spec.priors["tpr"]
    assert used == prior and used.elicited == prior.elicited
    refit = bcm.fit(again, sampler="exact", draws=2000, chains=2, random_seed=3)
    np.testing.assert_array_equal(refit.posterior["tpr"].values, idata.posterior["tpr"].values)
    # a prior without a statement writes the record it always wrote
    plain = persist.encode_spec(bcm.models.family_of(model),
                                bcm.models.spec_of(bcm.models.three_beta(cm)))
    assert "elicited" not in plain
