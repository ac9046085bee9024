"""Fixtures for tests that drive installed harness binaries against the mock model.

Harnesses are installed once per machine by ``tackroom install`` into a data
dir shared across test sessions (``$TACKROOM_TEST_DATA``, default
``<repo>/.cache/tackroom-test``); each test then runs with its own run
directory, isolated home, workdir and timeout.

A test's ``harness`` parameter is an adapter name (run at the version it was
verified with) or ``name@version`` (that install, with the adapter's data for
that version): see ``realkit.AT_VERSIONS``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from realkit import RunFn

from tackroom.adapters.plan import DEFAULT_API_KEY
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.errors import InstallError
from tackroom.install import install
from tackroom.run.result import Result
from tackroom.run.runner import run

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


@pytest.fixture(scope="session")
def harness_data() -> Path:
    path = Path(os.environ.get("TACKROOM_TEST_DATA") or ROOT / ".cache" / "tackroom-test")
    path.mkdir(parents=True, exist_ok=True)
    return path


_install_errors: dict[str, str] = {}


@pytest.fixture
def harness(request: pytest.FixtureRequest, harness_data: Path) -> Adapter:
    """The adapter the test's parameter names (``name`` or ``name@version``), at that version, installed.

    Without a version it is the verified one. An install that fails skips the
    test with the reason (once per parameter).
    """
    param: str = request.param
    name, _, version = param.partition("@")
    adapter = resolve_builtins()[name]
    adapter = adapter.at(version or adapter.verified_with)
    if param in _install_errors:
        pytest.skip(_install_errors[param])
    try:
        install(adapter, adapter.version, env={**os.environ, "XDG_DATA_HOME": str(harness_data)})
    except InstallError as exc:
        _install_errors[param] = f"{param} cannot be installed on this machine: {exc}"
        pytest.skip(_install_errors[param])
    return adapter


@pytest.fixture
def harness_environ(harness_data: Path) -> dict[str, str]:
    """The environment a run starts from: the caller's, with the shared harness installs."""
    return {**os.environ, "XDG_DATA_HOME": str(harness_data)}


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
        kwargs.setdefault("harness_version", harness.version)
        environ = {**os.environ, "XDG_DATA_HOME": str(harness_data)}
        return run(harness, prompt, workdir=workdir, runs_dir=tmp_path / "runs", environ=environ, **kwargs)

    return go


@pytest.fixture
def record(
    request: pytest.FixtureRequest, harness: Adapter, workdir: Path, harness_data: Path
) -> Callable[..., None]:
    """With ``--update-golden``, save a run's raw output as a golden stream for its family."""

    def save(result: Result, case: str, options: dict[str, Any] | None = None) -> None:
        if not request.config.getoption("--update-golden"):
            return
        target = golden_case(harness, result.harness_version, case)
        target.mkdir(parents=True, exist_ok=True)
        scrub = _scrubber(workdir, result.run_dir, harness_data)
        stream = (result.run_dir / "stdout.log").read_text(encoding="utf-8")
        (target / "stream.jsonl").write_text(scrub(stream), encoding="utf-8")
        stderr = (result.run_dir / "stderr.log").read_text(encoding="utf-8")
        if stderr.strip():
            (target / "stderr.txt").write_text(scrub(stderr), encoding="utf-8")
        meta: dict[str, Any] = {
            "adapter": harness.name,
            "version": result.harness_version,
            "exit_code": result.exit_code,
        }
        if options:  # a client family (ACP) answers the agent from them: its replay needs them
            meta["options"] = options
        (target / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    return save


def golden_case(harness: Adapter, version: str | None, case: str) -> Path:
    """Where a recording of ``case`` at ``version`` goes: ``<family>/<adapter>-<version>-<case>/``.

    Recordings made before golden cases named their version (``<adapter>-<case>``)
    are rewritten in place when they hold that same version, so recording again
    never leaves two copies of one version.
    """
    family = GOLDEN / harness.family
    unversioned = family / f"{harness.name}-{case}"
    meta = unversioned / "meta.json"
    if meta.is_file() and json.loads(meta.read_text(encoding="utf-8")).get("version") == version:
        return unversioned
    return family / f"{harness.name}-{version}-{case}"


def _scrubber(workdir: Path, run_dir: Path, harness_data: Path) -> Callable[[str], str]:
    pairs = [
        (str(run_dir), "<run>"),
        (str(harness_data), "<harnesses>"),
        (str(workdir), "<workdir>"),
        (str(Path.home()), "<home>"),
        (DEFAULT_API_KEY, "<secret>"),
    ]

    def scrub(text: str) -> str:
        for old, new in pairs:
            text = text.replace(old, new)
        return text

    return scrub
