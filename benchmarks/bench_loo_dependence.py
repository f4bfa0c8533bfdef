"""LOO model choice over repeated simulations: does ``az.compare`` pick dependence?

Run from the repository root::

    .venv/bin/python benchmarks/bench_loo_dependence.py                # 40 studies per scenario
    .venv/bin/python benchmarks/bench_loo_dependence.py --studies 10   # quicker

Design (issue 13, item 4).  Three classifiers A, B, C on two populations with
prevalences 0.2 and 0.6, 1,000 cases each; Se = (0.85, 0.80, 0.90), Sp = (0.90,
0.85, 0.95).  The data have 2 x 7 = 14 degrees of freedom and the models 8
(independence) or 10 (A~B dependent) parameters, so both are identified by the data
and the comparison has spare degrees of freedom (a saturated model could only be
rewarded or penalised through its priors; see the model card).  Two scenarios:

* ``dependent``: A and B err together in both classes.  Each covariance sits at 90 %
  of the way from its lower to its upper bound (``cov_se_position = cov_sp_position
  = 0.9`` in the model's own parametrisation): cov_se = 0.105 (correlation of A's and
  B's results among the positives 0.74) and cov_sp = 0.075 (0.70 among the
  negatives).  This is "strong" dependence: near the largest the margins allow,
  as between two classifiers trained on the same features.
* ``independent``: the same Se, Sp and prevalences, no covariance.

Each simulated table is fitted twice with ``bcm.fit`` (NUTS on the compiled kernel,
4 chains x 1,000 draws by default): ``hui_walter(tab)`` and ``hui_walter(tab,
conditional_dependence=[("A", "B")])``, and the fits go to ``az.compare`` (PSIS-LOO,
Vehtari, Gelman & Gabry 2017).  Per scenario the script prints, measured in this run:

* how often the dependent model ranks first;
* how often it is preferred by more than 2 dse (its advantage ``elpd_diff`` exceeds
  twice the standard error of the difference), and by the card's rule (more than
  4 **and** more than 2 dse; Sivula, Magnusson, Matamoros & Vehtari 2022);
* the mean elpd gain of the dependent model (negative when the independent model
  predicts better) with its spread over studies, and the mean dse;
* the share of fits with a Pareto k warning (some k > 0.7), divergences and fits
  that did not pass the convergence check, per model;
* the time per fit and per comparison.

On independent data the dependent model nests the true one: LOO is asymptotically
AIC (Stone, "An asymptotic equivalence of choice of model by cross-validation and
Akaike's criterion", 1977), so its elpd gain is about LR/2 - 2 with LR ~ chi2(2)
(mean -1, sd 1) and it ranks first with probability P(chi2(2) > 4) = exp(-2) =
13.5 % by chance; the script prints these reference values next to the measured ones.

Rates carry a Wilson 95 % interval for S studies (``bayescm.intervals.binomial``).
No timing is asserted; ``tests/inference/test_loo_rates.py`` (``-m slow``) asserts the rates on
a smaller run of the same design, which it imports from here.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from dataclasses import dataclass

import numpy as np

SENSITIVITY = np.array([0.85, 0.80, 0.90])
SPECIFICITY = np.array([0.90, 0.85, 0.95])
PREVALENCE = np.array([0.2, 0.6])
CASES = 1000  # per population
POSITION = 0.9  # of each covariance between its lower (0) and upper (1) bound
CLASSIFIERS = ["A", "B", "C"]
DEPENDENT_PAIR = ("A", "B")
MODELS = {"independent": False, "A~B dependent": [DEPENDENT_PAIR]}
SCENARIOS = {"dependent": 1000, "independent": 2000}  # scenario -> first seed


def simulate(seed: int, dependent: bool):
    """One simulated study: a two-population ``AgreementTable`` of 3 classifiers."""
    import bayescm as bcm
    from bayescm.models.hui_walter.model import pattern_probabilities

    pairs = [(0, 1)] if dependent else []
    u = np.array([POSITION]) if dependent else None
    prob, _, _ = pattern_probabilities(SENSITIVITY, SPECIFICITY, PREVALENCE, u, u, 3, pairs)
    rng = np.random.default_rng(seed)
    patterns = ["".join(p) for p in itertools.product("+-", repeat=3)]
    return bcm.AgreementTable.from_counts(
        {f"site{i + 1}": dict(zip(patterns, map(int, rng.multinomial(CASES, p / p.sum())),
                                  strict=True))
         for i, p in enumerate(prob)}, classifiers=CLASSIFIERS)


@dataclass(frozen=True)
class Study:
    """What one comparison found."""

    first: bool  # the dependent model ranks first
    gain: float  # elpd_loo(dependent) - elpd_loo(independent)
    dse: float  # standard error of that difference
    pareto_warning: dict[str, bool]  # per model: some Pareto k > 0.7
    divergences: dict[str, int]
    converged: dict[str, bool]
    fit_seconds: dict[str, float]
    compare_seconds: float

    def preferred(self, *, margin: float = 0.0) -> bool:
        """The dependent model wins by more than 2 dse (and more than ``margin``)."""
        return self.gain > 2 * self.dse and self.gain > margin


def compare(tab, *, draws: int = 1000, chains: int = 4, random_seed: int = 0):
    """Fit both models to ``tab`` and run ``az.compare``; returns (fits, comparison, seconds).

    Convergence warnings are recorded in the fits (``fit`` checks every run), not shown.
    """
    import arviz as az

    import bayescm as bcm
    from bayescm.inference.convergence import ConvergenceWarning

    fits, seconds = {}, {}
    for name, dependence in MODELS.items():
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits[name] = bcm.fit(bcm.models.hui_walter(tab, conditional_dependence=dependence),
                                 draws=draws, chains=chains, random_seed=random_seed)
        seconds[name] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # ArviZ 0.23's compare passes sort_values(inplace=...), deprecated by pandas 3.1;
        # a notice about ArviZ, not about this comparison
        warnings.filterwarnings("ignore", message="The inplace keyword",
                                category=DeprecationWarning)
        comparison = az.compare(fits)
    seconds["compare"] = time.perf_counter() - t0
    return fits, comparison, seconds


def one_study(seed: int, dependent: bool, **fit_options) -> Study:
    """Simulate a table with ``seed``, fit both models and compare them."""
    fits, comparison, seconds = compare(simulate(seed, dependent), random_seed=seed,
                                        **fit_options)
    ind, dep = MODELS
    gain = float(comparison.loc[dep, "elpd_loo"] - comparison.loc[ind, "elpd_loo"])
    runner_up = comparison.index[-1]  # the dse of the difference is on its row
    return Study(
        first=comparison.index[0] == dep, gain=gain,
        dse=float(comparison.loc[runner_up, "dse"]),
        pareto_warning={name: bool(comparison.loc[name, "warning"]) for name in MODELS},
        divergences={name: int(idata.sample_stats["diverging"].sum())
                     for name, idata in fits.items()},
        # fit ran the convergence check and recorded its verdict
        converged={name: bool(idata.attrs["converged"]) for name, idata in fits.items()},
        fit_seconds={name: seconds[name] for name in MODELS},
        compare_seconds=seconds["compare"])


def run(scenario: str, studies: int, **fit_options) -> list[Study]:
    """``studies`` simulated studies of a scenario (seeds fixed per scenario)."""
    first_seed = SCENARIOS[scenario]
    return [one_study(first_seed + i, scenario == "dependent", **fit_options)
            for i in range(studies)]


def rate(hits: int, n: int) -> str:
    from bayescm import intervals

    lo, hi = intervals.binomial(hits, n, method="wilson")
    return f"{hits}/{n} = {hits / n:.0%} (95% {float(lo):.0%}-{float(hi):.0%})"


def report(scenario: str, results: list[Study]) -> None:
    n = len(results)
    gains = np.array([r.gain for r in results])
    print(f"\n== {scenario} data: {n} studies ==")
    print(f"dependent model ranks first             {rate(sum(r.first for r in results), n)}")
    print(f"preferred by > 2 dse                    "
          f"{rate(sum(r.preferred() for r in results), n)}")
    print(f"preferred by > 4 and > 2 dse (card)     "
          f"{rate(sum(r.preferred(margin=4) for r in results), n)}")
    print(f"elpd gain of the dependent model        mean {gains.mean():.1f}, "
          f"sd over studies {gains.std(ddof=1) if n > 1 else float('nan'):.1f}, "
          f"range {gains.min():.1f} to {gains.max():.1f}")
    print(f"dse                                     mean {np.mean([r.dse for r in results]):.1f}")
    if scenario == "independent":
        print("AIC asymptotics for independent data (Stone 1977): gain ~ chi2(2)/2 - 2, i.e. "
              "mean -1, sd 1, ranks first with probability exp(-2) = 13.5%")
    for name in MODELS:
        warn = sum(r.pareto_warning[name] for r in results)
        div = [r.divergences[name] for r in results]
        bad = sum(not r.converged[name] for r in results)
        secs = np.array([r.fit_seconds[name] for r in results])
        print(f"{name:>15}: Pareto k warning {rate(warn, n)}; divergences {sum(div)} in "
              f"{sum(d > 0 for d in div)} fits; not converged {bad}; "
              f"fit {np.median(secs):.2f} s median ({secs.max():.2f} s max)")
    print(f"az.compare: {np.median([r.compare_seconds for r in results]):.2f} s median")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=40, help="simulated studies per scenario")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    args = parser.parse_args()
    print(f"Design: Se {SENSITIVITY.tolist()}, Sp {SPECIFICITY.tolist()}, prevalence "
          f"{PREVALENCE.tolist()}, {CASES} cases per population; dependent scenario: A~B "
          f"covariances at position {POSITION} of their bounds. Fits: NUTS, "
          f"{args.chains} chains x {args.draws} draws.")
    t0 = time.perf_counter()
    for scenario in SCENARIOS:
        report(scenario, run(scenario, args.studies, draws=args.draws, chains=args.chains))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
