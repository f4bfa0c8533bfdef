"""System engines: with JAGS hidden from PATH the JAGS tests skip (and say how to install
JAGS) outside CI, and fail under CI=true.

The suite's JAGS-dependent part (every test marked ``engine("jags")``) runs in a
subprocess pytest whose PATH is the real one with ``jags`` removed: each PATH directory
holding ``jags`` is replaced by a directory of symlinks to everything else in it.
Missing engines are detected before any fixture runs, so this takes seconds.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import engines

ROOT = pathlib.Path(__file__).resolve().parents[2]
JAGS_TESTS = ["tests/models/hui_walter/test_hui_walter.py", "tests/models/test_multiclass_jags.py",
              "tests/test_wheel.py"]


def path_without(command: str, tmp: pathlib.Path) -> str:
    """The current PATH with ``command`` gone and every other program still found."""
    dirs = []
    for i, d in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        if not d or not (pathlib.Path(d) / command).exists():
            dirs.append(d)
            continue
        mirror = tmp / f"bin{i}"
        mirror.mkdir()
        for entry in pathlib.Path(d).iterdir():
            if entry.name != command:
                (mirror / entry.name).symlink_to(entry)
        dirs.append(str(mirror))
    return os.pathsep.join(dirs)


def run_hidden(tmp_path, ci: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = path_without("jags", tmp_path)
    if ci:
        env["CI"] = "true"
    assert shutil.which("jags", path=env["PATH"]) is None
    for other in ("sh", "ls"):  # everything else is still found
        assert os.path.realpath(shutil.which(other, path=env["PATH"])) == \
            os.path.realpath(shutil.which(other))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "engine",
         *JAGS_TESTS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_every_engine_names_an_install_command():
    for engine in engines.ENGINES.values():
        assert engine.commands and engine.packages
        assert engine.install.startswith("sudo apt-get install ")


def test_without_jags_the_jags_tests_skip_and_say_how_to_install_it(tmp_path):
    res = run_hidden(tmp_path, ci=False)
    out = res.stdout
    assert res.returncode == 0, out + res.stderr
    n = int(re.search(r"(\d+) skipped", out).group(1))
    assert n >= 5 and "passed" not in out and "failed" not in out, out
    closing = [line for line in out.splitlines() if line.startswith("SKIPPED ")][-1]
    assert closing == (f"SKIPPED {n} tests that need JAGS: install it with "
                       "`sudo apt-get install jags`"), out
    # the closing line comes last, just before pytest's own count
    lines = out.strip().splitlines()
    assert lines[-2] == closing and "skipped" in lines[-1], out


def test_without_jags_under_ci_the_jags_tests_fail(tmp_path):
    res = run_hidden(tmp_path, ci=True)
    out = res.stdout
    assert res.returncode != 0, out
    n = int(re.search(r"(\d+) errors?", out).group(1))
    assert n >= 5 and "passed" not in out and "skipped" not in out, out
    assert "CI=true and JAGS (`jags` not on PATH): install it with `sudo apt-get install " \
           "jags`" in out, out
    assert (f"FAILED {n} tests that need JAGS: install it with `sudo apt-get install jags` "
            "(CI=true: a missing engine fails the run)") in out, out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Debian tool")
def test_ensure_installs_nothing_when_engines_are_present(tmp_path, monkeypatch, capsys):
    """`make test`'s install step is silent and calls no apt when nothing is missing;
    without root or apt-get it only says what is missing and how to install it."""
    calls = []
    monkeypatch.setattr(engines.subprocess, "run", lambda *a, **k: calls.append(a))
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in {c for e in engines.ENGINES.values() for c in e.commands}:
        (fake / name).write_text("#!/bin/sh\n")
        (fake / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    assert engines.ensure() == 0 and calls == [] and capsys.readouterr().out == ""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no engine, no apt-get
    monkeypatch.delenv("CI", raising=False)
    assert engines.ensure() == 0 and calls == []
    out = capsys.readouterr().out
    assert "JAGS not installed (needs root and apt-get); tests that need it will be skipped" \
           in out and "`sudo apt-get install jags`" in out
