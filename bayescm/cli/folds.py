"""``bayescm folds``: two algorithms compared across cross-validation folds and data sets.

``bayescm folds --csv results.csv --algorithms A,B`` reads per-fold results -- counts
(one row per algorithm, data set, run and fold with columns ``tp, fn, fp, tn``, or
K-class crosstab rows with an ``actual`` column; :meth:`bayescm.FoldResults.from_frame`)
or, with ``--predictions``, the out-of-fold predictions themselves (one row per case:
``y_true``, ``y_pred``, fold ids; :meth:`bayescm.FoldResults.from_predictions`) -- and

* on one data set runs :func:`bayescm.analysis.compare_folds`, the Bayesian correlated
  t-test (Corani & Benavoli 2015; baycomp's ``two_on_single`` with ``--plug-in``):
  P(A better), P(within the ROPE), P(B better), the mean difference and its HDI;
* on several runs :func:`bayescm.analysis.compare_datasets`, the hierarchical model of
  Corani, Benavoli, Demšar, Mangili & Zaffalon (2017): the same probabilities for a
  new data set, and each data set's difference shrunk towards the others'.

The ``run`` and ``dataset`` columns are used when present (``--run``, ``--dataset``
name others).  Bad input ends with bayescm's one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["add_parser", "run"]


def add_parser(sub: Any, seed_arg: Any = int) -> None:
    """The ``folds`` subcommand's options (``seed_arg`` reads a seed as the others do)."""
    f = sub.add_parser(
        "folds", help="compare two algorithms across cross-validation folds (one data set) "
                      "or data sets (hierarchical)",
        description="Compare algorithms A and B from per-fold confusion matrices: the "
                    "correlated Bayesian t-test on one data set, the hierarchical model "
                    "across several.")
    f.add_argument("--csv", type=Path, metavar="FILE", required=True,
                   help="per-fold counts (tp,fn,fp,tn or K-class rows with an 'actual' "
                        "column), or predictions with --predictions")
    f.add_argument("--predictions", action="store_true",
                   help="the CSV holds out-of-fold predictions, one row per case")
    f.add_argument("--algorithms", default=None, metavar="A,B",
                   help="the two algorithms to compare (default: the two in the file)")
    f.add_argument("--metric", default="acc", help="registry key (acc, ba, mcc, f1_macro, ...)")
    f.add_argument("--rope", type=float, default=0.01,
                   help="half-width of the region of practical equivalence (metric units)")
    f.add_argument("--fold", default="fold", metavar="COL", help="fold column (default fold)")
    f.add_argument("--run", default=None, metavar="COL",
                   help="repetition column (default: 'run' if present)")
    f.add_argument("--algorithm", default="algorithm", metavar="COL",
                   help="algorithm column (default algorithm)")
    f.add_argument("--dataset", default=None, metavar="COL",
                   help="data-set column (default: 'dataset' if present)")
    f.add_argument("--y-true", default="y_true", metavar="COL",
                   help="true labels (--predictions; default y_true)")
    f.add_argument("--y-pred", default="y_pred", metavar="COL[,COL]",
                   help="predicted labels (--predictions; default y_pred); several columns, "
                        "comma-separated, are one algorithm each")
    f.add_argument("--actual", default="actual", metavar="COL",
                   help="actual class of K-class count rows (default actual)")
    f.add_argument("--labels", default=None, help="the classes in order, comma-separated")
    f.add_argument("--positive", default=None, help="the positive label (binary predictions)")
    f.add_argument("--plug-in", action="store_true",
                   help="one data set: the plug-in metric per fold (baycomp's two_on_single) "
                        "instead of each fold's posterior")
    f.add_argument("--hdi-prob", type=float, default=0.95)
    f.add_argument("--draws", type=int, default=None,
                   help="draws of the difference (one data set, default 4000) or NUTS draws "
                        "per chain (several, default 1000)")
    f.add_argument("--tune", type=int, default=1000, help="NUTS tuning steps (several data sets)")
    f.add_argument("--chains", type=int, default=4, help="NUTS chains (several data sets)")
    f.add_argument("--seed", type=seed_arg, default=None)
    f.add_argument("--json", action="store_true")


def _value(text: str, column: pd.Series) -> Any:
    """A label typed on the command line, as the CSV's column holds it (7 for an int column)."""
    if pd.api.types.is_bool_dtype(column):
        return text.strip().lower() in ("true", "1")
    if pd.api.types.is_numeric_dtype(column):
        try:
            number = float(text)
        except ValueError:
            return text
        return int(number) if number.is_integer() and pd.api.types.is_integer_dtype(column) \
            else number
    return text


def _results(args: argparse.Namespace) -> Any:
    """The :class:`~bayescm.FoldResults` of the CSV, as the options describe it."""
    import bayescm as bcm
    from bayescm.cli.input import read_csv

    frame = read_csv(args.csv)  # text cells: typed below, so that labels keep their text
    frame = frame.apply(lambda c: pd.to_numeric(c) if _numeric(c) else c)
    run = args.run or ("run" if "run" in frame.columns else None)
    dataset = args.dataset or ("dataset" if "dataset" in frame.columns else None)
    if not args.predictions:
        return bcm.FoldResults.from_frame(frame, fold=args.fold, run=run,
                                          algorithm=args.algorithm, dataset=dataset,
                                          actual=args.actual, labels=_labels(args, frame))
    preds = [c.strip() for c in args.y_pred.split(",") if c.strip()]
    if args.y_true not in frame.columns:
        raise ValueError(f"{args.csv} has no column {args.y_true!r} of true labels (columns: "
                         f"{list(frame.columns)}); name it with --y-true COL.")
    truth = frame[args.y_true]
    return bcm.FoldResults.from_predictions(
        frame, y_true=args.y_true, y_pred=preds if len(preds) > 1 else preds[0],
        fold=args.fold, run=run, algorithm=None if len(preds) > 1 else args.algorithm,
        dataset=dataset, labels=_labels(args, frame),
        positive=None if args.positive is None else _value(args.positive, truth))


def _numeric(column: pd.Series) -> bool:
    return bool(column.str.strip().ne("").all()
                and pd.to_numeric(column, errors="coerce").notna().all())


def _labels(args: argparse.Namespace, frame: pd.DataFrame) -> list | None:
    if args.labels is None:
        return None
    col = args.y_true if args.predictions else args.actual
    ref = frame[col] if col in frame.columns else pd.Series([], dtype=object)
    return [_value(x.strip(), ref) for x in args.labels.split(",") if x.strip()]


def _pair(args: argparse.Namespace, results: Any) -> tuple[str, str]:
    have = list(results.algorithms)
    if args.algorithms is None:
        if len(have) != 2:
            raise ValueError(f"{args.csv} has {len(have)} algorithms {have}: name the two to "
                             "compare with --algorithms A,B.")
        return have[0], have[1]
    names = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    if len(names) != 2 or names[0] == names[1]:
        raise ValueError(f"--algorithms takes two different names, A,B (got "
                         f"{args.algorithms!r}).")
    unknown = [n for n in names if n not in have]
    if unknown:
        raise ValueError(f"No algorithm(s) {unknown} in {args.csv}; it has {have}.")
    return names[0], names[1]


def run(args: argparse.Namespace) -> int:
    """Read, compare and print; bad input raises ValueError (the caller prints it)."""
    import bayescm as bcm

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            results = _results(args)
            a, b = _pair(args, results)
            if len(results.datasets) == 1:
                out = _one(args, results, a, b)
            else:
                runs = results.n_runs
                if not isinstance(runs, int):
                    raise ValueError(f"The data sets have different numbers of runs {runs}; "
                                     "the hierarchical comparison takes one number of runs.")
                res = bcm.analysis.compare_datasets(
                    results.by_dataset(a), results.by_dataset(b), args.metric, rope=args.rope,
                    runs=runs, draws=1000 if args.draws is None else args.draws,
                    tune=args.tune, chains=args.chains, random_seed=args.seed, names=(a, b))
                out = _many(args, results, res)
        except TypeError as err:  # a wrong kind of input: the same one-line error
            raise ValueError(str(err)) from None
    notes = list(dict.fromkeys(str(w.message) for w in caught
                               if issubclass(w.category, UserWarning)))
    if args.json:
        json.dump({**out, "warnings": notes}, sys.stdout, indent=2, default=_plain)
        print()
    else:
        print(out.pop("_text"))
    if not args.json:  # the text's last line says already when the chains did not converge
        said = {str(w.message) for w in caught if w.category is bcm.ConvergenceWarning}
        for note in notes:
            if note not in said:
                print(f"warning: {note}", file=sys.stderr)
    return 0


def _one(args: argparse.Namespace, results: Any, a: str, b: str) -> dict:
    import bayescm as bcm

    cms_a, cms_b = results.pair(a, b)
    res = bcm.analysis.compare_folds(cms_a, cms_b, args.metric, rope=args.rope,
                                     runs=results.n_runs, plug_in=args.plug_in,
                                     draws=4000 if args.draws is None else args.draws,
                                     random_seed=args.seed, names=(a, b))
    row = res.summary(args.hdi_prob).iloc[0]
    out = {"test": "compare_folds", "metric": res.metric, "rope": res.rope,
           "algorithms": [a, b], "datasets": list(results.datasets), "runs": res.runs,
           "folds": res.folds, "rho": res.rho, "plug_in": res.plug_in,
           "hdi_prob": args.hdi_prob, "p_a_better": res.p_a_better, "p_rope": res.p_rope,
           "p_b_better": res.p_b_better,
           "difference": {"mean": float(row["mean"]), "hdi_lower": float(row["hdi_lower"]),
                          "hdi_upper": float(row["hdi_upper"])}}
    how = "plug-in fold metrics (baycomp's two_on_single)" if res.plug_in else \
        "each fold's metric from its confusion matrix's posterior"
    out["_text"] = "\n".join([
        f"{results!r}",
        f"Correlated Bayesian t-test on {res.metric}, {res.runs} run(s) × {res.folds} folds "
        f"(rho = 1/{res.folds}), {how}:",
        f"  {res.metric}: {a} − {b} = {row['mean']:.4f}, {args.hdi_prob:.0%} HDI "
        f"[{row['hdi_lower']:.4f}, {row['hdi_upper']:.4f}]",
        f"  P({a} better) = {res.p_a_better:.4f}   P(|difference| <= {res.rope:g}) = "
        f"{res.p_rope:.4f}   P({b} better) = {res.p_b_better:.4f}"])
    return out


def _many(args: argparse.Namespace, results: Any, res: Any) -> dict:
    a, b = res.names
    table = res.to_frame(args.hdi_prob)
    overall = res.summary(args.hdi_prob)
    pa, pr, pb = res.predictive_probs
    per = {str(ds): {"observed_mean": r["observed_mean"], "posterior_mean": r["posterior_mean"],
                     "hdi_lower": r["hdi_lower"], "hdi_upper": r["hdi_upper"],
                     "p_a_better": r[f"p_{a}_better"], "p_rope": r["p_rope"],
                     "p_b_better": r[f"p_{b}_better"]} for ds, r in table.iterrows()}
    out = {"test": "compare_datasets", "metric": res.metric, "rope": res.rope,
           "algorithms": [a, b], "datasets": list(results.datasets), "runs": results.n_runs,
           "folds": results.n_folds, "hdi_prob": args.hdi_prob, "p_a_better": res.p_a_better,
           "p_rope": res.p_rope, "p_b_better": res.p_b_better,
           "predictive_probs": {"a_better": pa, "rope": pr, "b_better": pb},
           **{key: {c: float(overall.loc[q, c]) for c in ("mean", "hdi_lower", "hdi_upper")}
              for key, q in (("delta0", "delta0"), ("new_dataset", "new data set"))},
           "per_dataset": per, "r_hat": res.r_hat, "divergences": res.divergences}
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        out["_text"] = "\n".join([
            f"{results!r}",
            f"Hierarchical comparison on {res.metric} across {len(table)} data sets "
            f"(Corani et al. 2017), rope ±{res.rope:g}:",
            f"  P({a} better) = {res.p_a_better:.4f}   P(rope) = {res.p_rope:.4f}   "
            f"P({b} better) = {res.p_b_better:.4f}   (share of posterior draws in which each "
            "is the most probable region for a new data set)",
            f"  a new data set: P({a} better) = {pa:.4f}, P(rope) = {pr:.4f}, "
            f"P({b} better) = {pb:.4f}",
            "\nMean difference (delta0) and a new data set's, "
            f"{a} − {b}:\n{overall.to_string(float_format=lambda v: f'{v:.4f}')}",
            "\nPer data set: observed mean difference and the posterior, shrunk towards the "
            f"others:\n{table.to_string(float_format=lambda v: f'{v:.4f}')}",
            f"\nlargest R-hat {res.r_hat:.3f}, {res.divergences} divergence(s)"
            + ("" if res.r_hat < 1.01 and res.divergences == 0 else
               ": not converged; raise --draws and --tune")])
    return out


def _plain(x: Any) -> Any:
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x if x is None or isinstance(x, bool | int | float | str) else str(x)
