"""``bayescm demo``: the main job on the built-in example data (Tötsch & Hoffmann's
literature collection), printed and written to a folder."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

__all__ = ["demo"]


def demo(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import arviz as az
    import matplotlib.pyplot as plt

    import bayescm as bcm
    from bayescm.data import datasets

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    table = datasets.totsch_literature_table()
    cms = datasets.totsch_literature()
    print("bayescm demo: 24 published classifiers (Tötsch & Hoffmann 2021, Table S1)\n")
    idata = bcm.fit(bcm.models.three_beta(cms), random_seed=args.seed)
    summ = bcm.summary(idata)
    summ.to_csv(out / "literature_summary.csv")
    bcm.save(idata, out / "literature_posterior.nc")
    # exact, by quadrature over the Beta posteriors of TPR and TNR
    p_deceptive = bcm.analysis.deception(cms)["r_deceptive"]
    rows = []
    for name in cms.classifiers:
        s = summ.loc[name]
        rows.append({
            "classifier": name, "N": int(table.loc[name, "n"]),
            "TPR": f"{s.loc['tpr', 'plug_in']:.2f} [{s.loc['tpr', 'hdi_lower']:.2f}, "
                   f"{s.loc['tpr', 'hdi_upper']:.2f}]",
            "TNR": f"{s.loc['tnr', 'plug_in']:.2f} [{s.loc['tnr', 'hdi_lower']:.2f}, "
                   f"{s.loc['tnr', 'hdi_upper']:.2f}]",
            "MU(tpr)": round(float(s.loc["tpr", "hdi_width"]), 2),
            "MU(tnr)": round(float(s.loc["tnr", "hdi_width"]), 2),
            "P(worse than guessing)": f"{p_deceptive[name]:.1%}",
        })
    report = pd.DataFrame(rows).set_index("classifier")
    report.to_csv(out / "literature_report.csv")
    with pd.option_context("display.width", 140):
        print("Plug-in value [95% HDI], metric uncertainty MU = HDI width, and the posterior")
        print("probability that informedness BM = TPR + TNR - 1 is negative (exact):\n")
        print(report.to_string())
    print("\n" + bcm.check_convergence(idata).message())

    cocaine = summ.loc["7a"]
    print(
        "\nCocaine purity classifier 7a (tp=26, fn=0, fp=2, tn=6): reported as TPR 100%, "
        f"TNR 75%;\nhonestly TPR {cocaine.loc['tpr', 'hdi_lower']:.0%}-"
        f"{cocaine.loc['tpr', 'hdi_upper']:.0%}, TNR {cocaine.loc['tnr', 'hdi_lower']:.0%}-"
        f"{cocaine.loc['tnr', 'hdi_upper']:.0%} (95% HDI)."
    )
    axes = az.plot_forest(idata, var_names=["bm"], combined=True, hdi_prob=0.95,
                          figsize=(6, 8))
    axes[0].axvline(0, color="grey", lw=1, ls="--")
    axes[0].set_title("Informedness (BM) of 24 published classifiers, 95% HDI")
    plt.savefig(out / "literature_bm_forest.png", dpi=100, bbox_inches="tight")
    plt.close("all")
    print(f"\nWrote {', '.join(sorted(p.name for p in out.iterdir()))} to {out}/")
    return 0
