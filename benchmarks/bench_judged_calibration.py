"""Judge-assisted evaluation: bayescm's Dawid–Skene intervals against PPI++ (ppi_py).

The setting of issue 26: N = 10,000 items judged, the true class known on n of them
(n in 20, 50, 100, 200).  K = 2 classes, positive class 1 with prevalence 0.3;

* the model under test predicts a class: TPR 0.75, TNR 0.82 (accuracy 0.799);
* the judge gives a class and agrees with the truth on 85% of items (TPR = TNR = 0.85);
* given the true class, the judge's errors are independent of the model's.

Each replication draws the N items, hides the truth except on the first n, and sets
two 95% intervals of the model's accuracy (the population value, 0.799) against it:

* ``bayescm``: :func:`bayescm.analysis.judge_assisted` (the model and the judge as two
  raters of a Dawid–Skene model, gold items with their class; NUTS, 4 chains x 1,000
  draws, ``target_accept`` 0.95: the function's defaults), its 95% HDI;
* ``PPI++``: ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05, lam=None)``
  (Angelopoulos, Duchi & Zrnic, "PPI++: efficient prediction-powered inference",
  2023), where item i's outcome is 1{model's label == true class} on the n gold items
  and its prediction 1{model's label == judge's label} on every item (the N - n others
  as unlabelled).

Printed per n: coverage of each with its binomial Monte Carlo error
sqrt(c (1 - c) / R), the mean widths and their ratio bayescm / PPI++; and the
coverage of bayescm's 95% HDIs of the positive class's precision (PPV 0.641) and F1
(0.691), which PPI does not give.

The misspecified scenario ("noticed", not a target): the judge errs more often where
the model errs (P(judge wrong | model wrong) = 0.35, P(judge wrong | model right) chosen
so that the judge still agrees with the truth on 85% of items): the latent-class model
assumes conditional independence and sees too much agreement, PPI++ assumes nothing
about the judge.

Measured (R = 300 at n = 20, 50; R = 200 at 100, 200; 150 misspecified; ± binomial
MC error; widths are means):

    n    bayescm acc      PPI++ acc        width ratio  bayescm PPV(1)   F1(1)
    20   0.973 ± 0.009    0.840 ± 0.021    0.592        0.950 ± 0.013    0.950 ± 0.013
    50   0.950 ± 0.013    0.950 ± 0.013    0.639        0.947 ± 0.013    0.943 ± 0.013
    100  0.950 ± 0.015    0.900 ± 0.021    0.667        0.950 ± 0.015    0.955 ± 0.015
    200  0.970 ± 0.012    0.975 ± 0.011    0.707        0.930 ± 0.018    0.960 ± 0.014
    misspecified: n = 50  bayescm 0.013 ± 0.009, PPI++ 0.920 ± 0.022 (bayescm bias +0.071)
                  n = 200 bayescm 0.000,         PPI++ 0.927 ± 0.021 (bias +0.065)

Run:  python benchmarks/bench_judged_calibration.py --reps 400
      (about 1 s per replication and n; --ns 20 50 to choose n; --mis-reps 0 to skip
      the misspecified scenario.)
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

PREVALENCE = 0.3
MODEL_TPR, MODEL_TNR = 0.75, 0.82
JUDGE_ACC = 0.85
#: P(judge wrong | model wrong) in the misspecified scenario.
CORRELATED_WRONG = 0.35
N_ITEMS = 10_000
HDI_PROB = 0.95


def truths() -> dict[str, float]:
    """Population accuracy, and the positive class's precision and F1, of the model."""
    tp, fn = PREVALENCE * MODEL_TPR, PREVALENCE * (1 - MODEL_TPR)
    fp = (1 - PREVALENCE) * (1 - MODEL_TNR)
    tn = (1 - PREVALENCE) * MODEL_TNR
    ppv = tp / (tp + fp)
    assert abs(tp + fn + fp + tn - 1) < 1e-12
    return {"acc": tp + tn, "ppv": ppv, "f1": 2 * ppv * MODEL_TPR / (ppv + MODEL_TPR)}


def simulate(rng: np.random.Generator, n_items: int = N_ITEMS, *,
             correlated: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True classes, the model's and the judge's labels of ``n_items`` items."""
    z = (rng.random(n_items) < PREVALENCE).astype(int)
    model_right = np.where(z == 1, rng.random(n_items) < MODEL_TPR,
                           rng.random(n_items) < MODEL_TNR)
    y_pred = np.where(model_right, z, 1 - z)
    if correlated:
        acc = truths()["acc"]
        # overall P(judge wrong) = (1 - acc) * CORRELATED_WRONG + acc * q = 1 - JUDGE_ACC
        q = (1 - JUDGE_ACC - (1 - acc) * CORRELATED_WRONG) / acc
        judge_wrong = rng.random(n_items) < np.where(model_right, q, CORRELATED_WRONG)
    else:
        judge_wrong = rng.random(n_items) >= JUDGE_ACC
    judge = np.where(judge_wrong, 1 - z, z)
    return z, y_pred, judge


def ppi_interval(z: np.ndarray, y_pred: np.ndarray, judge: np.ndarray, n: int
                 ) -> tuple[float, float]:
    """PPI++ 95% interval of the model's accuracy (gold on the first n items)."""
    from ppi_py import ppi_mean_ci

    agree = (y_pred == judge).astype(float)
    correct = (y_pred[:n] == z[:n]).astype(float)
    lo, hi = ppi_mean_ci(correct, agree[:n], agree[n:], alpha=1 - HDI_PROB, lam=None)
    return float(np.ravel(lo)[0]), float(np.ravel(hi)[0])


def bayescm_intervals(z: np.ndarray, y_pred: np.ndarray, judge: np.ndarray, n: int,
                      seed: int, draws: int = 1000, tune: int = 1000
                      ) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """bayescm's 95% HDIs of accuracy and the positive class's PPV and F1, and the
    warnings of the fit (convergence, identifiability)."""
    import bayescm as bcm

    gold = np.full(z.size, None, dtype=object)
    gold[:n] = z[:n]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bcm.analysis.judge_assisted(y_pred, {"judge": judge}, gold,
                                          metrics=("acc", "ppv", "f1"), draws=draws,
                                          tune=tune, random_seed=seed, hdi_prob=HDI_PROB)
    table = res.summary()
    out = {"acc": tuple(table.loc[("acc", ""), ["hdi_lower", "hdi_upper"]])}
    for key in ("ppv", "f1"):
        out[key] = tuple(table.loc[(key, 1), ["hdi_lower", "hdi_upper"]])
    return out, [f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught]


@dataclass
class Tally:
    """Coverage indicators and widths of one method and quantity."""

    covered: list[bool] = field(default_factory=list)
    widths: list[float] = field(default_factory=list)
    warned: list[str] = field(default_factory=list)
    errors: list[float] = field(default_factory=list)

    def add(self, interval: tuple[float, float], truth: float) -> None:
        lo, hi = interval
        self.covered.append(bool(lo <= truth <= hi))
        self.widths.append(hi - lo)
        self.errors.append((lo + hi) / 2 - truth)

    @property
    def bias(self) -> float:
        """Mean error of the interval's midpoint."""
        return float(np.mean(self.errors))

    @property
    def coverage(self) -> float:
        return float(np.mean(self.covered))

    @property
    def mc_se(self) -> float:
        """Binomial Monte Carlo error of the coverage."""
        c, r = self.coverage, len(self.covered)
        return float(np.sqrt(max(c * (1 - c), 1e-12) / r))

    @property
    def width(self) -> float:
        return float(np.mean(self.widths))


def run(n: int, reps: int, seed: int, *, correlated: bool = False, draws: int = 1000,
        tune: int = 1000, n_items: int = N_ITEMS, progress: int = 0) -> dict[str, Tally]:
    """R replications at n gold items: tallies of bayescm (acc, ppv, f1) and PPI++ (acc);
    the running figures every ``progress`` replications."""
    truth = truths()
    tallies = {name: Tally() for name in ("bayescm_acc", "ppi_acc", "bayescm_ppv",
                                          "bayescm_f1")}
    rng = np.random.default_rng([seed, n, int(correlated)])
    for r in range(reps):
        z, y_pred, judge = simulate(rng, n_items, correlated=correlated)
        tallies["ppi_acc"].add(ppi_interval(z, y_pred, judge, n), truth["acc"])
        found, caught = bayescm_intervals(z, y_pred, judge, n, seed=seed * 100_003 + r,
                                          draws=draws, tune=tune)
        tallies["bayescm_acc"].warned.extend(caught)
        for key in ("acc", "ppv", "f1"):
            tallies[f"bayescm_{key}"].add(found[key], truth[key])
        if progress and (r + 1) % progress == 0 and r + 1 < reps:
            print(f"  ... {report(n, tallies, 0.0).split('  [')[0]}", flush=True)
    return tallies


def report(n: int, t: dict[str, Tally], seconds: float) -> str:
    b, p = t["bayescm_acc"], t["ppi_acc"]
    return (f"n={n:>4}  R={len(b.covered):>4}  accuracy coverage: bayescm "
            f"{b.coverage:.3f} ± {b.mc_se:.3f}, PPI++ {p.coverage:.3f} ± {p.mc_se:.3f}; "
            f"mean width bayescm {b.width:.4f}, PPI++ {p.width:.4f}, ratio "
            f"{b.width / p.width:.3f}, midpoint bias bayescm {b.bias:+.4f}, PPI++ "
            f"{p.bias:+.4f};  bayescm PPV(1) {t['bayescm_ppv'].coverage:.3f} ± "
            f"{t['bayescm_ppv'].mc_se:.3f} (width {t['bayescm_ppv'].width:.3f}, bias "
            f"{t['bayescm_ppv'].bias:+.4f}), F1(1) "
            f"{t['bayescm_f1'].coverage:.3f} ± {t['bayescm_f1'].mc_se:.3f} "
            f"(width {t['bayescm_f1'].width:.3f}); fit warnings: {_kinds(b.warned)}"
            f"  [{seconds:.0f} s]")


def _kinds(warned: list[str]) -> str:
    """Warnings counted by category."""
    names, counts = np.unique([w.split(":")[0] for w in warned], return_counts=True)
    return ", ".join(f"{c} {n}" for n, c in zip(names, counts, strict=True)) or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--ns", type=int, nargs="+", default=[20, 50, 100, 200])
    parser.add_argument("--mis-reps", type=int, default=200)
    parser.add_argument("--mis-ns", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--progress", type=int, default=50,
                        help="print the running figures every this many replications")
    args = parser.parse_args()
    truth = truths()
    print(f"N = {N_ITEMS} items, prevalence {PREVALENCE}, model TPR {MODEL_TPR} TNR "
          f"{MODEL_TNR} (accuracy {truth['acc']:.4f}, PPV(1) {truth['ppv']:.4f}, F1(1) "
          f"{truth['f1']:.4f}), judge agrees with the truth on {JUDGE_ACC:.0%}; "
          f"{HDI_PROB:.0%} intervals", flush=True)
    print("Conditionally independent judge (targets: bayescm coverage >= 0.94 at n = 20, "
          "50; width <= 1.05 x PPI++ at n >= 100)", flush=True)
    for n in args.ns:
        start = time.perf_counter()
        print(report(n, run(n, args.reps, args.seed, progress=args.progress),
                     time.perf_counter() - start), flush=True)
    if args.mis_reps:
        print(f"Misspecified: P(judge wrong | model wrong) = {CORRELATED_WRONG} (noticed, "
              "not a target)", flush=True)
        for n in args.mis_ns:
            start = time.perf_counter()
            print(report(n, run(n, args.mis_reps, args.seed, correlated=True,
                                 progress=args.progress), time.perf_counter() - start),
                  flush=True)


if __name__ == "__main__":
    main()
