"""Fail unless the virtual environment holds exactly the locked versions: every package of the lock files installed
at its locked version, and nothing else besides the project itself, llama-cpp-python (built by
scripts/install-llama.sh; its dependencies are in the lock) and the venv's own setuptools.

    python scripts/check-lock.py requirements/main.lock requirements/no-deps.lock
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

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
    for problem in wrong + extra:
        print(f"error: {problem}", file=sys.stderr)
    if wrong or extra:
        print("the environment is not the lock: `make clean setup` installs it afresh (`make lock` refreshes the lock)",
              file=sys.stderr)
        return 1
    print(f"the environment holds exactly the {len(locked)} locked versions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
