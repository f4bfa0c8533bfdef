"""The conjugate paths on a real dask.distributed cluster give the in-memory numbers.

Every unit draws from its own child of ``SeedSequence(random_seed)`` (and every
leaderboard draw chunk from its own), so the same seed must give bit-identical
results whether chunks run here or on the cluster's workers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayescm as bcm
from tests.test_summary_exact import MULTI


def _sliced() -> bcm.ConfusionMatrix:
    rng = np.random.default_rng(11)
    n = 3000
    y = rng.integers(0, 2, n)
    site = rng.choice(["a", "b", "c", "d"], n)
    sex = rng.choice(["F", "M"], n)
    hit = rng.random(n) < np.where(site == "d", 0.6, 0.85)
    p = np.where(hit, y, 1 - y)
    return bcm.ConfusionMatrix.from_predictions(y, p, groups={"site": site, "sex": sex})


SLICED = _sliced()


def test_summary_exact_on_an_embedded_cluster() -> None:
    from distributed import Client

    with pytest.raises(ValueError):
        Client.current()  # no client is active here: "dask" starts (and closes) its own
    here = bcm.summary_exact(SLICED, metrics=["tpr", "mcc"], draws=200, random_seed=9)
    there = bcm.summary_exact(SLICED, metrics=["tpr", "mcc"], draws=200, random_seed=9,
                              chunk=2, scheduler="dask")
    pd.testing.assert_frame_equal(there, here, check_exact=True)
    with pytest.raises(ValueError, match="scheduler must be"):
        bcm.summary_exact(SLICED, scheduler="processes")


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    # threads, not processes: the cluster starts in ~0.1 s instead of ~7 s
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        yield c


@pytest.mark.parametrize("data", [SLICED, MULTI], ids=["sliced", "multiclass"])
def test_summary_exact_on_a_cluster_equals_in_memory(client, data) -> None:
    from distributed import get_task_stream

    here = bcm.summary_exact(data, draws=400, random_seed=4, chunk=3)
    with get_task_stream(client) as tasks:
        there = bcm.summary_exact(data, draws=400, random_seed=4, chunk=1, scheduler=client)
    pd.testing.assert_frame_equal(there, here, check_exact=True)
    if len(data) > 2:
        assert len({t["worker"] for t in tasks.data}) == 2  # both workers drew
    # "dask" takes the active client
    pd.testing.assert_frame_equal(
        bcm.summary_exact(data, draws=400, random_seed=4, chunk=2, scheduler="dask"), here,
        check_exact=True)


@pytest.mark.parametrize("data", [SLICED, MULTI], ids=["sliced", "multiclass"])
def test_lazy_exact_posterior_computes_to_the_eager_draws(client, data) -> None:
    eager = bcm.exact_posterior(data, draws=300, chains=2, random_seed=6)
    lazy = bcm.exact_posterior(data, draws=300, chains=2, random_seed=6, chunk=3)
    post = lazy.posterior.to_dataset()
    unit = data.unit if isinstance(data, bcm.ConfusionMatrix) else "classifier"
    for name, var in post.data_vars.items():  # every variable, metrics included, is lazy
        assert var.chunks is not None, name
        assert var.chunks[var.dims.index(unit)] == tuple(
            min(3, len(data) - s) for s in range(0, len(data), 3)), name
    computed = post.compute()  # on the active client's workers
    xr.testing.assert_identical(computed, eager.posterior.to_dataset())
    assert bcm.summary(lazy).equals(bcm.summary(eager))


def test_lazy_exact_posterior_has_the_closed_form_marginals(client) -> None:
    draws = bcm.exact_posterior(SLICED, draws=1000, chains=2, metrics=["tpr"], random_seed=3,
                                chunk=2).posterior["tpr"].compute()
    tp, fn = SLICED.cell("tp"), SLICED.cell("fn")
    a, b = 1.0 + tp, 1.0 + fn  # flat-prior three-Beta: tpr ~ Beta(1 + tp, 1 + fn)
    mean = a / (a + b)
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    got = draws.mean(("chain", "draw")).values
    # 2,000 i.i.d. draws per slice: the sample mean's standard error is sd / sqrt(2000);
    # 5 of them for each of 8 slices (two-sided 5.7e-7 each)
    assert np.all(np.abs(got - mean) <= 5 * sd / np.sqrt(2000))


def test_lazy_calls_that_differ_only_in_settings_do_not_share_blocks(client) -> None:
    # xarray names map_blocks keys after the input and kwargs, not the function: the
    # same positions with other chains, metrics or data must still get their own keys
    # (the cluster keeps the first call's blocks while the second is submitted)
    swapped = np.stack([SLICED.cell(c) for c in ("fn", "tp", "tn", "fp")], axis=1)
    other = bcm.ConfusionMatrix.from_slices(swapped, SLICED.slices)
    calls = [(SLICED, 2, ["tpr"]), (SLICED, 4, ["tpr"]), (SLICED, 4, ["mcc"]), (other, 4, ["mcc"])]
    lazy = [bcm.exact_posterior(d, draws=50, chains=c, metrics=m, random_seed=1, chunk=3)
            for d, c, m in calls]
    kept = [x.posterior.to_dataset().persist() for x in lazy]  # all in the cluster at once
    for (data, chains, metrics), got in zip(calls, kept, strict=True):
        want = bcm.exact_posterior(data, draws=50, chains=chains, metrics=metrics,
                                   random_seed=1)
        xr.testing.assert_identical(got.compute(), want.posterior.to_dataset())


def _same_board(a, b) -> None:
    pd.testing.assert_frame_equal(a.summary, b.summary, check_exact=True)
    pd.testing.assert_frame_equal(a.rank_probabilities, b.rank_probabilities, check_exact=True)


@pytest.mark.parametrize("data, metric, options", [
    (SLICED, "acc", {"chunk": 700}), (SLICED, "tpr", {"prizes": [3, 1], "chunk": 1000}),
    (MULTI, "f1_macro", {"chunk": 500})], ids=["sliced-acc", "sliced-tpr", "multiclass"])
def test_leaderboard_on_a_cluster_equals_in_memory(client, data, metric, options) -> None:
    from distributed import get_task_stream

    here = bcm.analysis.leaderboard(data, metric, draws=3000, random_seed=2, **options)
    with get_task_stream(client) as tasks:
        there = bcm.analysis.leaderboard(data, metric, draws=3000, random_seed=2,
                                         scheduler=client, **options)
    _same_board(there, here)
    assert len({t["worker"] for t in tasks.data}) == 2
    # and against the rank counts of the draws themselves, by brute force: the
    # probabilities of each rank sum to one over submissions, and p_best of the
    # submission with the highest mean exceeds that of the lowest
    probs = there.rank_probabilities.to_numpy()
    np.testing.assert_allclose(probs.sum(axis=0), 1.0, rtol=1e-12)
    assert there.summary["p_best"].iloc[0] >= there.summary["p_best"].iloc[-1]


def test_leaderboard_of_lazy_exact_draws_on_a_cluster(client) -> None:
    lazy = bcm.exact_posterior(SLICED, draws=500, metrics=["mcc"], random_seed=1, chunk=3)
    eager = bcm.exact_posterior(SLICED, draws=500, metrics=["mcc"], random_seed=1)
    here = bcm.analysis.leaderboard(eager, "mcc", random_seed=3, chunk=300)
    _same_board(bcm.analysis.leaderboard(lazy, "mcc", random_seed=3, chunk=300,
                                         scheduler=client), here)
    # brute force: rank every joint draw by hand (no ties among continuous draws)
    values = eager.posterior["mcc"].transpose("chain", "draw", "slice").values.reshape(-1, 8)
    ranks = (-values).argsort(axis=1).argsort(axis=1) + 1
    expected = pd.Series(ranks.mean(axis=0), index=list(SLICED.classifiers))
    np.testing.assert_allclose(here.summary["expected_rank"],
                               expected[here.summary.index], rtol=0, atol=1e-12)


def test_matrices_travel_to_workers_intact() -> None:
    import pickle

    for data in (SLICED, MULTI):
        back = pickle.loads(pickle.dumps(data))
        assert back == data and back.classifiers == data.classifiers
    assert SLICED.slices.equals(pickle.loads(pickle.dumps(SLICED)).slices)


def _same_disparity(got, want, *, exact_values: bool) -> None:
    """Equal draws; sums over slices added per block on Dask differ from one sum over
    every slice in the last bits only: 1e-12 relative is ~10^4 float64 roundings."""
    if exact_values:  # every slice its own group: values and gaps are the same arithmetic
        xr.testing.assert_identical(got.values, want.values)
        for name in ("gap", "tpr_gap", "fpr_gap", "equalized_odds", "demographic_parity"):
            xr.testing.assert_identical(got.draws[name], want.draws[name])
    xr.testing.assert_allclose(got.draws, want.draws, rtol=1e-12, atol=1e-15)
    xr.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-15)
    pd.testing.assert_frame_equal(got.to_frame(), want.to_frame(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("by, reference", [(None, "rest"), (None, "best"), ("site", "rest"),
                                           ("sex", "sex=F")])
def test_disparity_of_lazy_exact_draws_on_a_cluster(client, by, reference) -> None:
    from distributed import get_task_stream

    eager = bcm.exact_posterior(SLICED, draws=300, chains=2, metrics=["tpr"], random_seed=6)
    lazy = bcm.exact_posterior(SLICED, draws=300, chains=2, metrics=["tpr"], random_seed=6,
                               chunk=3)
    here = bcm.analysis.disparity(eager, "ppv", by=by, reference=reference)
    with get_task_stream(client) as tasks:
        there = bcm.analysis.disparity(lazy, "ppv", by=by, reference=reference,
                                       scheduler=client)
    assert len({t["worker"] for t in tasks.data}) == 2  # blocks of slices on both workers
    _same_disparity(there, here, exact_values=by is None)
    # a NumPy posterior sent to the cluster, and a lazy one on the active client
    _same_disparity(bcm.analysis.disparity(eager, "ppv", by=by, reference=reference,
                                           scheduler="dask"), here, exact_values=by is None)
    _same_disparity(bcm.analysis.disparity(lazy, "ppv", by=by, reference=reference), here,
                    exact_values=by is None)


def test_alerts_of_lazy_exact_draws_on_a_cluster(client) -> None:
    rng = np.random.default_rng(3)
    t = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 42, 2000), "D")
    y = rng.random(2000) < 0.4
    site = rng.choice(["a", "b"], 2000)
    pred = np.where(y, rng.random(2000) < 0.85, rng.random(2000) < 0.1)
    cm = bcm.ConfusionMatrix.from_predictions(y, pred, groups={"site": site}, time=t,
                                              window="7D")
    eager = bcm.exact_posterior(cm, draws=200, metrics=["tpr"], random_seed=2)
    lazy = bcm.exact_posterior(cm, draws=200, metrics=["tpr"], random_seed=2, chunk=4)
    here = bcm.analysis.alerts(eager, "tpr", threshold=0.85)
    there = bcm.analysis.alerts(lazy, "tpr", threshold=0.85, scheduler=client)
    # windows pool two sites summed per block on Dask: equal to rounding (see above)
    pd.testing.assert_frame_equal(there.table, here.table, rtol=1e-12, atol=1e-15)


def test_chunks_share_the_memory_of_one_process(client) -> None:
    # the fixture's two workers are threads of this process: summary_exact's default
    # chunk is halved so that the two chunks running at once fit its 256 MB together
    from bayescm.scheduling import tasks_per_process

    assert tasks_per_process(None) == 1
    assert tasks_per_process(client) == sum(client.nthreads().values()) == 2
