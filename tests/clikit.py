"""Helpers for tests that run the real ``tackroom`` CLI as a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    command: tuple[str, ...] = (sys.executable, "-m", "tackroom"),
    **popen: Any,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``tackroom`` CLI as a process (exit codes and stderr as a user sees them);
    ``command`` is how it is started, ``popen`` more of :func:`subprocess.run`'s keywords."""
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
        **popen,
    )
