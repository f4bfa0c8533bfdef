"""``bayescm items``: benchmark results item by item — how good is each model, how sure?

``bayescm items --csv results.csv`` reads one row per model and item (and run: ``--run
COL``; or a count of successes out of ``--trials COL`` runs), optional clusters of items
(``--cluster COL``), fits :func:`bayescm.models.items` (exact Beta draws for one model
on independent items answered once, NUTS otherwise) and prints per model the accuracy's
posterior mean and equal-tailed interval beside the CLT and the clustered-SE intervals
(:func:`bayescm.analysis.benchmark_intervals`), the leaderboard's rank probabilities
and the sets of statistically tied models (:func:`bayescm.analysis.tied_sets`);
``--compare A,B`` adds the paired P(A better) on the same items.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["add_parser", "run"]

_INTERVALS = ["n_items", "mean", "bayes_mean", "bayes_lower", "bayes_upper", "clt_lower",
              "clt_upper", "clustered_lower", "clustered_upper", "icc", "design_effect"]


def add_parser(sub: Any, seed_arg: Any = int) -> None:
    """The ``items`` subcommand's options (``seed_arg`` reads a seed as elsewhere)."""
    p = sub.add_parser("items", help="benchmark results item by item: each model's accuracy "
                       "with clusters and runs, leaderboard, ties and paired comparisons",
                       description="Each model's accuracy on a benchmark scored item by "
                                   "item (the expected score on a new item), beside the CLT "
                                   "and clustered-SE intervals; leaderboard, tied sets and "
                                   "with --compare the paired P(A better).")
    p.add_argument("--csv", type=Path, metavar="FILE", required=True,
                   help="one row per model and item (and run): columns item, model, correct "
                        "(0/1, or a count of successes with --trials)")
    p.add_argument("--item", default="item", help="item column (default: item)")
    p.add_argument("--model", default="model", help="model column (default: model)")
    p.add_argument("--correct", default="correct", help="score column (default: correct)")
    p.add_argument("--cluster", default=None, metavar="COL",
                   help="column of each item's cluster (passage, topic, task)")
    p.add_argument("--run", default=None, metavar="COL",
                   help="column naming the run, when items were answered several times")
    p.add_argument("--trials", default=None, metavar="COL",
                   help="column of the runs a row's count of successes is out of (not with "
                        "--run)")
    p.add_argument("--hdi-prob", type=float, default=0.95)
    p.add_argument("--interval", choices=("equal_tailed", "hdi"), default="equal_tailed",
                   help="bayescm's interval of each accuracy (default equal_tailed: the "
                        "quantiles; hdi: as in bcm.summary)")
    p.add_argument("--compare", default=None, metavar="A,B",
                   help="two models to compare on the same items: P(A better than B)")
    p.add_argument("--draws", type=int, default=None,
                   help="draws per chain, as in bcm.fit (default 1000 for NUTS, 5000 for "
                        "exact draws)")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=seed_arg, default=None)
    p.add_argument("--json", action="store_true")


def read_results(args: argparse.Namespace) -> Any:
    """The :class:`~bayescm.ItemResults` the options describe."""
    import bayescm as bcm
    from bayescm.cli.input import read_table

    frame = read_table(args.csv, "one row per model and item (and run)")
    given = {"--item": args.item, "--model": args.model, "--correct": args.correct,
             "--cluster": args.cluster, "--run": args.run, "--trials": args.trials}
    missing = {flag: col for flag, col in given.items()
               if col is not None and col not in frame.columns}
    if missing:
        raise ValueError(f"{args.csv} has no column(s) {list(missing.values())} (columns: "
                         f"{[str(c) for c in frame.columns][:20]}); name them with "
                         f"{', '.join(missing)}.")
    return bcm.ItemResults.from_frame(frame, item=args.item, model=args.model,
                                      correct=args.correct, cluster=args.cluster,
                                      run=args.run, trials=args.trials)


def _pair(text: str | None, models: tuple[str, ...]) -> tuple[str, str] | None:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(f"--compare takes two different models as A,B, got {text!r}.")
    unknown = [p for p in parts if p not in models]
    if unknown:
        raise ValueError(f"--compare names unknown model(s) {unknown}; the models are "
                         f"{list(models)}.")
    return parts[0], parts[1]


def _clean(x: Any) -> Any:
    """A JSON value: plain bools, ints and floats (NaN and infinities as null)."""
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return float(x) if math.isfinite(float(x)) else None
    return str(x)


def _records(frame: pd.DataFrame) -> dict:
    # by cell, not by row: a row would turn the integer columns into floats
    return {str(k): {str(c): _clean(frame.at[k, c]) for c in frame.columns}
            for k in frame.index}


def run(args: argparse.Namespace) -> int:
    """Fit, summarise and print."""
    import bayescm as bcm
    from bayescm.stats import check_hdi_prob

    if args.draws is not None and args.draws < 1:
        raise ValueError(f"--draws must be at least 1, got {args.draws}.")
    if args.chains < 1:
        raise ValueError(f"--chains must be at least 1, got {args.chains}.")
    check_hdi_prob(args.hdi_prob)
    res = read_results(args)
    pair = _pair(args.compare, res.models)
    exact = res.n_models == 1 and res.clusters is None and res.one_run
    sampler = "exact" if exact else "nuts"
    draws = args.draws or (5000 if exact else 1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        idata = bcm.fit(bcm.models.items(res), sampler=sampler, draws=draws,
                        chains=args.chains, random_seed=args.seed, predictive=False)
    intervals = bcm.analysis.benchmark_intervals(res, idata, hdi_prob=args.hdi_prob,
                                                 kind=args.interval)
    board = ties = None
    if res.n_models > 1:
        board = bcm.analysis.leaderboard(idata, "acc", hdi_prob=args.hdi_prob).to_frame()
        ties = bcm.analysis.tied_sets(idata, "acc")
    comparison = None
    if pair is not None:
        comparison = bcm.analysis.compare_paired(idata, pair[0], pair[1], "acc",
                                                 hdi_prob=args.hdi_prob)
    report = bcm.check_convergence(idata)
    notes = list(dict.fromkeys(
        str(w.message) for w in caught
        if issubclass(w.category, UserWarning)
        and not issubclass(w.category, bcm.ConvergenceWarning)))
    if args.json:
        out: dict[str, Any] = {
            "models": list(res.models), "items": res.n_items,
            "clusters": None if res.clusters is None else res.n_clusters,
            "runs_per_item": float(res.runs_per_item.mean()), "sampler": sampler,
            "draws": draws, "chains": args.chains, "hdi_prob": args.hdi_prob,
            "interval": args.interval,
            "convergence": {"ok": report.ok, "divergences": report.divergences},
            "warnings": notes,
            "intervals": _records(intervals[_INTERVALS]),
        }
        if board is not None:
            out["leaderboard"] = _records(board)
            out["tied_sets"] = _records(ties)
        if comparison is not None:
            row = comparison.to_frame().iloc[0]
            out["compare"] = {"a": pair[0], "b": pair[1],
                              **{str(c): _clean(v) for c, v in row.items()}}
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    print(res)
    print(f"\nModel items, sampler {sampler}; accuracy = the expected score on a new item "
          f"(of a new cluster); {args.hdi_prob:.0%} intervals:")
    shown = intervals[_INTERVALS].rename(columns={"mean": "observed"})
    with pd.option_context("display.width", 200, "display.max_rows", 1000,
                           "display.max_columns", 20):
        print(shown.to_string(float_format=lambda v: f"{v:.4f}"))
        kind = "HDI" if args.interval == "hdi" else "equal-tailed"
        print(f"bayes_*: bayescm's posterior ({kind}); clt_*: mean ± z·SE; "
              "clustered_*: mean ± z·clustered SE (Miller 2024)")
        if board is not None:
            print("\nLeaderboard (rank probabilities from the joint posterior):")
            print(board.to_string(float_format=lambda v: f"{v:.3f}"))
            print(f"\nTied sets (tier: models whose tier leader is not better with "
                  f"probability {ties.attrs['level']:g}):")
            print(ties.to_string(float_format=lambda v: f"{v:.3f}"))
    if comparison is not None:
        print(f"\nPaired comparison on the same items: {comparison!r}")
    print("\n" + report.message())
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    return 0
