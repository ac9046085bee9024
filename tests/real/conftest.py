"""Fixtures for tests that drive installed harness binaries against the mock model.

Harnesses are installed once per machine by ``tackroom install`` into a data
dir shared across test sessions (``$TACKROOM_TEST_DATA``, default
``<repo>/.cache/tackroom-test``); each test then runs with its own run
directory, isolated home, workdir and timeout.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from realkit import RunFn

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.errors import InstallError
from tackroom.install import install
from tackroom.run.result import Result
from tackroom.run.runner import run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def harness_data() -> Path:
    path = Path(os.environ.get("TACKROOM_TEST_DATA") or ROOT / ".cache" / "tackroom-test")
    path.mkdir(parents=True, exist_ok=True)
    return path


_install_errors: dict[str, str] = {}


@pytest.fixture
def harness(request: pytest.FixtureRequest, harness_data: Path) -> Adapter:
    """The adapter named by the test's parameter, installed (or skipped with the reason)."""
    name: str = request.param
    adapter = resolve_builtins()[name]
    if name in _install_errors:
        pytest.skip(_install_errors[name])
    try:
        install(adapter, env={**os.environ, "XDG_DATA_HOME": str(harness_data)})
    except InstallError as exc:
        _install_errors[name] = f"{name} cannot be installed on this machine: {exc}"
        pytest.skip(_install_errors[name])
    return adapter


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def run_harness(harness: Adapter, harness_data: Path, workdir: Path, tmp_path: Path) -> RunFn:
    """Run the test's harness in its workdir, with its own run dir and a timeout."""

    def go(prompt: str, **kwargs: Any) -> Result:
        kwargs.setdefault("timeout_s", 120.0)
        environ = {**os.environ, "XDG_DATA_HOME": str(harness_data)}
        return run(harness, prompt, workdir=workdir, runs_dir=tmp_path / "runs", environ=environ, **kwargs)

    return go
