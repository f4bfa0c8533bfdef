"""Sample-size planning for benchmark items: the design-effect formulas against
simulated benchmarks (``simulate_items``) and against bayescm's own intervals."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

import bayescm as bcm
from bayescm.analysis.items_simulate import cluster_scale
from bayescm.analysis.sample_size import ItemsDesign, ItemsPlan, sample_size, sample_size_rule
from bayescm.models.items.quadrature import NODES, WEIGHTS, accuracy_of, alpha_of

Z95 = stats.norm.ppf(0.975)
ITEM, INTER = 1.5, 0.5  # simulate_items' default item spread and interaction


def _truth(acc, icc):
    """Exact moments of simulate_items' design by quadrature (independent of the module):
    per model the run correlation rho_r = Var(p_i)/(p q) and cluster correlation; for two
    models the correlation of their item probabilities and the cluster covariance of the
    difference."""
    acc = np.atleast_1d(acc)
    rest = math.hypot(ITEM, INTER)
    sc = cluster_scale(float(acc.mean()), icc, rest)
    s = math.hypot(sc, rest)
    a = alpha_of(acc, np.full(acc.size, s))
    v = acc * (1 - acc)
    rho_r = np.array([(expit(ai + s * NODES) ** 2) @ WEIGHTS - p**2
                      for ai, p in zip(a, acc, strict=True)]) / v
    by_cluster = np.array([accuracy_of(ai + sc * NODES, np.full(NODES.size, rest)) for ai in a])
    rho_c = ((by_cluster - acc[:, None]) ** 2 @ WEIGHTS) / v
    out = {"v": v, "rho_r": rho_r, "rho_c": rho_c}
    if acc.size == 2:
        shared = math.hypot(sc, ITEM)
        g = [accuracy_of(ai + shared * NODES, np.full(NODES.size, INTER)) for ai in a]
        out["cov_ab"] = float((g[0] * g[1]) @ WEIGHTS - acc[0] * acc[1])
        h = by_cluster[0] - by_cluster[1]
        out["cov_d_cluster"] = float(((h - h @ WEIGHTS) ** 2) @ WEIGHTS)
    return out


def _chunks(df, n_items, reps, value):
    """simulate_items' one long benchmark cut into `reps` benchmarks of `n_items`
    consecutive items (whole clusters): independent draws of the same design."""
    table = df.pivot_table(index="item", columns="model", values="correct", aggfunc="mean")
    return table[value].to_numpy()[: reps * n_items].reshape(reps, n_items) if isinstance(
        value, str) else table.to_numpy()[: reps * n_items].reshape(reps, n_items, -1)


def test_width_plan_is_the_closed_form_and_reduces_to_the_rule_without_clusters():
    plan = sample_size(0.1, items={"accuracy": 0.7, "icc": 0.1, "cluster_size": 5})
    assert isinstance(plan, ItemsPlan) and plan.goal == "width"
    # N = (2 z)^2 p q (1 + (m - 1) rho) / w^2, computed by hand
    n = (2 * Z95) ** 2 * 0.21 * (1 + 4 * 0.1) / 0.01
    assert plan.n_required == math.ceil(n) == 452
    assert plan.n_clusters == math.ceil(452 / 5) and plan.n_independent == 323
    # no clusters, one run: the binary normal rule of Tötsch & Hoffmann at p = 0.7
    flat = sample_size(0.05, items=ItemsDesign(accuracy=0.7), hdi_prob=0.9)
    assert flat.n_required == math.ceil(sample_size_rule(0.05, p=0.7, hdi_prob=0.9))
    assert flat.n_required == flat.n_independent
    # runs: f(r) = rho_r + (1 - rho_r) / r in place of 1
    runs = sample_size(0.1, items=ItemsDesign(accuracy=0.7, icc=0.1, cluster_size=5, runs=3,
                                              run_icc=0.4))
    assert runs.design.design_effect() == pytest.approx(0.4 + 0.6 / 3 + 0.4)
    assert runs.n_required == math.ceil((2 * Z95) ** 2 * 0.21 * 1.0 / 0.01)
    assert runs.curve.loc[1, "n_items"] == plan.n_required
    assert list(runs.curve.index) == [1, 2, 3, 5, 10]
    assert runs.curve["n_items"].is_monotonic_decreasing
    assert runs.curve["answers"].is_monotonic_increasing  # more runs: more answers in all
    assert runs.width(runs.n_required) <= 0.1 < runs.width(runs.n_required - 1)
    assert "452 items" in repr(plan) and "<table>" in plan._repr_html_()


def test_width_plan_matches_bayescm_exact_beta_interval():
    # one model, independent items answered once: bayescm's posterior is exactly
    # Beta(1 + k, 1 + N - k), of variance close to p q / (N + 3): at the planned N and
    # k = p N its HDI is the planned width times sqrt(N / (N + 3)), up to rounding k and
    # the Beta's skew (relative O(1/N): 1% allowed at N >= 97), so never wider than planned
    for acc, width in ((0.7, 0.1), (0.9, 0.05), (0.5, 0.2)):
        plan = sample_size(width, items={"accuracy": acc})
        n = plan.n_required
        k = round(acc * n)
        lo, hi = bcm.analysis.beta_hdi(1 + k, 1 + n - k)
        assert float(hi - lo) == pytest.approx(plan.width(n) * math.sqrt(n / (n + 3)), rel=0.01)
        assert float(hi - lo) <= width
    # the same through bcm.fit's exact sampler on a data set with those counts: HDI of
    # 20,000 draws, whose bounds have MC error about 0.001
    plan = sample_size(0.1, items={"accuracy": 0.7})
    n = plan.n_required
    df = pd.DataFrame({"item": range(n), "model": "m",
                       "correct": (np.arange(n) < round(0.7 * n)).astype(int)})
    table = bcm.analysis.benchmark_intervals(bcm.ItemResults.from_frame(df), random_seed=1)
    got = float(table.loc["m", "bayes_upper"] - table.loc["m", "bayes_lower"])
    assert got == pytest.approx(0.1, abs=0.004)


def test_variance_of_a_clustered_benchmark_with_runs_matches_simulation():
    n_items, reps, m, runs, icc = 100, 2000, 5, 3, 0.2
    df = bcm.analysis.simulate_items(n_items * reps, 0.7, icc=icc, cluster_size=m, runs=runs,
                                     rng=11)
    means = _chunks(df, n_items, reps, "model_0").mean(axis=1)
    t = _truth(0.7, icc)
    design = ItemsDesign(accuracy=0.7, icc=float(t["rho_c"][0]), cluster_size=m, runs=runs,
                         run_icc=float(t["rho_r"][0]))
    assert design.icc == pytest.approx(icc, abs=1e-6)  # simulate_items' definition of icc
    planned = 0.21 * design.design_effect() / n_items
    # the sample variance of R independent, nearly normal means has relative s.e.
    # sqrt(2 / (R - 1)) = 0.032: 4 s.e. = 13%
    assert means.var(ddof=1) == pytest.approx(planned, rel=4 * math.sqrt(2 / (reps - 1)))
    # the naive p q / N is far off (design effect 1.0 + 0.4 = ~1.6 here)
    assert means.var(ddof=1) > 1.3 * 0.21 / n_items
    # a pilot of the same design gives back the correlations (moment estimates from
    # 2,000 clusters: s.e. about 0.02)
    pilot = bcm.ItemResults.from_frame(df.iloc[: 3 * 10_000], cluster="cluster", run="run")
    est = ItemsDesign.from_results(pilot)
    assert est.runs == runs and est.cluster_size == m
    assert est.icc == pytest.approx(design.icc, abs=0.06)
    assert est.run_icc == pytest.approx(design.run_icc, abs=0.06)


def test_paired_difference_variance_and_power_match_simulation():
    acc, delta, m, icc = (0.66, 0.74), 0.08, 4, 0.15
    t = _truth(acc, icc)
    v = t["v"]
    design = ItemsDesign(accuracy=0.7, icc=float(t["rho_c"].mean()), cluster_size=m, runs=1,
                         run_icc=float(t["rho_r"].mean()),
                         correlation=t["cov_ab"] / math.sqrt(v[0] * v[1]),
                         difference_icc=t["cov_d_cluster"] / (v.sum() - 2 * t["cov_ab"]))
    plan = sample_size(items=design, difference=delta, power=0.8, alpha=0.05)
    assert plan.goal == "difference"
    n = plan.n_required - plan.n_required % m  # whole clusters
    reps = 1500
    df = bcm.analysis.simulate_items(n * reps, list(acc), icc=icc, cluster_size=m, rng=5)
    scores = _chunks(df, n, reps, None)
    d = scores[..., 1] - scores[..., 0]
    planned = design.difference_variance(delta) / n
    # relative s.e. of a sample variance of R means: sqrt(2 / (R - 1)) = 0.037; 4 s.e.
    assert d.mean(axis=1).var(ddof=1) == pytest.approx(planned, rel=4 * math.sqrt(2 / reps))
    # power: the share of benchmarks whose clustered-SE z-test (Miller 2024) declares B
    # better at two-sided 5%; binomial s.e. sqrt(0.8 * 0.2 / R) = 0.010, plus the
    # normal approximation and the clustered SE's own noise (n / m ~ 110 clusters): 0.04
    cl = np.arange(n) // m
    resid = d - d.mean(axis=1, keepdims=True)
    se = np.sqrt((np.stack([resid[:, cl == c].sum(axis=1) for c in range(n // m)]) ** 2
                  ).sum(axis=0)) / n
    power = float(np.mean(d.mean(axis=1) / se > Z95))
    assert power == pytest.approx(plan.power_at(n), abs=0.04)
    assert plan.power_at(plan.n_required) >= 0.8 > plan.power_at(plan.n_required - 1)
    # pairing matters: independent models (correlation 0) need more items
    unpaired = sample_size(items={**_fields(design), "correlation": 0.0}, difference=delta)
    assert unpaired.n_required > 1.5 * plan.n_required


def _fields(design):
    return {k: getattr(design, k) for k in ("accuracy", "icc", "cluster_size", "runs",
                                            "run_icc", "correlation", "difference_icc")}


def test_a_pilot_results_object_plans_directly():
    df = bcm.analysis.simulate_items(400, [0.6, 0.8], icc=0.2, cluster_size=4, runs=2, rng=3)
    pilot = bcm.ItemResults.from_frame(df, cluster="cluster", run="run")
    plan = sample_size(0.08, pilot=pilot)
    design = ItemsDesign.from_results(pilot)
    assert plan.design == design and plan.design.runs == 2
    assert plan.n_required == sample_size(0.08, items=design).n_required
    pair = ItemsDesign.from_results(pilot, models=["model_0", "model_1"])
    assert 0 < pair.correlation < 1 and pair.difference_icc is not None


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"items": {"accuracy": 0.7}}, "target_width"),
    ({"target_width": 0.1, "items": {"accuracy": 0.7}, "difference": 0.05}, "one of them"),
    ({"target_width": 0.1, "items": {"accuracy": 1.2}}, "accuracy"),
    ({"target_width": 0.1, "items": {"accuracy": 0.7, "runs": 3}}, "run_icc"),
    ({"target_width": 0.1, "items": {"icc": 0.3, "run_icc": 0.2}}, "cannot be below"),
    ({"target_width": 0.1, "items": {"cluster_size": 0}}, "cluster_size"),
    ({"target_width": 0.1, "items": {"rho": 0.1}}, "Unknown"),
    ({"items": {"accuracy": 0.7}, "difference": 0.0}, "non-zero"),
    ({"items": {"accuracy": 0.97}, "difference": 0.1}, "lie in"),
    ({"items": {"accuracy": 0.7}, "difference": 0.05, "power": 1.0}, "power"),
    ({"items": {"accuracy": 0.7, "correlation": 1.0}, "difference": 0.05}, "correlation 1"),
    ({"target_width": 0.1, "items": {"cluster_size": float("inf")}}, "finite number >= 1"),
    ({"items": {"correlation": 0.6, "run_icc": 0.3}, "difference": 0.05},
     r"correlation \(0.6\) cannot exceed run_icc \(0.3\)"),
])
def test_bad_plans_get_plain_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sample_size(**kwargs)


def test_a_pilot_of_models_that_scored_alike_cannot_plan_a_comparison():
    """Identical pilot scores give a correlation of 1: it planned 2 items to detect a
    difference of 0.05.  Refused with the fix; a width plan from the same pilot stands."""
    s = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1]
    pilot = bcm.ItemResults.from_frame(pd.DataFrame(
        {"item": list(range(10)) * 2, "model": ["a"] * 10 + ["b"] * 10, "correct": s + s}))
    with pytest.raises(ValueError, match="score alike on every item"):
        sample_size(items=pilot, difference=0.05)
    # the pilot's accuracy is 0.7 (independent items, one run): the design's width plan
    assert sample_size(0.1, items=pilot).n_required == \
        sample_size(0.1, items={"accuracy": 0.7}).n_required


def test_a_pilot_with_runs_plans_a_comparison_at_every_number_of_runs():
    """Two runs per item: the models' item-score correlation (0.60) came out above the
    runs' (0.24), and the plan's curve failed at ten runs, where the difference's
    variance (v_A + v_B) f(r) - 2 rho sqrt(v_A v_B) went negative.  Two models' scores
    covary only through the item, so rho <= rho_r: the pilot's estimate is clipped."""
    pilot = bcm.ItemResults([[2, 2, 0, 1], [1, 1, 0, 0]], [[2] * 4] * 2, models=["a", "b"])
    design = ItemsDesign.from_results(pilot)
    assert design.correlation == design.run_icc == pytest.approx(0.2444444444)
    plan = sample_size(items=pilot, difference=0.05)
    assert list(plan.curve.index) == [1, 2, 3, 5, 10]
    assert (plan.curve["n_items"] > 0).all() and plan.n_required == plan.curve.loc[2, "n_items"]


def test_a_pilot_too_small_to_estimate_gets_a_plain_error():
    """One item: the variances had no degrees of freedom (NumPy's warnings), then the
    error named an icc the user never gave."""
    for clusters in (None, ["x"]):
        pilot = bcm.ItemResults([[1], [1]], [[2], [2]], models=["a", "b"], clusters=clusters)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match=r"A pilot of 1 item\(s\).* at least 2 items"):
                sample_size(0.1, items=pilot)


def test_items_must_be_a_design():
    with pytest.raises(TypeError, match="ItemsDesign"):
        sample_size(0.1, items=[0.7])
