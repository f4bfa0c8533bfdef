"""The ``bayescm`` command.

``bayescm summarize --tp 26 --fn 0 --fp 2 --tn 6`` prints every metric's posterior
(``--json`` for machine-readable output); ``--matrix 'cat,dog; 50,3; 4,40'`` for a
K-class matrix; ``--csv predictions.csv`` for predictions, read as the Upload page reads
them (:mod:`bayescm.cli.input`), ``--groups sex site`` (and/or ``--time date --window
7D``) slicing them (:mod:`bayescm.cli.slices`); ``bayescm demo`` runs the main job on
the built-in literature collection and writes its results; ``bayescm app`` serves the web app
(needs the ``[app]`` extra) and prints its address.  ``--draws`` means draws per chain in
every subcommand, as in :func:`bayescm.fit`.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import signal
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayescm.cli import folds as cli_folds
from bayescm.cli import input as cli_input
from bayescm.cli import items as cli_items
from bayescm.cli import raters as cli_raters
from bayescm.cli import slices as cli_slices
from bayescm.cli import unlabeled as cli_unlabeled
from bayescm.data.confusion import CELLS
from bayescm.data.text import parse_matrix

__all__ = ["main", "parse_matrix"]


# The models --model offers for each kind of data (bcm.metrics.registry_for(data).kind);
# the first is the default.
MODELS = {"binary": ("three_beta", "dirichlet_multinomial"),
          "multiclass": ("multiclass_rows", "multiclass_cells"),
          "sliced": ("three_beta", "dirichlet_multinomial", "groups")}


def _floats(text: str) -> float | list[float]:
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--prevalence takes a number or comma-separated numbers (got {text!r}).") from None
    return values[0] if len(values) == 1 else values


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(
            f"takes a whole number >= 0, e.g. --seed 1 (got {text!r}).")
    return seed


def _prior_arg(text: str) -> tuple[str, str]:
    name, sep, spec = text.partition("=")
    if not sep or not name or not spec:
        raise argparse.ArgumentTypeError(
            f"--prior takes NAME=SPEC such as tpr=beta:20,4 (got {text!r})."
        )
    return name.strip(), spec.strip()


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayescm",
        description="How good is this classifier, really, and how sure can we be?",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    s = sub.add_parser(
        "summarize", help="posterior of every metric of a binary or K-class confusion matrix",
        description="Posterior of every metric of a confusion matrix: a binary one "
                    "(--tp --fn --fp --tn), a K-class one (--matrix), the K-class "
                    "matrices of classifiers' predictions (--csv), or one classifier's "
                    "predictions sliced by groups and time windows (--csv with --groups "
                    "and/or --time --window), summarised per slice.")
    for cell in CELLS:
        s.add_argument(f"--{cell}", type=float, default=None, help=f"count of {cell} (binary)")
    s.add_argument("--matrix", metavar="TEXT", default=None,
                   help="a K-class confusion matrix: the K class labels, then one row of "
                        "counts per ACTUAL class, its columns the PREDICTED classes in label "
                        "order, rows separated by ';', e.g. 'cat,dog,bird; 50,3,2; 4,40,6; "
                        "1,2,30' (50 cats predicted cat, 3 cats predicted dog, ...)")
    s.add_argument("--csv", type=Path, metavar="FILE", default=None,
                   help="CSV of predictions, one row per case: a column of true labels "
                        "(--truth), one column of predicted labels per classifier, "
                        "optionally 'group' (slices, as --groups group) and 'population' "
                        "(not used: unlabelled data); two labels give binary matrices "
                        "(--positive), more K-class ones; stderr says which column was "
                        "taken as what")
    s.add_argument("--truth", "--truth-column", dest="truth_column", default=None,
                   metavar="COL", help="CSV column of the true labels (default: y_true, "
                                       "else truth)")
    s.add_argument("--population-column", default=None, metavar="COL",
                   help="CSV column of populations, set aside (default: 'population' if "
                        "present)")
    s.add_argument("--classifiers", default=None,
                   help="comma-separated CSV columns to evaluate (default: every column but "
                        "the true labels, groups and population)")
    s.add_argument("--labels", default=None,
                   help="comma-separated class labels of the CSV, fixing their order and "
                        "adding classes nobody saw or predicted (default: every label seen)")
    cli_slices.add_arguments(s)
    s.add_argument("--model", choices=list(dict.fromkeys(x for m in MODELS.values() for x in m)),
                   default=None,
                   help="default three_beta for a binary matrix or its slices (groups: "
                        "partial pooling across slices), multiclass_rows for a K-class one "
                        "(multiclass_cells: a Dirichlet over the K*K cells)")
    s.add_argument("--sampler", choices=["exact", "nuts"], default=None,
                   help="exact conjugate draws (the default where the model has them) or "
                        "NUTS")
    s.add_argument("--prior", type=_prior_arg, action="append", default=[],
                   metavar="NAME=SPEC",
                   help="a prior in bcm.priors.parse's grammar, e.g. tpr=beta:20,4, "
                        "tpr=jeffreys, tpr=pert:0.5,0.9,1, or for a K-class model "
                        "rows=dirichlet:0.5, rows=diagonal:8,1, prevalence=perks "
                        "(repeatable)")
    s.add_argument("--prevalence", type=_floats, default=None,
                   help="fixed prevalence of a designed test set: one number (binary) or K "
                        "comma-separated class prevalences in label order (multiclass_rows)")
    s.add_argument("--metrics", default=None,
                   help="comma-separated metric keys (default all; for slices "
                        f"{cli_slices.DEFAULT_METRICS})")
    s.add_argument("--hdi-prob", type=float, default=0.95)
    s.add_argument("--draws", type=int, default=None,
                   help="draws per chain, as in bcm.fit (total = draws x chains; default "
                        "as bcm.fit: for the exact sampler a million in all per matrix, "
                        "fewer for many matrices, so that HDI bounds are stable to 0.005; "
                        "1000 x 4 chains for NUTS)")
    s.add_argument("--chains", type=int, default=4)
    s.add_argument("--seed", type=_seed, default=None)
    s.add_argument("--json", action="store_true",
                   help="machine-readable output; its 'metrics' are {metric: statistics} for "
                        "a binary matrix, {classifier: {metric: statistics, or {class: "
                        "statistics} for a per-class metric}} for K classes, {slice: {metric: "
                        "statistics}} for slices (with 'classifier' and 'slices': levels, "
                        "counts, n, empty)")

    u = sub.add_parser("unlabeled", help="Se, Sp and prevalence from classifiers' agreement "
                       "on unlabelled data (Hui-Walter)")
    src = u.add_mutually_exclusive_group(required=True)
    src.add_argument("--counts", metavar="TEXT",
                     help="pattern counts, e.g. '++=40,+-=3,-+=7,--=100'; several "
                          "populations separated by ';' as 'site1:++=40,...;site2:...'")
    src.add_argument("--csv", type=Path, metavar="FILE",
                     help="CSV of predictions: one column per classifier, optionally "
                          "'population' and true labels where known (y_true or truth: "
                          "verified cases); an empty cell is a missing result")
    u.add_argument("--classifiers", default=None,
                   help="comma-separated names (with --counts) or columns (with --csv)")
    u.add_argument("--population-column", default=None,
                   help="CSV column naming the population (default: 'population' if present)")
    u.add_argument("--truth", "--truth-column", dest="truth_column", default=None,
                   metavar="COL", help="CSV column of the true labels where known "
                                       "(default: y_true, else truth, if present)")
    u.add_argument("--positive", default=None, help="label meaning positive in the CSV")
    u.add_argument("--dependence", default=None, metavar="PAIRS",
                   help="conditionally dependent pairs, e.g. 'A~B,A~C', or 'all'")
    u.add_argument("--sampler", choices=["auto", "gibbs", "nuts"], default="auto",
                   help="auto (default): Gibbs sampling in NumPy for a complete table of "
                        "conditionally independent classifiers, else NUTS on the compiled "
                        "density; the same posterior either way")
    u.add_argument("--prior", type=_prior_arg, action="append", default=[],
                   metavar="NAME=SPEC",
                   help="e.g. sensitivity=beta:20,4 or sensitivity.A=beta:20,4 (repeatable)")
    u.add_argument("--metrics", default="tpr,tnr,prevalence,acc,ppv,npv,f1,mcc")
    u.add_argument("--hdi-prob", type=float, default=0.95)
    u.add_argument("--draws", type=int, default=1000,
                   help="draws per chain, as in bcm.fit (total = draws x chains)")
    u.add_argument("--chains", type=int, default=4)
    u.add_argument("--seed", type=_seed, default=None)
    u.add_argument("--json", action="store_true")

    cli_raters.add_parser(sub, _prior_arg, _seed)
    cli_folds.add_parser(sub, _seed)
    cli_items.add_parser(sub, _seed)

    d = sub.add_parser("demo", help="the literature collection of Tötsch & Hoffmann (2021)")
    d.add_argument("--out", type=Path, default=Path("demo-output"))
    d.add_argument("--seed", type=_seed, default=1)

    a = sub.add_parser("app", help="serve the web app and print its address",
                       description="Serve the web app (Panel) until Ctrl+C; open the printed "
                                   "address in a browser.")
    a.add_argument("--port", type=int, default=5006, help="TCP port (0: any free one)")
    a.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    a.add_argument("--show", action="store_true", help="open it in the default browser")
    return parser


_RUNNERS = {"folds": cli_folds.run, "items": cli_items.run}


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "summarize":
            return _summarize(args)
        if args.command == "unlabeled":
            return cli_unlabeled.run(args, _nested_priors, _clean)
        if args.command == "raters":
            return cli_raters.run(args, _nested_priors)
        if args.command in _RUNNERS:  # commands whose module reads and answers alone
            return _RUNNERS[args.command](args)
        if args.command == "app":
            return _app(args)
        from bayescm.cli.demo import demo

        return demo(args)
    except (ValueError, KeyError, OSError) as err:  # OSError: a file that cannot be read
        msg = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
        print(f"bayescm: error: {msg}", file=sys.stderr)
        return 2


def _clean(x: object) -> object:
    """A JSON value: NaN and infinities as null (a row's ``note`` says why), plain bools."""
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, float | np.floating):
        return None if not math.isfinite(float(x)) else float(x)
    return x


def _number(v: float) -> str:
    """Four decimals, or four significant digits where they would show 0 (width 5e-09)."""
    if v != 0 and math.isfinite(v) and abs(v) < 5e-5:
        return f"{v:.4g}"
    return f"{v:.4f}"


def _summarize(args: argparse.Namespace) -> int:
    import bayescm as bcm
    from bayescm import idata as idata_mod
    from bayescm.inference.fit import fit_closed_form

    data = cli_input.summarize_input(args)
    registry = bcm.metrics.registry_for(data)
    sliced = getattr(data, "unit", None) == "slice"
    kind = "sliced" if sliced else registry.kind
    model = args.model or MODELS[kind][0]
    if model not in MODELS[kind]:
        raise ValueError(
            f"--model {model} does not take a {kind} confusion matrix; choose "
            f"{' or '.join(MODELS[kind])}.")
    priors = dict(args.prior)
    options = {} if args.prevalence is None else {"prevalence": args.prevalence}
    builder = getattr(bcm.models, model)
    if options and "prevalence" not in inspect.signature(builder).parameters:
        raise ValueError(f"--prevalence does not apply to the {model} model.")
    metrics = (args.metrics or (cli_slices.DEFAULT_METRICS if sliced else "")).split(",")
    metrics = [m for m in metrics if m] or None
    if args.sampler is None:  # exact where the family has a closed form, else NUTS
        family = bcm.models.get_family(model)
        args.sampler = "exact" if family.closed_form(data, priors, options) else "nuts"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bcm.ConvergenceWarning)
        if args.sampler == "exact":  # the family's closed form, no model: no PyMC, no ArviZ
            idata = fit_closed_form(model, data, priors=priors, options=options,
                                    draws=args.draws, chains=args.chains,
                                    random_seed=args.seed, metrics=metrics)
        else:
            idata = bcm.fit(builder(data, priors=priors, **options), sampler=args.sampler,
                            draws=args.draws, chains=args.chains, random_seed=args.seed,
                            metrics=metrics)
    table = bcm.summary(idata, metrics=metrics, hdi_prob=args.hdi_prob)
    report = bcm.check_convergence(idata)
    attrs = idata_mod.attrs(idata)
    posterior = idata_mod.group(idata, "posterior")
    if args.json:
        out = {
            **(cli_slices.slice_json(data) if sliced else {}),
            "counts": data.to_dict(),
            "model": model,
            "sampler": args.sampler,
            "engine": attrs["engine"],
            "draws": posterior.sizes["draw"],  # per chain, as --draws
            "chains": posterior.sizes["chain"],
            "priors": json.loads(attrs["priors"]),
            "hdi_prob": args.hdi_prob,
            "convergence": {"ok": report.ok, **{k: _clean(v) for k, v in report.worst.items()},
                            "divergences": report.divergences, "problems": report.problems},
            # one binary matrix: {metric: stats}; K classes: {classifier: {metric: stats,
            # or {class: stats} for a per-class metric}}
            "metrics": _metrics_json(table, by_classifier=registry.multiclass or sliced
                                     or len(data) > 1),  # a --csv of binary classifiers
        }
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    labels = [registry.get(k).label for k in table.index.get_level_values("metric")]
    if sliced:
        print(cli_slices.slice_text(data, table, labels))
        print(f"\nModel {model}, sampler {args.sampler}; {args.hdi_prob:.0%} HDI; hdi_width "
              "is the metric uncertainty")
        return _finish_text(report, caught)
    view = table.droplevel("classifier") if len(data) == 1 else table.copy()
    view.insert(0, "label", labels)
    if registry.multiclass:
        print(f"Confusion matrices (rows actual, columns predicted; N = "
              f"{', '.join(str(int(n)) for n in data.n)}):\n{data.to_frame()}")
    else:
        print(f"Confusion matrix: {data.to_dict()}  (N = "
              f"{', '.join(str(int(n)) for n in data.n)})")
    print(f"Model {model}, sampler {args.sampler}, priors {attrs['priors']}")
    print(f"{args.hdi_prob:.0%} HDI; hdi_width is the metric uncertainty; mcse_*: Monte "
          "Carlo standard errors; exact: the row is the closed-form Beta marginal\n")
    notes = [(idx, note) for idx, note in view.pop("note").items() if note]
    with pd.option_context("display.width", 200, "display.max_rows", 2000,
                           "display.max_columns", 20):
        print(view.to_string(float_format=_number))
    for idx, note in notes:
        print(f"  {'/'.join(idx) if isinstance(idx, tuple) else idx}: {note}")
    return _finish_text(report, caught)


def _finish_text(report: Any, caught: list) -> int:
    print("\n" + report.message())
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return 0


def _metrics_json(table: pd.DataFrame, *, by_classifier: bool) -> dict:
    """Summary rows as nested JSON: [classifier or slice ->] metric -> [class ->]
    statistics."""
    out: dict = {}
    for index, row in table.iterrows():
        where = dict(zip(table.index.names, index, strict=True))
        node = out.setdefault(where[table.index.names[0]], {}) if by_classifier else out
        stats = {col: _clean(v) for col, v in row.items()}
        if where.get("class", ""):
            node.setdefault(where["metric"], {})[where["class"]] = stats
        else:
            node[where["metric"]] = stats
    return out


def _nested_priors(items: list[tuple[str, str]]) -> dict:
    priors: dict = {}
    for name, spec in items:
        key, _, unit = name.partition(".")
        if unit:
            priors.setdefault(key, {})[unit] = spec
        else:
            priors[key] = spec
    return priors


def _app(args: argparse.Namespace) -> int:
    """Serve the app from a thread, print the address once it listens, wait for Ctrl+C."""
    import importlib.util

    if importlib.util.find_spec("panel") is None:
        print("bayescm: error: the web app needs Panel: pip install 'bayescm[app]' "
              "(or run `make app` in a clone of the repository).", file=sys.stderr)
        return 2
    from bayescm.app.server import PortInUse, free_port, serve

    def interrupt(*_: Any) -> None:  # `kill` (SIGTERM) stops it as Ctrl+C does
        raise KeyboardInterrupt

    port = args.port or free_port(args.host if args.host not in {"0.0.0.0", "::"} else "")
    shown = "127.0.0.1" if args.host in {"0.0.0.0", "::"} else args.host
    server = None
    try:
        # before the address is printed: whoever read it may stop the server at once
        signal.signal(signal.SIGTERM, interrupt)
        server = serve(port=port, host=args.host, show=args.show, threaded=True)
        print(f"bayescm app: serving on http://{shown}:{port}/ (Ctrl+C stops it)", flush=True)
        while server.is_alive():
            server.join(0.5)
    except KeyboardInterrupt:
        pass
    except PortInUse as err:  # a plain line and a failing exit, not "serving on ..."
        print(f"bayescm app: error: {err}", file=sys.stderr)
        return 1
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

