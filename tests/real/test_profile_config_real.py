"""A profile imported from opencode's own files renders into a config the real opencode loads.

``opencode debug config`` prints the configuration it resolved (1.18.33): the
rendered ``opencode.json`` (permission, agents, MCP timeout and enabled) and
the agent files must all be there, agent tools read as the permissions they mean.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.errors import InstallError
from tackroom.install import install
from tackroom.profile.render import import_native, plan_render, write

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "native" / "opencode" / "project"


def test_opencode_loads_the_config_rendered_from_an_import(harness_data: Path, tmp_path: Path) -> None:
    adapter = resolve_builtins()["opencode"]
    try:
        installed = install(
            adapter, adapter.verified_with, env={**os.environ, "XDG_DATA_HOME": str(harness_data)}
        )
    except InstallError as exc:
        pytest.skip(f"opencode cannot be installed here: {exc}")
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    profile = import_native(adapter, root=FIXTURE, scope="project").profile
    write(plan_render(profile, adapter, root=project, scope="project"))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
    }
    done = subprocess.run(
        [str(installed.executable), "debug", "config"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    config = json.loads(done.stdout[done.stdout.index("{") :])
    assert config["permission"]["bash"] == {"*": "allow", "git push*": "ask", "rm -rf*": "deny"}
    assert config["mcp"]["local-db"]["enabled"] is False and config["mcp"]["docs"]["timeout"] == 10000
    reviewer = config["agent"]["reviewer"]
    assert reviewer["mode"] == "subagent"
    # denied stays denied
    assert {reviewer["permission"][t] for t in ("edit", "bash", "webfetch")} == {"deny"}
    # passthrough: a built-in agent's override and keys tackroom has no word for
    assert config["agent"]["build"]["model"] == "anthropic/claude-opus-4-1"
    assert (config["model"], config["plugin"]) == ("anthropic/claude-sonnet-4-5", ["opencode-notify"])
