"""Probes cannot pass by accident: a harness that reads nothing is failed on every capability."""

from __future__ import annotations

import json
from pathlib import Path

from clikit import run_cli
from tackroom.adapters.resolve import resolve_builtins
from tackroom.probe.capabilities import CAPABILITIES, Probe, probe
from test_runner import fake_adapter


def test_a_harness_that_ignores_its_profile_fails_every_probe(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, "--exit-code", "0")
    for capability in CAPABILITIES:
        row = probe(adapter, capability, Probe(tmp_path, timeout_s=20))
        assert row.status == "failed", row
        assert row.checks and not any(row.checks.values()), row


def test_an_absent_capability_is_not_supported_without_running(tmp_path: Path) -> None:
    aider = resolve_builtins()["aider"]
    for capability in CAPABILITIES:
        row = probe(aider, capability, Probe(tmp_path / "nothing-runs-here"))
        assert row.status == "not supported" and row.checks == {}
    assert not (tmp_path / "nothing-runs-here").exists()


def test_probe_cli_exits_1_on_a_failed_capability(config_dir: Path) -> None:
    fake_adapter(config_dir, "--exit-code", "0")
    done = run_cli("probe", "fake", "--capability", "rules", "--json")
    assert done.returncode == 1
    [row] = json.loads(done.stdout)
    assert row == {
        "adapter": "fake",
        "capability": "rules",
        "status": "failed",
        "version": None,
        "checks": {"reached the model": False},
        "detail": row["detail"],
    }
