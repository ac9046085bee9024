"""The exception tree's two groups: what a caller retries (the host failed) and what it fixes (the
cell is wrong), and the run a failure belongs to."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import tackroom.errors as errors
from runkit import RECORDED, fake_adapter
from tackroom.errors import CellError, HostError, TackroomError
from tackroom.harnesses import Located
from tackroom.run.runner import run

CELL = {
    "ConfigError", "ProfileError", "UnsafePathError", "TrustError", "UntrustedProjectError",
    "OptionError", "UnsupportedOptionError", "TemplateError", "UnknownAdapterError",
    "DetectionError", "MockScriptError", "RunSpecError", "TaskError", "MatrixError", "EvaluationExistsError",
}  # fmt: skip
HOST = {
    "FamilyError", "InstallError", "RegistryError", "HarnessNotFoundError", "HarnessVersionError",
    "StateError", "GatewayError", "LaunchError", "SandboxError", "RayUnavailableError", "ResidentError",
}  # fmt: skip


def test_each_error_is_in_the_group_its_fix_says() -> None:
    classes = {
        name: cls
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, TackroomError) and cls not in (TackroomError, CellError, HostError)
    }
    assert {n for n, c in classes.items() if issubclass(c, CellError)} == CELL
    assert {n for n, c in classes.items() if issubclass(c, HostError)} == HOST
    assert not any(issubclass(c, CellError) and issubclass(c, HostError) for c in classes.values())
    for name in CELL | HOST:  # the module's own tree names each under its group
        assert name in (errors.__doc__ or "")


def test_a_wrong_cell_names_its_adapter_and_leaves_no_run(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, "--replay", str(RECORDED))
    with pytest.raises(CellError) as caught:
        run(adapter, "p", options={"no_such_option": True}, workdir=tmp_path, runs_dir=tmp_path / "runs")
    assert caught.value.adapter == "fake" and caught.value.run_dir is None
    with pytest.raises(CellError) as unknown:
        run("no-such-harness", "p", workdir=tmp_path, runs_dir=tmp_path / "runs")
    assert unknown.value.adapter == "no-such-harness"
    assert not (tmp_path / "runs").exists()


def test_a_host_that_cannot_run_it_says_so(config_dir: Path, tmp_path: Path) -> None:
    (config_dir / "adapters.d" / "gone.toml").write_text(
        '[adapter.gone]\nextends = "claude-code"\nexecutable = "/nonexistent/claude"\n', encoding="utf-8"
    )
    with pytest.raises(HostError) as caught:
        run("gone", "p", workdir=tmp_path, runs_dir=tmp_path / "runs", environ={"PATH": "/nonexistent"})
    assert caught.value.adapter == "gone" and caught.value.run_dir is None


def test_a_failure_once_the_run_began_names_its_kept_run_directory(config_dir: Path, tmp_path: Path) -> None:
    """An executable that cannot be started (not executable) fails at the spawn, after the run's
    directory was made: the error names it, and it keeps the stopped run's result."""
    adapter = fake_adapter(config_dir, "--replay", str(RECORDED))
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\n", encoding="utf-8")
    located = Located(plain, "configured", adapter.verified_with)
    with pytest.raises(errors.RunError, match="cannot start") as caught:
        run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", executable=located)
    assert caught.value.adapter == "fake"
    assert caught.value.run_dir is not None and caught.value.run_dir.parent == tmp_path / "runs"
    assert (caught.value.run_dir / "result.json").is_file()
