"""Helpers for tests that run the real ``tackroom`` CLI as a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real ``tackroom`` CLI as a process (exit codes and stderr as a user sees them)."""
    return subprocess.run(
        [sys.executable, "-m", "tackroom", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
