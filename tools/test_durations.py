"""Write ``tests/durations.json``: each test module's longest test, from a durations log.

``tests/conftest.py`` runs the modules in decreasing order of these seconds, so that under
``make test`` (two pytest-xdist workers, tests handed out one at a time in collection
order) the minute-long tests start first and the run ends on short ones: without it the
README, docs and wheel tests, collected last, left one worker idle for a minute or more
at the end.  Each module's tests keep their order and stay together, so that a module's
fixtures are set up once per worker.  A module missing from the file runs last; a stale
file costs time, never correctness.

    .venv/bin/python -m pytest -q -n auto --dist loadgroup --durations=0 > /tmp/d.log
    python3 tools/test_durations.py /tmp/d.log
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "durations.json"
LINE = re.compile(r"^(\d+(?:\.\d+)?)s (?:call|setup|teardown)\s+(.+?)\s*$")


def module_seconds(log: str) -> dict[str, float]:
    """The longest test of each module (its set-up, call and teardown summed), in
    seconds, longest first: a long test started last is what leaves a worker idle."""
    per_test: collections.Counter[str] = collections.Counter()
    for line in log.splitlines():
        match = LINE.match(line)
        if match:
            per_test[match[2].split("@")[0]] += float(match[1])  # without xdist's @group
    longest: dict[str, float] = {}
    for test, t in per_test.items():
        module = test.split("::")[0]
        longest[module] = max(longest.get(module, 0.0), t)
    return {m: round(t, 1) for m, t in sorted(longest.items(), key=lambda kv: -kv[1])
            if t >= 0.1}


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit(__doc__)
    table = module_seconds(Path(argv[0]).read_text())
    if not table:
        raise SystemExit(f"{argv[0]}: no durations (run pytest with --durations=0)")
    OUT.write_text(json.dumps(table, indent=0) + "\n")
    print(f"{OUT}: {len(table)} modules")


if __name__ == "__main__":
    main(sys.argv[1:])
