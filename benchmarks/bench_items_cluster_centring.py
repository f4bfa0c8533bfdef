"""Centred or non-centred cluster effects in the items model with several models: which
mixes better, and does ``centered="auto"`` pick it?  (issue 27; the model card's table)

    .venv/bin/python benchmarks/bench_items_cluster_centring.py [--seeds 1,2] [--digits]

For each simulated design (:func:`bayescm.analysis.simulate_items`, one run, data seeds
100 + seed) the model is fitted twice with NUTS 4 x 1,000 (``marginal=False``, the item
effects by their own rule), once with the cluster effects forced centred and once forced
non-centred (``bayescm.models.items.centring``'s ``CLUSTER_SPREAD`` set to 0 or to
infinity), and the convergence check's largest R-hat, smallest bulk / tail ESS and the
divergences are printed beside the clusters' spread over their noise
(``cluster_spread_over_noise``, the statistic ``auto`` thresholds) and what ``auto``
picks.  ``--digits`` adds notebook 11's real
benchmark (scikit-learn's digits, five classifiers, 20 k-means clusters).
"""

from __future__ import annotations

import argparse
import importlib
import warnings

import numpy as np

import bayescm as bcm

# the module, not the function bcm.models.items that shadows its package's name
centring = importlib.import_module("bayescm.models.items.centring")

DESIGNS = [  # items, model accuracies, items per cluster
    (100, [0.6, 0.7], 5), (300, [0.6, 0.7], 5),
    (450, [0.7, 0.8, 0.85, 0.9, 0.95], 22), (200, [0.65, 0.75, 0.8], 10)]
ICCS = (0.05, 0.1, 0.2, 0.3)


def digits() -> bcm.ItemResults:
    import pandas as pd
    from sklearn.cluster import KMeans
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=450, random_state=0)
    clusters = KMeans(20, n_init=10, random_state=0).fit(x_train).predict(x_test)
    rows = []
    for name, clf in {"logistic": LogisticRegression(max_iter=5000),
                      "knn": KNeighborsClassifier(), "naive_bayes": GaussianNB(),
                      "tree": DecisionTreeClassifier(random_state=0), "svm": SVC()}.items():
        right = clf.fit(x_train, y_train).predict(x_test) == y_test
        rows.append(pd.DataFrame({"image": np.arange(len(y_test)), "classifier": name,
                                  "right": right.astype(int), "kmeans": clusters}))
    return bcm.ItemResults.from_frame(pd.concat(rows, ignore_index=True), item="image",
                                      model="classifier", correct="right", cluster="kmeans")


def fit_both(label: str, res: bcm.ItemResults, seed: int) -> None:
    auto = [v.name for v in bcm.models.items(res, marginal=False).free_RVs][-1]
    out = []
    saved = centring.CENTRE_MIN_CLUSTER, centring.CLUSTER_SPREAD
    try:
        # centred: no threshold to pass; non-centred: a threshold no data set passes
        for form, thresholds in (("centred", (0, 0.0)), ("non-centred", (0, np.inf))):
            centring.CENTRE_MIN_CLUSTER, centring.CLUSTER_SPREAD = thresholds
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                idata = bcm.fit(bcm.models.items(res, marginal=False), random_seed=seed,
                                predictive=False)
            tab = bcm.check_convergence(idata).table
            div = int(idata.sample_stats["diverging"].sum())
            out.append(f"{form}: R-hat {tab['r_hat'].max():.3f}, ESS {tab['ess_bulk'].min():4.0f}"
                       f" / {tab['ess_tail'].min():4.0f}, {div} div.")
    finally:
        centring.CENTRE_MIN_CLUSTER, centring.CLUSTER_SPREAD = saved
    per = res.trials_array.sum() / res.n_clusters
    print(f"{label}: {per:.0f} scores a cluster, spread/noise "
          f"{centring.cluster_spread_over_noise(res):.2f}, "
          f"auto {'centred' if auto == 'effect_cluster' else 'non-centred'} | "
          + " | ".join(out), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--digits", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    for n_items, accs, size in DESIGNS:
        for icc in ICCS:
            for seed in seeds:
                df = bcm.analysis.simulate_items(n_items, accs, icc=icc, cluster_size=size,
                                                 runs=1, rng=100 + seed)
                res = bcm.ItemResults.from_frame(df, cluster="cluster", run="run")
                fit_both(f"{n_items} items, {len(accs)} models, clusters of {size}, "
                         f"ICC {icc}, seed {seed}", res, seed)
    if args.digits:
        res = digits()
        for seed in seeds:
            fit_both(f"digits (5 classifiers, 20 k-means clusters), seed {seed}", res, seed)


if __name__ == "__main__":
    main()
