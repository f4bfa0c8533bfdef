"""Sliced confusion matrices (issue 14 item 1): counting, labels, errors, downstream.

Counts are checked against a brute-force loop over the cases; window starts against
pandas' own ``Grouper``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayescm as bcm
from bayescm.data.confusion import CELLS, CountsError


def _cases(n: int = 400, seed: int = 3) -> pd.DataFrame:
    """Random cases: 2 factors, times over 5 weeks; one (sex, age) pair never occurs
    and one week has no positive case (so the brute force meets both)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    age = rng.choice(["<40", "40-60", "60+"], n)
    age[(sex == "M") & (age == "60+")] = "<40"  # an empty intersection
    day = rng.integers(0, 35, n)
    day[(day >= 14) & (day < 21)] += 7  # week 3 (days 14-20 after the 1st) holds no case
    time = pd.Timestamp("2024-03-04 08:00") + pd.to_timedelta(day, "D") \
        + pd.to_timedelta(rng.integers(0, 600, n), "min")
    y = rng.integers(0, 2, n)
    y[day >= 28] = 0  # last week: no actual positive
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    return pd.DataFrame({"y": y, "p": p, "sex": sex, "age": age, "t": time})


def _brute(df: pd.DataFrame, window: str) -> dict[tuple, list[int]]:
    """Counts per (sex, age, window start) by a loop over cases and every combination."""
    starts = df.groupby(pd.Grouper(key="t", freq=window)).size().index  # pandas' windows
    combos = itertools.product(sorted(set(df["sex"])), sorted(set(df["age"])), starts)
    out = {c: [0, 0, 0, 0] for c in combos}
    for row in df.itertuples():
        w = starts[starts <= row.t].max()
        cell = {(1, 1): "tp", (1, 0): "fn", (0, 1): "fp", (0, 0): "tn"}[(row.y, row.p)]
        out[(row.sex, row.age, w)][CELLS.index(cell)] += 1
    return out


def test_counts_equal_a_brute_force_loop() -> None:
    df = _cases()
    cm = bcm.ConfusionMatrix.from_predictions(
        df["y"], df["p"], groups={"sex": df["sex"], "age": df["age"]}, time=df["t"],
        window="7D")
    brute = _brute(df, "7D")
    assert cm.unit == "slice" and len(cm) == len(brute) == 2 * 3 * 5
    got = {tuple(r): c for r, c in zip(cm.slices.itertuples(index=False), cm.counts.tolist(),
                                       strict=True)}
    assert got == brute
    assert cm.empty.tolist() == [sum(v) == 0 for v in got.values()]
    assert cm.empty.sum() >= 5  # the empty intersection in every week, and the empty week
    last = cm.slices["window"] == cm.slices["window"].max()
    assert (cm.n_pos[last.to_numpy()] == 0).all() and cm.n[last.to_numpy()].sum() > 0
    assert cm.counts.sum() == len(df)


def test_from_frame_equals_from_predictions_and_labels_index_the_levels() -> None:
    df = _cases(200, seed=5)
    a = bcm.ConfusionMatrix.from_frame(df, y_true="y", y_pred="p", groups=["sex", "age"],
                                       time="t", window="MS")
    b = bcm.ConfusionMatrix.from_predictions(
        df["y"].to_numpy(), df["p"].to_numpy(),
        groups={"sex": df["sex"].to_numpy(), "age": df["age"].to_numpy()},
        time=df["t"].to_numpy(), window="MS")
    assert a == b
    assert a.slices["window"].tolist() == [pd.Timestamp("2024-03-01"),
                                           pd.Timestamp("2024-04-01")] * 6
    assert a.classifiers[0] == "sex=F|age=40-60|window=2024-03-01"
    assert len(set(a.classifiers)) == len(a)
    frame = a.to_frame()
    assert isinstance(frame.index, pd.MultiIndex)
    assert list(frame.index.names) == ["sex", "age", "window"]
    assert frame.loc[("M", "60+", pd.Timestamp("2024-03-01"))].sum() == 0
    da = a.to_xarray()
    assert da.dims == ("slice", "cell") and da["sex"].dims == ("slice",)
    assert da.set_index(slice=["sex", "age", "window"]).sel(sex="F").sizes["slice"] == 6


def test_slicing_errors_say_what_to_do() -> None:
    y, p = [1, 0, 1], [1, 1, 0]
    with pytest.raises(CountsError, match="one sliced ConfusionMatrix per classifier"):
        bcm.ConfusionMatrix.from_predictions(y, {"a": p, "b": p}, groups=["x", "y", "x"])
    with pytest.raises(CountsError, match="window= needs time="):
        bcm.ConfusionMatrix.from_predictions(y, p, groups=["x", "y", "x"], window="7D")
    with pytest.raises(CountsError, match=r"fillna\('missing'\)"):
        bcm.ConfusionMatrix.from_predictions(y, p, groups=["x", None, "x"])
    with pytest.raises(CountsError, match="one value per case"):
        bcm.ConfusionMatrix.from_predictions(y, p, groups=["x", "y"])
    with pytest.raises(CountsError, match="offset alias"):
        bcm.ConfusionMatrix.from_predictions(y, p, time=pd.to_datetime(["2024-01-01"] * 3),
                                             window="fortnightly")
    # an explicit level keeps the cases: the documented way around missing group values
    cm = bcm.ConfusionMatrix.from_predictions(
        y, p, groups=pd.Series(["x", None, "x"], name="site").fillna("missing"))
    assert cm.classifiers == ("site=missing", "site=x")
    assert cm.counts.tolist() == [[0, 0, 1, 0], [1, 1, 0, 0]]


def test_exact_three_beta_on_slices_equals_per_slice_beta_closed_forms() -> None:
    from scipy import stats

    df = _cases(150, seed=11)
    cm = bcm.ConfusionMatrix.from_frame(df, y_true="y", y_pred="p", groups=["sex", "age"],
                                        time="t", window="14D")
    assert cm.empty.any() and (cm.n_pos == 0).any()  # empty slices get the prior
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=4, draws=1000,
                    chains=4, predictive=False, prior=False)
    post = idata.posterior
    assert post["tpr"].dims == ("chain", "draw", "slice")
    assert post["sex"].values.tolist() == cm.slices["sex"].tolist()  # levels ride along
    n = post.sizes["chain"] * post.sizes["draw"]
    params = {"prevalence": (cm.n_pos, cm.n_neg), "tpr": (cm.tp, cm.fn), "tnr": (cm.tn, cm.fp)}
    for name, (succ, fail) in params.items():
        # flat Beta(1, 1) prior: Beta(1 + successes, 1 + failures) per slice
        a, b = 1.0 + succ, 1.0 + fail
        mean, var, kurt = (np.asarray(v, float) for v in stats.beta.stats(a, b, moments="mvk"))
        draws = post[name].transpose("slice", ...).values.reshape(len(cm), -1)
        # i.i.d. draws: the sample mean has sd sqrt(var / n); the sample variance has
        # relative sd sqrt((kurtosis + 2) / n) (kurtosis = excess kurtosis); 5 sd each
        # over ~90 comparisons leaves a false failure below 1e-4
        assert np.all(np.abs(draws.mean(1) - mean) < 5 * np.sqrt(var / n)), name
        assert np.all(np.abs(draws.var(1, ddof=1) / var - 1) < 5 * np.sqrt((kurt + 2) / n)), name
    table = bcm.summary(idata, metrics=["tpr", "acc"])
    assert list(table.index.names) == ["slice", "metric"]
    assert table.index.get_level_values("slice").unique().tolist() == list(cm.classifiers)
    # an empty slice: no plug-in value, and the flat prior's mean 1/2 for TPR
    empty = cm.classifiers[int(np.flatnonzero(cm.empty)[0])]
    assert np.isnan(table.loc[(empty, "tpr"), "plug_in"])
    exact = bcm.summary_exact(bcm.models.three_beta(cm), metrics=["tpr"], random_seed=1,
                              chunk=7)
    assert exact.index.get_level_values("slice").tolist() == list(cm.classifiers)
    assert abs(exact.loc[(empty, "tpr"), "mean"] - 0.5) < 5 * np.sqrt(1 / 12 / 4000)


def test_sliced_fit_saves_to_netcdf_and_loads_back(tmp_path) -> None:
    df = _cases(120, seed=2)
    cm = bcm.ConfusionMatrix.from_frame(df, y_true="y", y_pred="p", groups="sex", time="t",
                                        window="W-MON")
    idata = bcm.fit(bcm.models.dirichlet_multinomial(cm), sampler="exact", random_seed=2,
                    draws=200, chains=2)
    path = bcm.save(idata, tmp_path / "sliced.nc")
    back = bcm.load(path)
    assert back.posterior["window"].values.tolist() == idata.posterior["window"].values.tolist()
    assert np.array_equal(back.posterior["theta"].values, idata.posterior["theta"].values)
    assert bcm.summary(back, metrics=["tpr"]).equals(bcm.summary(idata, metrics=["tpr"]))
    rebuilt = bcm.rebuild(back)
    assert rebuilt.coords["slice"] == cm.classifiers
    weekly = back.posterior["tpr"].set_index(slice=["sex", "window"])
    assert weekly.sel(sex="F").sizes["window"] == int((cm.slices["sex"] == "F").sum())


def test_dask_counts_on_a_local_cluster_equal_pandas() -> None:
    import dask.dataframe as dd  # the [test] extra installs dask and distributed
    from dask.distributed import Client, LocalCluster, get_task_stream

    rng = np.random.default_rng(7)
    n = 100_000
    df = pd.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n),
        "site": rng.choice(["a", "b", "c"], n), "sex": rng.choice(["F", "M"], n),
        "t": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 60 * 24 * 50, n),
                                                          "min")})
    df.loc[(df["site"] == "c") & (df["sex"] == "M"), "site"] = "b"  # an empty slice
    ddf = dd.from_pandas(df, npartitions=5)
    # threads, not processes: the cluster starts in ~0.1 s instead of ~7 s
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        with get_task_stream(client) as tasks:
            lazy = bcm.ConfusionMatrix.from_frame(ddf, y_true="y", y_pred="p",
                                                  groups=["site", "sex"], time="t",
                                                  window="7D")
            plain = bcm.ConfusionMatrix.from_predictions(ddf["y"], ddf["p"])
        workers = {t["worker"] for t in tasks.data}
    assert len(workers) == 2  # the counting ran on the cluster's workers
    eager = bcm.ConfusionMatrix.from_frame(df, y_true="y", y_pred="p", groups=["site", "sex"],
                                           time="t", window="7D")
    assert lazy == eager and lazy.empty.sum() == 8  # (c, M) in each of the 8 weeks
    assert plain == bcm.ConfusionMatrix.from_predictions(df["y"], df["p"])
    fits = [bcm.fit(bcm.models.three_beta(c), sampler="exact", random_seed=5, draws=100,
                    chains=2, predictive=False, prior=False) for c in (lazy, eager)]
    assert fits[0].posterior.equals(fits[1].posterior)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.data())
def test_each_slice_holds_exactly_its_cases(data) -> None:
    # any small labelled sample with two factors: every slice equals the unsliced tally
    # of its own cases, slices are the product of the observed values, none is lost
    n = data.draw(st.integers(1, 30))
    col = st.lists(st.integers(0, 1), min_size=n, max_size=n)
    y, p = data.draw(col), data.draw(col)
    g = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    h = data.draw(st.lists(st.integers(-1, 1), min_size=n, max_size=n))
    cm = bcm.ConfusionMatrix.from_predictions(y, p, groups={"g": g, "h": h})
    assert len(cm) == len(set(g)) * len(set(h)) and cm.counts.sum() == n
    for label, row in zip(cm.classifiers, cm.counts, strict=True):
        levels = cm.slices.loc[label]
        mine = [i for i in range(n) if g[i] == levels["g"] and h[i] == levels["h"]]
        expect = [sum(1 for i in mine if (y[i], p[i]) == cell)
                  for cell in ((1, 1), (1, 0), (0, 1), (0, 0))]
        assert row.tolist() == expect
        assert cm[label].empty[0] == (not mine)


def test_slices_rank_and_have_exact_predictive_pmfs_like_classifiers() -> None:
    from bayescm.exact.pmf import metric_pmf

    hits = {"a": 5, "b": 9, "c": 2}  # of 10 positives per site; 10 negatives, 8 right
    y, p, site = [], [], []
    for name, k in hits.items():
        y += [1] * 10 + [0] * 10
        p += [1] * k + [0] * (10 - k) + [0] * 8 + [1] * 2
        site += [name] * 20
    cm = bcm.ConfusionMatrix.from_predictions(y, p, groups=pd.Series(site, name="site"))
    board = bcm.analysis.leaderboard(cm, metric="tpr", draws=2000, random_seed=1)
    index = board.summary.index
    assert index.name == "slice" and sorted(index) == list(cm.classifiers)
    # flat-prior posterior means 10/12, 6/12, 3/12 (sd <= 0.14, so Monte Carlo error of
    # 2,000 draws <= 0.003): the board is ordered b, a, c
    assert list(index) == ["site=b", "site=a", "site=c"]
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1, draws=500,
                    chains=2, predictive=False, prior=False)
    assert bcm.analysis.leaderboard(idata, metric="tpr").summary.index.name == "slice"
    pmf = metric_pmf(cm, "tpr", 5, 5)
    assert pmf.index.names == ["slice", "contour"]
    # per slice the pmf is that slice's alone (a one-slice batch gives the same numbers)
    one = metric_pmf(cm[cm.classifiers[1]], "tpr", 5, 5)
    assert np.allclose(pmf.loc[cm.classifiers[1]]["probability"],
                       one.loc[cm.classifiers[1]]["probability"])


def test_categorical_groups_keep_their_order_in_pandas_and_dask() -> None:
    import dask.dataframe as dd

    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n),
                       "g": pd.Categorical(rng.choice(["lo", "mid", "hi"], n),
                                           categories=["lo", "mid", "hi", "never"]),
                       "k": rng.choice([True, False], n)})
    eager = bcm.ConfusionMatrix.from_frame(df, y_true="y", y_pred="p", groups=["g", "k"])
    # observed categories only ("never" has no case), in category order, not sorted
    assert eager.slices["g"].unique().tolist() == ["lo", "mid", "hi"]
    lazy = bcm.ConfusionMatrix.from_frame(dd.from_pandas(df, npartitions=3), y_true="y",
                                          y_pred="p", groups=["g", "k"])
    assert lazy == eager
    by_hand = df.groupby(["g", "k"], observed=True).apply(
        lambda d: [int(((d.y == a) & (d.p == b)).sum()) for a, b in ((1, 1), (1, 0), (0, 1),
                                                                     (0, 0))],
        include_groups=False)
    assert eager.counts.tolist() == by_hand.tolist()


def test_counts_by_group_and_day_sum_into_the_same_slices_as_the_cases() -> None:
    import dask.dataframe as dd

    df = _cases(300, seed=8)
    cell = np.select([(df.y == 1) & (df.p == 1), df.y == 1, df.p == 1], ["tp", "fn", "fp"],
                     "tn")
    daily = (df.assign(day=df["t"].dt.floor("D"), cell=cell)
             .pivot_table(index=["sex", "age", "day"], columns="cell", values="y",
                          aggfunc="size", fill_value=0).reset_index())
    daily = daily.rename(columns={"tp": "TP"})  # cell columns match case-insensitively
    cases = bcm.ConfusionMatrix.from_frame(df, y_true="y", y_pred="p", groups=["sex", "age"],
                                           time="t", window="7D")
    summed = bcm.ConfusionMatrix.from_frame(daily, groups=["sex", "age"], time="day",
                                            window="7D")
    assert summed == cases
    lazy = bcm.ConfusionMatrix.from_frame(dd.from_pandas(daily, npartitions=3),
                                          groups=["sex", "age"], time="day", window="7D")
    assert lazy == cases
    assert bcm.ConfusionMatrix.from_frame(daily, groups="sex").counts.sum() == len(df)
    bad = daily.assign(fn=daily["fn"] - 1)
    with pytest.raises(CountsError, match="whole numbers >= 0"):
        bcm.ConfusionMatrix.from_frame(bad, groups="sex")


def test_a_sliced_matrix_keeps_its_classifier_through_pickle_save_and_load(tmp_path) -> None:
    import pickle

    df = _cases(150, seed=4)
    cm = bcm.ConfusionMatrix.from_frame(df, y_true="y", y_pred="p", groups="sex",
                                        classifier="model A")
    assert cm.classifier == "model A" and cm.unit == "slice"
    assert repr(cm).startswith("ConfusionMatrix(2 slices of classifier 'model A')")
    # a mapping of one classifier names it too; the name is part of equality
    keyed = bcm.ConfusionMatrix.from_predictions(df["y"], {"model A": df["p"]},
                                                 groups=df["sex"].rename("sex"))
    assert keyed == cm and keyed.take([1]).classifier == "model A"
    unnamed = bcm.ConfusionMatrix.from_predictions(df["y"], df["p"], groups={"sex": df["sex"]})
    assert unnamed.classifier is None and unnamed != cm
    assert np.array_equal(unnamed.counts, cm.counts)
    # pickle (Dask ships matrices to workers), and a pickle made before the name existed
    back = pickle.loads(pickle.dumps(cm))
    assert back == cm and back.classifier == "model A"
    old = object.__new__(bcm.ConfusionMatrix)
    state = {k: getattr(unnamed, k) for k in ("_counts", "_names", "_slices", "_unit")}
    old.__setstate__((None, state))
    assert old == unnamed and old.classifier is None
    # a fit records it: summary's attrs, save/load, the rebuilt data
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1, draws=100,
                    chains=2)
    assert bcm.summary(idata, metrics=["tpr"]).attrs["classifier"] == "model A"
    assert bcm.summary_exact(cm, metrics=["tpr"], draws=100).attrs["classifier"] == "model A"
    assert "classifier" not in bcm.summary(
        bcm.fit(bcm.models.three_beta(unnamed), sampler="exact", random_seed=1, draws=100,
                chains=2), metrics=["tpr"]).attrs
    loaded = bcm.load(bcm.save(idata, tmp_path / "named.nc"))
    assert bcm.summary(loaded, metrics=["tpr"]).attrs["classifier"] == "model A"
    from bayescm.inference import persist

    assert persist.read_spec(loaded)[1].data == cm
    # unsliced matrices: the one classifier's name, none for a batch
    assert bcm.ConfusionMatrix(1, 2, 3, 4, classifier="x").classifier == "x"
    assert bcm.ConfusionMatrix([1, 2], [2, 2], [3, 3], [4, 4]).classifier is None


def test_counts_by_group_take_one_classifier_from_its_column() -> None:
    daily = pd.DataFrame({"model": ["m1"] * 4, "site": ["a", "a", "b", "b"],
                          "tp": [1, 2, 3, 4], "fn": 1, "fp": 0, "tn": 5})
    cm = bcm.ConfusionMatrix.from_frame(daily, groups="site", classifier="model")
    assert cm.classifier == "m1" and cm.counts[:, 0].tolist() == [3, 7]
    two = daily.assign(model=["m1", "m2", "m1", "m2"])
    with pytest.raises(CountsError, match="names 2 classifiers"):
        bcm.ConfusionMatrix.from_frame(two, groups="site", classifier="model")
    with pytest.raises(CountsError, match="not in the frame"):
        bcm.ConfusionMatrix.from_frame(daily, groups="site", classifier="clf")
