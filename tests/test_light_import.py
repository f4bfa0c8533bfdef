"""``import bayescm`` and the paths that need no PyMC model stay light (issue 11 item 4).

Each check runs in a fresh interpreter and looks at ``sys.modules``: neither PyMC,
PyTensor, nutpie nor ArviZ (nor matplotlib, nor the app's Panel) is imported by
``import bayescm``, the exact pmfs, the intervals, the curves, the analysis of a
ConfusionMatrix or ``bayescm summarize`` with the exact sampler; building a model
imports PyMC.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("pymc", "pytensor", "nutpie", "arviz", "matplotlib", "panel", "bokeh")

PRELUDE = """
import sys, bayescm as bcm
cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
"""

PATHS = {
    "import": "",
    "exact pmf": "from bayescm import exact; exact.metric_pmf(cm, 'ba', 20, 40)",
    "interval": "bcm.intervals.binomial(26, 28, method='wilson'); "
                "bcm.intervals.binomial(26, 28, method='bayes_hdi')",
    "curve": "import numpy as np; rng = np.random.default_rng(1); y = rng.integers(0, 2, 60)\n"
             "bcm.curves.roc(rng.normal(y, 1.0), y, random_seed=1, draws=200)",
    "deception": "bcm.analysis.deception(cm); bcm.analysis.metric_uncertainty(cm, 'tpr')",
    "summarize": "from bayescm import cli; import contextlib, io\n"
                 "with contextlib.redirect_stdout(io.StringIO()):\n"
                 "    assert cli.main(['summarize', '--tp', '26', '--fn', '0', '--fp', '2',"
                 " '--tn', '6']) == 0",
    "public names": "names = [getattr(bcm, n) for n in ('ConfusionMatrix', 'summary', "
                    "'check_convergence', 'models', 'priors', 'metrics', 'analysis')]; "
                    "bcm.models.get_family('three_beta'); bcm.priors.defaults('three_beta')",
}


def _loaded(code: str) -> list[str]:
    report = f"print('LOADED:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    script = f"{PRELUDE}{code}\n{report}\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("LOADED:"), out.stdout
    return [m for m in line.removeprefix("LOADED:").split(",") if m]


@pytest.mark.parametrize("path", list(PATHS))
def test_paths_without_a_model_stay_light(path: str) -> None:
    assert _loaded(PATHS[path]) == []


def test_building_a_model_imports_pymc_and_fitting_arviz() -> None:
    loaded = _loaded("bcm.models.three_beta(cm)\n"
                     "print(','.join(m for m in ('pymc', 'pytensor') if m in sys.modules))\n"
                     "bcm.fit(bcm.models.three_beta(cm), sampler='exact', random_seed=1)")
    assert {"pymc", "pytensor", "arviz"} <= set(loaded)


def test_lazy_names_are_complete() -> None:
    import bayescm as bcm

    assert set(bcm.__all__) == set(bcm._LAZY) | {"__version__", "CELLS", "ConfusionMatrix",
                                                  "CountsError", "PriorError", "summary",
                                                  "report", "app"}
    assert set(bcm.__all__) <= set(dir(bcm))
    for name in bcm.__all__:
        assert getattr(bcm, name) is not None
    assert callable(bcm.summary) and callable(bcm.fit) and callable(bcm.save)
    assert callable(bcm.report) and callable(bcm.app)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bcm.nope  # noqa: B018
