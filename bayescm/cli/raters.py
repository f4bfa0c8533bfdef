"""``bayescm raters``: many raters, K classes, few or no gold labels (Dawid–Skene).

``bayescm raters --csv ratings.csv`` reads ratings as long data (columns ``item``,
``rater``, ``rating``: one row per rating, the layout of crowd-kit and of R's ``rater``)
or wide data (one row per item, one column per rater; ``--wide``), optional gold labels
(``--gold COL``: the item's known class, empty where unknown), fits
:func:`bayescm.models.dawid_skene` (Dawid & Skene, "Maximum likelihood estimation of
observer error-rates using the EM algorithm", 1979, as a Bayesian model with the class
summed out) and prints the class prevalence, every rater's metrics (a rater is a
classifier: recall per class, accuracy, ...), each item's posterior class probabilities
(``--items-out FILE`` writes them all as CSV) and the convergence check.
``--dataset anaesthesia`` runs it on Dawid & Skene's own data.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["add_parser", "run"]


def add_parser(sub: Any, prior_arg: Any, seed_arg: Any = int) -> None:
    """The ``raters`` subcommand's options (``prior_arg`` reads ``NAME=SPEC``, ``seed_arg``
    a seed as the other subcommands do)."""
    r = sub.add_parser("raters", help="many raters' K-class labels without (or with a few) "
                       "gold labels: each rater's confusion matrix and each item's class "
                       "(Dawid-Skene)")
    src = r.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", type=Path, metavar="FILE",
                     help="ratings: long (columns item, rater, rating) or, with --wide, one "
                          "row per item and one column per rater")
    src.add_argument("--dataset", choices=["anaesthesia"],
                     help="a built-in data set: Dawid & Skene's (1979) anaesthesia ratings")
    r.add_argument("--wide", action="store_true",
                   help="the CSV has one row per item and one column per rater")
    r.add_argument("--item", default="item", help="item column (default: item)")
    r.add_argument("--rater", default="rater", help="rater column of long data")
    r.add_argument("--rating", default="rating", help="rating column of long data")
    r.add_argument("--gold", default=None, metavar="COL",
                   help="column of known classes (empty where unknown)")
    r.add_argument("--labels", default=None,
                   help="the K classes in order, comma-separated (default: as found, sorted)")
    r.add_argument("--pooling", choices=["none", "partial"], default="none",
                   help="partial: raters share information (hierarchical Dawid-Skene)")
    r.add_argument("--prior", type=prior_arg, action="append", default=[],
                   metavar="NAME=SPEC",
                   help="e.g. prevalence=dirichlet:3 or confusion=diagonal:4.8,1.0667 (each "
                        "rater's rows; confusion.NAME=... for one rater; repeatable)")
    r.add_argument("--metrics", default="acc,tpr,ppv,f1",
                   help="metrics per rater (comma-separated registry keys)")
    r.add_argument("--hdi-prob", type=float, default=0.95)
    r.add_argument("--draws", type=int, default=1000,
                   help="draws per chain, as in bcm.fit (total = draws x chains)")
    r.add_argument("--chains", type=int, default=4)
    r.add_argument("--seed", type=seed_arg, default=None)
    r.add_argument("--items-out", type=Path, default=None, metavar="FILE",
                   help="write every item's class probabilities (mean, HDI) to this CSV")
    r.add_argument("--show-items", type=int, default=10, metavar="N",
                   help="print the first N items' most probable class (default 10)")
    r.add_argument("--json", action="store_true")


def _labels(text: str | None) -> list | None:
    if text is None:
        return None
    out: list = []
    for part in (p.strip() for p in text.split(",")):
        try:
            out.append(int(part))
        except ValueError:
            out.append(part)
    return out


def read_ratings(args: argparse.Namespace) -> Any:
    """The :class:`~bayescm.RatingsTable` the options describe."""
    import bayescm as bcm

    if args.dataset:
        return bcm.datasets.anaesthesia()
    from bayescm.cli.input import read_table

    frame = read_table(args.csv, "one row per rating (long) or per item (--wide)")
    labels = _labels(args.labels)
    if args.wide:
        item = args.item if args.item in frame.columns else None
        return bcm.RatingsTable.from_wide(frame, item=item, gold=args.gold, labels=labels)
    missing = [c for c in (args.item, args.rater, args.rating) if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{args.csv} has no column(s) {missing} (columns: {list(frame.columns)}); long "
            "ratings need item, rater and rating columns (--item/--rater/--rating name "
            "them), or give --wide for one column per rater.")
    return bcm.RatingsTable.from_long(frame, item=args.item, rater=args.rater,
                                      rating=args.rating, gold=args.gold, labels=labels)


def run(args: argparse.Namespace, nested_priors: Any) -> int:
    """Fit, summarise and print (``nested_priors`` turns ``--prior`` pairs into a dict)."""
    import bayescm as bcm

    table = read_ratings(args)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = bcm.models.dawid_skene(table, priors=nested_priors(args.prior),
                                       pooling=args.pooling)
        idata = bcm.fit(model, draws=args.draws, chains=args.chains, random_seed=args.seed)
    summary = bcm.summary(idata, metrics=metrics, hdi_prob=args.hdi_prob)
    summary = summary.drop(columns=[c for c in ("plug_in",) if c in summary.columns])
    prevalence = _prevalence(idata, args.hdi_prob)
    classes = bcm.analysis.item_classes(idata, hdi_prob=args.hdi_prob)
    report = bcm.check_convergence(idata)
    # the convergence report is printed in full below; other warnings once each, on stderr
    notes = list(dict.fromkeys(
        str(w.message) for w in caught
        if not issubclass(w.category, bcm.ConvergenceWarning)
        and issubclass(w.category, UserWarning)))
    if args.items_out is not None:
        classes.to_frame().to_csv(args.items_out)
    if args.json:
        out = {
            "items": table.n_items, "raters": list(map(str, table.raters)),
            "labels": [str(x) for x in table.labels], "ratings": int(table.n_ratings),
            "gold_items": len(table.gold),
            "priors": json.loads(idata.attrs["priors"]),
            "identifiability": idata.attrs.get("identifiability"),
            "convergence": {"ok": report.ok, "divergences": report.divergences},
            "warnings": notes,
            "metrics": _nested(_by_metric(summary)),
            "most_probable": {str(k): str(v) for k, v in classes.most_probable.items()},
        }
        out["prevalence"] = _nested(prevalence)
        json.dump(out, sys.stdout, indent=2, default=_plain)
        print()
        return 0
    print(table)
    if idata.attrs.get("identifiability"):
        print(f"\n{idata.attrs['identifiability']}")
    with pd.option_context("display.width", 140, "display.max_rows", 1000):
        print("\nClass prevalence:")
        print(prevalence.to_string(float_format=lambda v: f"{v:.4f}"))
        print("\nEach rater's metrics (a rater is a classifier):")
        print(summary.to_string(float_format=lambda v: f"{v:.4f}"))
        shown = classes.most_probable.head(max(args.show_items, 0))
        if len(shown):
            top = classes.mean.max(axis=1).loc[shown.index]
            print(f"\nMost probable class of the first {len(shown)} items "
                  f"(of {table.n_items}; --items-out FILE writes all):")
            print(pd.DataFrame({"class": shown, "probability": top}).to_string(
                float_format=lambda v: f"{v:.3f}"))
    print("\n" + report.message())
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    return 0


def _prevalence(idata: Any, hdi_prob: float) -> pd.DataFrame:
    """Each class's prevalence: posterior mean, sd and HDI."""
    from bayescm import idata as idata_mod
    from bayescm.stats import hdi

    prevalence = idata_mod.group(idata, "posterior")["prevalence"]
    draws = prevalence.stack(sample=("chain", "draw")).transpose("class", "sample")
    lower, upper = hdi(draws.values, hdi_prob, axis=-1)
    return pd.DataFrame({"mean": draws.mean("sample").values, "sd": draws.std("sample").values,
                         "hdi_lower": lower, "hdi_upper": upper},
                        index=pd.Index([str(c) for c in draws["class"].values], name="class"))


def _plain(x: Any) -> Any:
    if x is None or isinstance(x, bool | int | float | str):
        return x
    try:
        return x.item()
    except AttributeError:
        return str(x)


def _by_metric(table: pd.DataFrame) -> pd.DataFrame:
    """classifier -> metric -> class (one-vs-rest metrics) for the JSON output."""
    names = list(table.index.names)
    if "class" not in names:
        return table
    order = [n for n in names if n != "class"] + ["class"]
    return table.reorder_levels(order)


def _nested(table: pd.DataFrame) -> dict:
    """Summary rows as nested JSON, one level per index level (NaN as null)."""
    out: dict = {}
    for index, row in table.iterrows():
        keys = [str(k) for k in (index if isinstance(index, tuple) else (index,)) if k != ""]
        node = out
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = {c: (None if isinstance(v, float) and v != v else _plain(v))
                          for c, v in row.items()}
    return out
