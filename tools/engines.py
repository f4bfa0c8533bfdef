"""System engines the test suite uses (programs, not Python packages), in one table.

``make test`` runs ``python tools/engines.py ensure`` first: a missing engine is
installed with apt-get when that is possible (root on Debian/Ubuntu); otherwise it is
left missing, and pytest (``tests/conftest.py``, which reads this table) skips the
tests marked ``@pytest.mark.engine(name)`` and closes its report with a line naming
what was skipped and the command that installs it.  Under CI (``CI=true``) those tests
fail instead.  Installation lives here, never in pytest: ``pytest`` alone runs no apt.

To add an engine, add one line to ``ENGINES`` and mark its tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    label: str  # what people call it
    commands: tuple[str, ...]  # all must be on PATH
    packages: tuple[str, ...]  # Debian packages that provide them

    def missing(self, path: str | None = None) -> list[str]:
        return [c for c in self.commands if shutil.which(c, path=path) is None]

    @property
    def install(self) -> str:
        return f"sudo apt-get install {' '.join(self.packages)}"


ENGINES: dict[str, Engine] = {
    "jags": Engine("JAGS", ("jags",), ("jags",)),
    "chromium": Engine("Chromium", ("chromium", "chromedriver"), ("chromium", "chromium-driver")),
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def ensure(names: list[str] | None = None) -> int:
    """Install missing engines with apt-get where possible; say what stays missing.

    Always returns 0: whether a missing engine skips or fails its tests is pytest's
    decision (it fails them under CI), so the rest of the suite still runs.
    """
    wanted = {n: ENGINES[n] for n in (names or ENGINES)}
    missing = {n: e for n, e in wanted.items() if e.missing()}
    if not missing:
        return 0
    labels = ", ".join(e.label for e in missing.values())
    can_apt = shutil.which("apt-get") is not None and os.geteuid() == 0
    if can_apt:
        packages = [p for e in missing.values() for p in e.packages]
        print(f"engines: installing {labels} (apt-get install {' '.join(packages)})",
              flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        # a failed update may still leave usable package lists: try the install anyway
        for cmd in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", *packages]):
            if subprocess.run(cmd, env=env).returncode != 0:
                print(f"engines: `{' '.join(cmd)}` failed", flush=True)
        missing = {n: e for n, e in missing.items() if e.missing()}
        if not missing:
            return 0
    why = "could not be installed" if can_apt else "not installed (needs root and apt-get)"
    for e in missing.values():
        then = "tests that need it will FAIL (CI=true)" if in_ci() else (
            "tests that need it will be skipped")
        print(f"engines: {e.label} {why}; {then}. Install it with `{e.install}`.",
              flush=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["ensure"]:
        return ensure(argv[1:] or None)
    if argv[:1] == ["list"]:
        for name, e in ENGINES.items():
            state = "missing" if e.missing() else "present"
            print(f"{name}\t{e.label}\t{state}\t{e.install}")
        return 0
    print("usage: python tools/engines.py ensure [ENGINE ...] | list", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
