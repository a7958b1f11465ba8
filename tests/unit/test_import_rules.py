"""The import rules docs/ARCHITECTURE.md states and the code keeps (engine and store import nothing of the rooms
above them; workers nothing of services or bench), checked by import-linter's contracts in .importlinter."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def test_every_import_contract_is_kept() -> None:
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert linter is not None, "import-linter is not installed (make setup installs the dev extras)"
    done = subprocess.run([linter, "--config", str(ROOT / ".importlinter"), "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
