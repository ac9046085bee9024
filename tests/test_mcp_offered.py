"""An MCP tool offered under a name with a part only its harness knows: ``[tools] mcp_offered``.

gptme 0.35 names an MCP tool ``<server>.<tool>`` in its output, logs and hooks, and offers it to
the model as ``<server>_<tool>_<hash>`` (a hash of the name). ``mcp_offered = "{server}_{tool}_*"``
says so: the ``*`` is what only the harness knows, and the mock calls the one offered tool that
matches, over a real socket here; two that match are not guessed between.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tackroom.adapters.resolve import load_adapters, resolve_builtins
from tackroom.conformance.static import check_tool_vocabulary
from tackroom.mock import Script, ToolName, ToolVocabulary, Turn
from tackroom.mock.plan import find_tool
from tackroom.mock.vocabulary import named
from tackroom.mock.wires.base import OfferedTool
from tackroom.run.services import vocabulary
from test_mock_server import Serve, post

ALIAS = "trprobe_tr_echo_e77a0c084398"
"""gptme 0.35.1's alias of ``trprobe.tr_echo`` (tools/native_names.py)."""


@pytest.mark.parametrize(
    ("name", "pattern", "matches"),
    [
        (ALIAS, "trprobe_tr_echo_*", True),
        ("trprobe_tr_echo_", "trprobe_tr_echo_*", True),
        ("trprobe_tr_echo", "trprobe_tr_echo_*", False),
        ("xtrprobe_tr_echo_1", "trprobe_tr_echo_*", False),
        ("a_b_c", "a*c", True),
        ("ac", "a*b*c", False),
        ("abc", "a*b*c", True),
        ("trprobe.tr_echo", "trprobe.tr_echo", True),
        ("trprobe_tr_echo", "trprobe.tr_echo", False),
    ],
)
def test_a_star_stands_for_any_text(name: str, pattern: str, matches: bool) -> None:
    assert named(name, pattern) is matches


def _offered(*names: str) -> list[OfferedTool]:
    return [OfferedTool(n, n) for n in names]


def test_the_one_offered_tool_that_matches_is_called() -> None:
    assert find_tool("s_t_*", _offered("shell", "s_t_1a2b")) == _offered("s_t_1a2b")[0]
    assert find_tool("s_t_*", _offered("s_t_1a2b", "s_t_3c4d")) is None  # two: no guess
    assert find_tool("s_t_*", _offered("shell")) is None


def test_gptme_is_offered_an_alias_and_names_the_tool_canonically() -> None:
    gptme = resolve_builtins()["gptme"]
    assert gptme.spec.tools.mcp == "{server}.{tool}"  # what its hooks and output say
    assert vocabulary(gptme).translate("mcp:trprobe/tr_echo") == ToolName("trprobe_tr_echo_*")


def test_the_mock_calls_the_alias_over_a_socket(serve: Serve) -> None:
    mock = serve(
        Script([Turn.call("mcp:trprobe/tr_echo", {"text": "probe-ping"}), Turn.reply("done")]),
        tools=ToolVocabulary(mcp="{server}_{tool}_*"),
    )
    tool = {"type": "function", "function": {"name": ALIAS, "parameters": {"type": "object"}}}
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": [tool]}
    status, raw = post(mock.base_url, "/v1/chat/completions", body)
    assert status == 200
    [call] = json.loads(raw)["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == ALIAS
    assert json.loads(call["function"]["arguments"]) == {"text": "probe-ping"}


def test_a_bad_offered_pattern_is_named_by_its_key(config_dir: Path) -> None:
    (config_dir / "adapters.d" / "mine.toml").write_text(
        '[adapter.mine]\nextends = "gptme"\n[adapter.mine.tools]\nmcp_offered = "{server}_*"\n',
        encoding="utf-8",
    )
    found = check_tool_vocabulary(load_adapters(config=config_dir)["mine"])
    assert [key for key, _ in found] == [("tools", "mcp_offered")]
    assert "must use {tool}" in found[0][1]
