"""An MCP tool offered under its bare name: ``[tools] mcp = "{tool}"`` (kimi; openhands for a lone server).

The mock can call such a tool, but the name says no server, so nothing that must be read back
(hook matchers, subagent tool lists) is written with one: those are dropped by name, and a bare
name read back stays the harness's own. Patterns that name the server behave as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.errors import MockScriptError
from tackroom.mock import ToolName, ToolVocabulary
from tackroom.mock.vocabulary import load_vocabulary
from tackroom.profile.engines.base import Context
from tackroom.run.services import vocabulary


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("{tool}", "echo"),
        ("mcp_{tool}", "mcp_echo"),
        ("mcp__{server}__{tool}", "mcp__feas__echo"),
        ("{server}___{tool}", "feas___echo"),
    ],
)
def test_a_pattern_may_leave_out_the_server(pattern: str, name: str) -> None:
    assert ToolVocabulary(mcp=pattern).translate("mcp:feas/echo") == ToolName(name)


@pytest.mark.parametrize("pattern", ["{server}", "plain", "{server}_{tool}_{x}", "{tool}_{name}", "{tool"])
def test_a_pattern_without_the_tool_or_with_another_field_is_refused(pattern: str) -> None:
    with pytest.raises(MockScriptError, match="mcp: "):
        ToolVocabulary(mcp=pattern)


def test_a_vocabulary_file_takes_a_bare_pattern(tmp_path: Path) -> None:
    path = tmp_path / "v.toml"
    path.write_text('mcp = "{tool}"\n[tools]\nshell = "Shell"\n')
    found = load_vocabulary(path)
    assert found.translate("mcp:probe/tr_echo") == ToolName("tr_echo")
    assert found.translate("shell") == ToolName("Shell")


def _context(name: str) -> Context:
    adapter = resolve_builtins()[name]
    return Context(adapter, "hooks", adapter.spec.capabilities.hooks, Path("/nowhere"))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["kimi", "openhands"])
def test_the_built_ins_that_name_mcp_tools_bare(name: str) -> None:
    adapter = resolve_builtins()[name]
    assert adapter.spec.tools.mcp == "{tool}"
    assert adapter.spec.capabilities.mcp is not None
    assert vocabulary(adapter).translate("mcp:trprobe/tr_echo").name == "tr_echo"


def test_a_bare_name_is_never_written_where_it_is_read_back() -> None:
    """Render refuses mcp("s/t") (import could not say which server's `t` it was) and import keeps
    `t` as the harness's own: render and import stay each other's inverse."""
    ctx = _context("openhands")
    assert ctx.native_tool('mcp("trprobe/tr_echo")') is None
    assert ctx.native_tool('mcp("trprobe")') is None
    assert ctx.tool_ref("tr_echo") == "openhands:tr_echo"
    assert ctx.native_tool("openhands:tr_echo") == "tr_echo"
    assert "names an MCP tool without its server" in ctx.bare_mcp('mcp("trprobe/tr_echo")')
    assert ctx.bare_mcp("shell") == ""


def test_patterns_with_the_server_are_unchanged() -> None:
    """Every built-in whose pattern names the server still writes and reads its MCP tools."""
    for name, adapter in resolve_builtins().items():
        pattern = adapter.spec.tools.mcp
        if not pattern or "{server}" not in pattern:
            continue
        ctx = Context(adapter, "mcp", adapter.spec.capabilities.mcp, Path("/nowhere"))  # type: ignore[arg-type]
        native = pattern.replace("{server}", "docs").replace("{tool}", "search")
        assert ctx.native_tool('mcp("docs/search")') == native, name
        assert ctx.tool_ref(native) == 'mcp("docs/search")', name
        assert ctx.bare_mcp('mcp("docs/search")') == "", name
