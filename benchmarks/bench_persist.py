"""Saving and loading a fit: ``bcm.save``/``bcm.load`` against ArviZ's defaults.

ArviZ's ``InferenceData.to_netcdf`` writes through h5netcdf and zlib-compresses every
numeric variable at level 4; ``bayescm.idata.write`` writes through the netCDF C library
(``netCDF4``) and compresses only integer and boolean variables, at level 1.  Both
files are netCDF-4/HDF5 and ArviZ reads either.  Timed in one process, median of
``--runs``; ``bcm.save``/``bcm.load`` include the content hash and its check.

    .venv/bin/python benchmarks/bench_persist.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    import arviz as az

    import bayescm as bcm

    warnings.simplefilter("ignore")
    fits = {
        "NUTS, 24 literature matrices": bcm.fit(
            bcm.models.three_beta(bcm.datasets.totsch_literature()), random_seed=1),
        "exact, one matrix, 10^6 draws": bcm.fit(
            bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)),
            sampler="exact", random_seed=1),
    }
    directory = tempfile.mkdtemp()
    print(f"{'fit':<32} {'how':<22} {'write s':>8} {'read s':>8} {'MB':>7}")
    for label, idata in fits.items():
        ways = {
            "ArviZ defaults": (lambda p, i=idata: i.to_netcdf(p),
                               lambda p: az.from_netcdf(p).map(lambda d: d.load())),
            "bcm.save / bcm.load": (lambda p, i=idata: bcm.save(i, p), bcm.load),
        }
        times = {}
        for how, (write, read) in ways.items():
            path = os.path.join(directory, "fit.nc")
            w, r = [], []
            for _ in range(runs):
                start = time.perf_counter()
                write(path)
                w.append(time.perf_counter() - start)
                start = time.perf_counter()
                read(path)
                r.append(time.perf_counter() - start)
            times[how] = (statistics.median(w), statistics.median(r))
            print(f"{label:<32} {how:<22} {times[how][0]:8.2f} {times[how][1]:8.2f} "
                  f"{os.path.getsize(path) / 1e6:7.1f}")
            os.remove(path)
        (aw, ar), (bw, br) = times.values()
        print(f"{'':<32} {'ratio (ArviZ / bcm)':<22} {aw / bw:7.1f}x {ar / br:7.1f}x")


if __name__ == "__main__":
    main()
