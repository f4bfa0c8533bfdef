"""An install from the wheel runs: the CLI and the JAGS twin (package data) included."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# one worker builds the wheel once for all three tests (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("wheel")


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    """A fresh virtual environment with bayescm installed from its wheel.

    Its dependencies come from the test environment through a path entry (a plain
    directory on ``sys.path``, so the editable install's finder there is not used):
    what is tested is the wheel's own content.
    """
    tmp = tmp_path_factory.mktemp("wheel")
    # build from a copy of the sources: an in-tree build would leave build/ behind, and
    # a stale build/lib would leak removed modules into later wheels
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", "demo-output",
        ".pytest_cache", ".ruff_cache", "notebooks", "docs"))
    # uv (the test extra installs it): the build, the venv and the install take 3 s
    # against pip's 12-16 s, with the same build backend (setuptools) in isolation,
    # fetched through the system's certificate store as the Makefile's installs are
    uv = [sys.executable, "-m", "uv", "--quiet", "--system-certs"]
    subprocess.run([*uv, "build", "--wheel", "-o", str(tmp / "dist"), str(src)],
                   check=True, capture_output=True)
    wheel = next((tmp / "dist").glob("bayescm-*.whl"))
    venv = tmp / "venv"
    subprocess.run([*uv, "venv", "--python", sys.executable, str(venv)], check=True,
                   capture_output=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], check=True, capture_output=True, text=True
                          ).stdout.strip()
    pathlib.Path(site, "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([*uv, "pip", "install", "--no-deps", "--python", str(python), str(wheel)],
                   check=True, capture_output=True)
    return {"wheel": wheel, "python": python, "bin": venv / "bin", "site": site, "cwd": tmp}


def test_the_wheel_ships_the_jags_twins_and_data(wheel_env):
    names = zipfile.ZipFile(wheel_env["wheel"]).namelist()
    for twin in ("hui_walter", "multiclass_rows", "multiclass_cells"):
        assert f"bayescm/models/{twin}/{twin}.jags" in names
    assert "bayescm/data/_datasets/totsch_literature.csv" in names


def test_cli_from_the_wheel(wheel_env):
    out = subprocess.run(
        [str(wheel_env["bin"] / "bayescm"), "summarize", "--tp", "26", "--fn", "0", "--fp",
         "2", "--tn", "6", "--json", "--metrics", "tpr", "--seed", "1"],
        cwd=wheel_env["cwd"], check=True, capture_output=True, text=True)
    result = json.loads(out.stdout)
    # tpr | D ~ Beta(27, 1): mean 27/28; 4,000 exact draws give sd/sqrt(4000) ~ 5e-4
    assert result["metrics"]["tpr"]["mean"] == pytest.approx(27 / 28, abs=0.003)


@pytest.mark.engine("jags")
def test_jags_cross_check_from_the_wheel(wheel_env):
    script = textwrap.dedent("""
        import json, pathlib, warnings
        import numpy as np
        import bayescm as bcm
        from bayescm.inference import jags
        tab = bcm.AgreementTable.from_counts(
            {"site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
             "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
        model = bcm.models.hui_walter(tab)
        twin = jags.fit_twin(model, chains=2, draws=2000, burn=1000, seed=2)
        print(json.dumps({
            "module": bcm.__file__,
            "script": str(jags.script_path(bcm.models.get_family("hui_walter").jags.script)),
            "se": twin.posterior["sensitivity"].mean(("chain", "draw")).values.tolist(),
        }))
    """)
    out = subprocess.run([str(wheel_env["python"]), "-c", script], cwd=wheel_env["cwd"],
                         check=True, capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["module"].startswith(wheel_env["site"])  # the wheel's copy ran
    assert result["script"].startswith(wheel_env["site"])
    # Hui & Walter's two-population data: both sensitivities are well inside (0.5, 1)
    assert all(0.5 < se < 1 for se in result["se"])
