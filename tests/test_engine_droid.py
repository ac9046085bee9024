"""Factory Droid's hooks and MCP servers, and kilo's hooks plugin, as adapter data over shared engines.

droid's hooks are Claude Code's groups in ``settings.json``'s ``hooks`` key (``claude-settings``);
its own ``hooks.json`` (the events at the top level, ``droid-hooks``) is read on import. Its MCP
tools are deferred behind ToolSearch, which the probe's scripted model calls first
(``tools.mcp_load``). kilo, an opencode fork, loads opencode's generated plugin from its own
config directories.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import assert_adapter_conformance, assert_adapter_loads_hooks
from tackroom.conformance.static import check_tool_vocabulary
from tackroom.families import get_family
from tackroom.profile.model import Hook, McpServer, Profile
from tackroom.profile.render import import_native, plan_render, write

SETTINGS = Path(".factory/settings.json")
HOOKS_FILE = Path(".factory/hooks.json")


@pytest.fixture(scope="module")
def droid() -> Adapter:
    return resolve_builtins()["droid"]


@pytest.fixture(scope="module")
def kilo() -> Adapter:
    return resolve_builtins()["kilo"]


def read(root: Path, rel: Path) -> Any:
    return json.loads((root / rel).read_text(encoding="utf-8"))


def test_the_family_serves_its_engine_and_both_adapters_conform(droid: Adapter, kilo: Adapter) -> None:
    assert [e.name for e in get_family("droid").engines()] == ["droid-hooks"]
    for adapter in (droid, kilo):
        assert_adapter_conformance(adapter)
        assert_adapter_loads_hooks(adapter)


def test_droid_hooks_render_into_project_settings_and_import_back(droid: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("guard", "before-tool", "refuse", text="Never force-push.", matcher=("shell",)),
            Hook("context", "session-start", "inject", text="Run make test.", source=("startup",)),
            Hook("fmt", "after-tool", "command", command="./fmt.sh", matcher=("edit_file",), timeout=30.0),
        )
    )
    rendered = write(plan_render(profile, droid, root=tmp_path, scope="project", workdir=tmp_path))
    # droid names no edit tool tackroom knows: a hook on one is dropped by name, never widened.
    assert [(d.name, d.reason) for d in rendered.drops] == [
        ("fmt", "no tool edit_file in hook matchers here")
    ]
    hooks = read(tmp_path, SETTINGS)["hooks"]
    assert sorted(hooks) == ["PreToolUse", "SessionStart"]
    assert hooks["PreToolUse"][0]["matcher"] == "Execute"
    assert '"permissionDecision":"deny"' in hooks["PreToolUse"][0]["hooks"][0]["command"]
    assert hooks["SessionStart"][0]["matcher"] == "startup"
    back = import_native(droid, root=tmp_path, scope="project", workdir=tmp_path).profile.hooks
    assert back == tuple(sorted(profile.hooks[:2], key=lambda h: h.name))


def test_droid_has_no_prompt_submit_in_exec(droid: Adapter, tmp_path: Path) -> None:
    """UserPromptSubmit never ran under `droid exec` 0.215.0: such a hook is dropped by name."""
    rendered = write(
        plan_render(
            Profile(hooks=(Hook("p", "prompt-submit", "command", command="true"),)), droid, root=tmp_path
        )
    )
    assert [(d.kind, d.name) for d in rendered.drops] == [("hook", "p")]


@settings(max_examples=30, deadline=None)
@given(
    moment=st.sampled_from(["before-tool", "after-tool"]),
    matcher=st.lists(
        st.sampled_from(["shell", "read_file", "search", "glob", "droid:Edit"]), max_size=3, unique=True
    ).map(tuple),
    timeout=st.none() | st.integers(1, 600).map(float),
)
def test_droid_tool_hooks_round_trip(
    droid: Adapter, moment: str, matcher: tuple[str, ...], timeout: float | None
) -> None:
    profile = Profile(
        hooks=(Hook("h", moment, "command", command="./x.sh", matcher=matcher, timeout=timeout),)
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(profile, droid, root=root))
        assert rendered.drops == ()
        assert import_native(droid, root=root).profile.hooks == profile.hooks


def test_droid_own_hooks_file_is_imported_and_its_switches_named(droid: Adapter, tmp_path: Path) -> None:
    (tmp_path / ".factory").mkdir()
    guard = {"type": "command", "command": "./guard.sh", "timeout": 10}
    (tmp_path / HOOKS_FILE).write_text(
        json.dumps({"PreToolUse": [{"matcher": "Execute", "hooks": [guard]}], "hooksDisabled": False}),
        encoding="utf-8",
    )
    result = import_native(droid, root=tmp_path, scope="project", workdir=tmp_path)
    assert result.profile.hooks == (
        Hook(
            "pre-tool-use-1", "before-tool", "command", command="./guard.sh", matcher=("shell",), timeout=10.0
        ),
    )
    assert [(d.name, "switch" in d.reason) for d in result.dropped] == [("hooksDisabled", True)]


def test_droid_settings_keys_are_named_not_kept(droid: Adapter, tmp_path: Path) -> None:
    (tmp_path / ".factory").mkdir()
    (tmp_path / SETTINGS).write_text(json.dumps({"model": "x", "hooks": {}}), encoding="utf-8")
    result = import_native(droid, root=tmp_path, scope="project", workdir=tmp_path)
    assert [(d.name, d.reason.split(": ", 1)[1][:22]) for d in result.dropped] == [
        ("model", "droid's own settings k")
    ]


def test_droid_mcp_servers_round_trip_and_the_probe_loads_the_tool_first(
    droid: Adapter, tmp_path: Path
) -> None:
    from tackroom.probe.builtin import _mcp_load

    server = McpServer("db", command="npx", args=("-y", "db-mcp"), env=(("DB", "x"),), disabled=True)
    write(plan_render(Profile(mcp=(server,)), droid, root=tmp_path))
    entry = read(tmp_path, Path(".factory/mcp.json"))["mcpServers"]["db"]
    assert entry == {
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "db-mcp"],
        "env": {"DB": "x"},
        "disabled": True,
    }
    assert import_native(droid, root=tmp_path).profile.mcp == (server,)
    load = _mcp_load(droid, "trprobe", "tr_echo")
    assert (load.tool, dict(load.args)) == ("raw:ToolSearch", {"query": "select:trprobe___tr_echo"})
    assert _mcp_load(resolve_builtins()["claude-code"], "trprobe", "tr_echo") is None


def test_a_loading_call_that_names_no_tool_fails_conformance(droid: Adapter) -> None:
    from tackroom.conformance import static

    assert not [r for r in check_tool_vocabulary(droid) if r[0][:2] == ("tools", "mcp_load")]
    load = SimpleNamespace(tool="ToolSearch", args={"query": "select:{what}"})
    stand_in = SimpleNamespace(spec=SimpleNamespace(tools=SimpleNamespace(mcp_load=load)))
    found = [why for _, why in static._mcp_load(stand_in)]  # type: ignore[arg-type]
    assert any("unknown fields ['what']" in why for why in found)
    assert any("names no MCP tool" in why for why in found)


def test_kilo_hooks_render_as_a_plugin_kilo_loads_and_import_back(kilo: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("guard", "before-tool", "refuse", text="No force-push.", matcher=("shell",)),
            Hook("note", "session-start", "command", command="date >> s.log"),
            Hook("ctx", "prompt-submit", "inject", text="x"),
        )
    )
    rendered = write(plan_render(profile, kilo, root=tmp_path, scope="project", workdir=tmp_path))
    assert rendered.drops == ()  # kilo injects at prompt-submit, as opencode does
    assert (tmp_path / ".kilo/plugin/tackroom.js").is_file()
    back = import_native(kilo, root=tmp_path, scope="project", workdir=tmp_path).profile.hooks
    assert back == tuple(sorted(profile.hooks, key=lambda h: h.name))
