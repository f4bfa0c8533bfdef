"""Wall time of the light paths in fresh processes, against the scientific-Python floor.

Prints, in one run, the median over ``--runs`` fresh interpreters of

* ``import bayescm``,
* ``bayescm summarize --tp 26 --fn 0 --fp 2 --tn 6`` (exact sampler, the default),
* ``bcm.fit(bcm.models.three_beta(cm), sampler="exact")`` (builds the PyMC model),

each next to ``python -c "import numpy, scipy.stats, pandas, xarray"`` timed in the same
rounds (interleaved, so that a busy machine slows all alike), with the ratios.
Targets (issue 11): the CLI within 1.3x of the floor, ``import bayescm`` within 1.1x.

    .venv/bin/python benchmarks/bench_import.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
CASES = {
    "floor: import numpy, scipy.stats, pandas, xarray":
        [sys.executable, "-c", "import numpy, scipy.stats, pandas, xarray"],
    "import bayescm": [sys.executable, "-c", "import bayescm"],
    "bayescm summarize (exact)":
        [sys.executable, "-m", "bayescm.cli", "summarize", "--tp", "26", "--fn", "0",
         "--fp", "2", "--tn", "6"],
    "bcm.fit(three_beta, sampler='exact')":
        [sys.executable, "-c", "import bayescm as bcm; cm = bcm.ConfusionMatrix(tp=26, fn=0, "
         "fp=2, tn=6); bcm.fit(bcm.models.three_beta(cm), sampler='exact', random_seed=1)"],
}
TARGETS = {"import bayescm": 1.1, "bayescm summarize (exact)": 1.3}


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    for cmd in CASES.values():  # warm the file cache and the .pyc files
        _time(cmd)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(runs):
        for name, cmd in CASES.items():
            times[name].append(_time(cmd))
    floor_name = next(iter(CASES))
    floor = statistics.median(times[floor_name])
    print(f"median of {runs} fresh processes each (interleaved), {sys.version.split()[0]}")
    print(f"{'case':<42} {'median s':>9} {'min s':>7} {'x floor':>8}  target")
    for name, values in times.items():
        med = statistics.median(values)
        target = f"<= {TARGETS[name]}x" if name in TARGETS else ""
        verdict = ("" if name not in TARGETS
                   else " ok" if med / floor <= TARGETS[name] else " MISSED")
        print(f"{name:<42} {med:9.2f} {min(values):7.2f} {med / floor:8.2f}  {target}{verdict}")
    print(f"(floor {floor:.2f} s; this machine is shared and noisy: compare ratios, not seconds)")


if __name__ == "__main__":
    main()
