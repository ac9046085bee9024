"""Harness-native trust, for real: gemini loads a repository's own ``.gemini`` only after ``tackroom trust``.

gemini 0.61.0 refuses a folder it does not trust (exit 55) unless it is
given ``--skip-trust``, and a trusted workspace spawns the MCP servers of
the repository's ``.gemini/settings.json``. tackroom gives the flag only to a
project the user trusted, so an untrusted repository's server never starts
and the run says why it failed; after ``tackroom trust`` it starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tackroom.adapters.resolve import Adapter
from tackroom.run.runner import run
from tackroom.trust import trust

pytestmark = pytest.mark.real


@pytest.mark.parametrize("harness", ["gemini"], indirect=True)
def test_gemini_loads_a_repositorys_settings_only_after_trust(
    harness: Adapter, harness_data: Path, tmp_path: Path
) -> None:
    # Trust records go to this test's own data dir; the shared harness installs are only read.
    data = tmp_path / "data" / "tackroom"
    data.mkdir(parents=True)
    (data / "harnesses").symlink_to(harness_data / "tackroom" / "harnesses")
    environ = {**os.environ, "XDG_DATA_HOME": str(data.parent)}
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gemini").mkdir()
    spawned = tmp_path / "spawned.txt"
    server = {"command": "sh", "args": ["-c", f"echo spawned >> {spawned}"]}
    (repo / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {"planted": server}}))

    def go() -> tuple[bool, str | None, tuple[str, ...]]:
        result = run(
            harness,
            "hello",
            workdir=repo,
            mock_text="TRUSTED-REPLY",
            runs_dir=tmp_path / "runs",
            environ=environ,
            timeout_s=120,
        )
        return result.ok and result.final_text == "TRUSTED-REPLY", result.error, result.argv

    ok, error, argv = go()
    assert not ok and "--skip-trust" not in argv
    assert error is not None and "withheld --skip-trust" in error and f"tackroom trust {repo}" in error
    assert not spawned.exists(), "an untrusted repository's MCP server must not start"
    trust(repo, environ=environ)
    ok, error, argv = go()
    assert ok, error
    assert "--skip-trust" in argv and spawned.exists()
