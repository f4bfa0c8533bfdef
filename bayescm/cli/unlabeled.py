"""``bayescm unlabeled``: the Hui–Walter latent-class answer from counts or a CSV.

The default sampler for a complete table is Gibbs in NumPy
(:mod:`bayescm.models.hui_walter.gibbs`); ``--sampler nuts`` runs nutpie on the
family's compiled density.  Neither builds a PyMC model, so the command answers in about
a second (``benchmarks/bench_shell.py``: 4.8x a JAGS script of the same model where Dask
is not installed, 6.4x where it is, xarray then importing it on its first array).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable

import pandas as pd

from bayescm.cli import input as cli_input

__all__ = ["parse_counts", "run"]


def parse_counts(text: str) -> dict:
    """``'s1:++=89,+-=43;s2:...'`` as ``{population: {pattern: count}}``."""
    tables = {}
    for i, part in enumerate(p for p in text.split(";") if p.strip()):
        name, sep, body = part.rpartition(":")
        name = name.strip() if sep else ("all" if ";" not in text else f"pop{i}")
        table = {}
        for item in body.split(","):
            pattern, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"Cannot read {item!r}: write pattern=count, e.g. '+-=3'.")
            table[pattern.strip()] = float(value)
        tables[name] = table
    return tables


def run(args: argparse.Namespace, nested_priors: Callable[[list], dict],
        clean: Callable[[object], object]) -> int:
    """Fit, summarise and print (or ``--json``); bad input raises ValueError (the caller
    prints it)."""
    import bayescm as bcm

    names = args.classifiers.split(",") if args.classifiers else None
    if args.counts:
        tab = bcm.AgreementTable.from_counts(parse_counts(args.counts), classifiers=names)
    else:
        tab = cli_input.unlabeled_csv(args)
    dependence: object = False
    if args.dependence:
        dependence = True if args.dependence == "all" else [
            tuple(p.split("~")) for p in args.dependence.split(",")]
    from bayescm.inference import engines, fit_kernel

    metrics = args.metrics.split(",")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        priors = nested_priors(args.prior)
        # the kernel's inputs (or a Gibbs sampler) from data and priors: no PyMC
        gibbs = args.sampler == "gibbs" or (args.sampler == "auto" and tab.complete
                                            and dependence is False)
        # only the metrics shown are computed on the draws
        if gibbs or engines.kernel_supported():
            idata = fit_kernel("hui_walter", tab, priors=priors,
                               options={"conditional_dependence": dependence},
                               draws=args.draws, chains=args.chains, random_seed=args.seed,
                               log_likelihood=False, sampler=args.sampler, metrics=metrics)
        else:
            model = bcm.models.hui_walter(tab, priors=priors, conditional_dependence=dependence)
            idata = bcm.fit(model, draws=args.draws, chains=args.chains, random_seed=args.seed,
                            metrics=metrics)
    table = bcm.summary(idata, metrics=metrics, hdi_prob=args.hdi_prob).drop(columns="plug_in")
    check = bcm.posterior_predictive_check(idata)
    # ArviZ's estimators where ArviZ is loaded (NUTS: nutpie loads it); after a Gibbs run,
    # the same estimators vectorised, without importing ArviZ (seconds of a shell command)
    report = bcm.check_convergence(
        idata, backend="auto" if "arviz" in sys.modules else "vectorised")
    # bayescm's warnings of this fit, each once (in the order raised); others are noise here
    from bayescm.models.hui_walter import PriorTruncationWarning

    shown = (PriorTruncationWarning, bcm.models.IdentifiabilityWarning, bcm.ConvergenceWarning)
    notes = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, shown)))
    if args.json:
        out = {
            "counts": {p: dict(zip(tab.patterns, map(int, row), strict=True))
                       for p, row in zip(tab.populations, tab.counts, strict=True)},
            "classifiers": list(tab.classifiers),
            "priors": json.loads(idata.attrs["priors"]),
            "hdi_prob": args.hdi_prob,
            "identifiability": idata.attrs.get("identifiability"),
            "convergence": {"ok": report.ok, **{k: clean(v) for k, v in report.worst.items()},
                            "divergences": report.divergences},
            "fit_check": {k: {c: clean(v) for c, v in row.items()}
                          for k, row in check.iterrows()},
            "warnings": notes,
            "metrics": {
                pop: {clf: {key: {c: clean(v) for c, v in table.loc[(pop, clf, key)].items()}
                            for key in metrics}
                      for clf in tab.classifiers}
                for pop in tab.populations
            },
        }
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    print(tab)
    # a verdict that warned is said once, on stderr below; one that did not, here
    verdict = str(idata.attrs.get("identifiability", ""))
    print(f"\n{verdict}\n" if verdict not in notes else "")
    with pd.option_context("display.width", 140, "display.max_rows", 500):
        print(table.to_string(float_format=lambda v: f"{v:.4f}"))
        print("\nPosterior predictive check (chi-square discrepancy):")
        print(check.to_string(float_format=lambda v: f"{v:.3f}"))
    if report.message() not in notes:
        print("\n" + report.message())
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    return 0
