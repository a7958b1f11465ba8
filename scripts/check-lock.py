"""Fail unless the virtual environment holds exactly the locked versions: every package of the lock files installed
at its locked version, and nothing else besides the project itself, llama-cpp-python (built by
scripts/install-llama.sh; its dependencies are in the lock) and the venv's own setuptools; and every dependency the
installed project declares (with its dev extra) is in the lock at a version it accepts (a dependency added to
pyproject.toml without `make lock` would otherwise be missing, since setup installs with --no-deps).

    python scripts/check-lock.py requirements/main.lock requirements/no-deps.lock
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")
BESIDES_THE_LOCK = {"kvgraft", "llama-cpp-python", "setuptools"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main(paths: list[str]) -> int:
    locked: dict[str, str] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            m = PIN.match(line)
            if m:
                locked[normalized(m.group(1))] = m.group(2)
    installed = {normalized(d.metadata["Name"]): d.version for d in metadata.distributions()}
    wrong = [f"{name}: locked {version}, installed {installed.get(name, 'nothing')}"
             for name, version in sorted(locked.items()) if installed.get(name) != version]
    extra = [f"{name}=={version}: not in the lock" for name, version in sorted(installed.items())
             if name not in locked and name not in BESIDES_THE_LOCK]
    declared = [Requirement(r) for r in metadata.requires("kvgraft") or []]
    unlocked = [f"pyproject.toml asks for {r}, the lock has {locked.get(normalized(r.name), 'nothing')}"
                for r in declared if (r.marker is None or r.marker.evaluate({"extra": "dev"}))
                and normalized(r.name) not in BESIDES_THE_LOCK
                and not r.specifier.contains(locked.get(normalized(r.name), "0+none"), prereleases=True)]
    for problem in wrong + extra + unlocked:
        print(f"error: {problem}", file=sys.stderr)
    if wrong or extra or unlocked:
        print("the environment is not the lock: `make clean setup` installs it afresh (`make lock` refreshes the lock)",
              file=sys.stderr)
        return 1
    print(f"the environment holds exactly the {len(locked)} locked versions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
