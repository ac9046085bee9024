"""ACP for real: one harness reached two ways, its own stream and the Agent Client Protocol.

Claude Code runs once through its ``stream-json`` (adapter ``claude-code``) and
once through Zed's ACP adapter (``claude-code-acp``: the Claude Agent SDK
behind ``session/prompt``), on the same mock script; both must give the same
final text and the same usage, and the ACP run must leave nothing running.
The five run tests every harness passes are in ``test_run_real.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from realkit import processes_in

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.errors import InstallError
from tackroom.families import get_family
from tackroom.install import install
from tackroom.mock import Script, Turn, Usage
from tackroom.run.result import Result
from tackroom.run.runner import run
from tackroom.trace.events import ErrorEvent, ToolCall, ToolResult
from tackroom.trace.events import Usage as Figures

pytestmark = pytest.mark.real


def installed(name: str, data: Path) -> Adapter:
    adapter = resolve_builtins()[name]
    adapter = adapter.at(adapter.verified_with)
    try:
        install(adapter, adapter.version, env={**os.environ, "XDG_DATA_HOME": str(data)})
    except InstallError as exc:
        pytest.skip(f"{name} cannot be installed on this machine: {exc}")
    return adapter


def run_in(adapter: Adapter, data: Path, root: Path, script: Script, **kwargs: object) -> tuple[Result, Path]:
    workdir = root / adapter.name / "work"
    workdir.mkdir(parents=True)
    environ = {**os.environ, "XDG_DATA_HOME": str(data)}
    kwargs.setdefault("timeout_s", 120.0)
    # Over another transport another adapter runs, at its own verified version.
    version = None if "transport" in kwargs else adapter.version
    result = run(
        adapter,
        "write the proof file, then say so",
        mock=script,
        workdir=workdir,
        runs_dir=root / adapter.name / "runs",
        environ=environ,
        harness_version=version,
        **kwargs,  # type: ignore[arg-type]
    )
    return result, workdir


def shell_script() -> Script:
    return Script(
        [
            Turn.call(
                "shell",
                {"command": "echo two-ways > proof.txt"},
                usage=Usage(input=111, output=22, cache_read=33, cache_write=4),
            ),
            Turn.reply("TWO-WAYS-DONE", usage=Usage(input=555, output=66, cache_read=77, cache_write=8)),
        ]
    )


#: Every built-in that declares an ACP transport, with the ACP adapter it names.
TWO_WAYS = sorted(
    (name, adapter.effective["transports"]["acp"])
    for name, adapter in resolve_builtins().items()
    if "acp" in adapter.effective.get("transports", {})
)


def test_claude_code_codex_gemini_opencode_and_qwen_declare_an_acp_transport() -> None:
    assert [name for name, _ in TWO_WAYS] == ["claude-code", "codex", "gemini", "opencode", "qwen"]


@pytest.mark.parametrize(("name", "via_acp"), TWO_WAYS, ids=[name for name, _ in TWO_WAYS])
def test_a_harness_gives_the_same_text_and_usage_through_its_stream_and_through_acp(
    harness_data: Path, tmp_path: Path, name: str, via_acp: str
) -> None:
    stream_adapter = installed(name, harness_data)
    acp_adapter = installed(via_acp, harness_data)
    auto = {"auto_accept": True}
    stream, stream_dir = run_in(stream_adapter, harness_data, tmp_path, shell_script(), options=auto)
    # The same adapter, the other way it declares: [adapter.<name>.transports] acp = "<name>-acp".
    acp, acp_dir = run_in(
        stream_adapter, harness_data, tmp_path / "acp", shell_script(), options=auto, transport="acp"
    )
    for result, workdir in ((stream, stream_dir), (acp, acp_dir)):
        assert result.ok, (result.adapter, result.error)
        assert (workdir / "proof.txt").read_text().strip() == "two-ways"
        assert processes_in(workdir) == [] and result.escaped == ()
    assert (stream.adapter, acp.adapter) == (name, via_acp)
    assert acp.final_text == stream.final_text == "TWO-WAYS-DONE"
    assert any(isinstance(e, ToolCall) for e in acp.events)
    # Every figure the ACP agent reports is the one the harness's own stream reports.
    reported = get_family(acp_adapter.family).reports_usage
    figures = {k: v for k, v in acp.usage.to_json().items() if v != "not_reported"}
    assert set(figures) == set(reported)
    assert figures == {k: stream.usage.to_json()[k] for k in reported}
    if name == "claude-code":
        # Both report the turn's total: the two model calls summed, cache figures apart.
        assert acp.usage == stream.usage == Figures(input=666, output=88, cache_read=110, cache_write=12)
        assert [e.name for e in acp.events if isinstance(e, ToolCall)] == ["Bash"]


def test_without_auto_accept_the_acp_client_denies_the_shell_and_says_why(
    harness_data: Path, tmp_path: Path
) -> None:
    adapter = installed("claude-code-acp", harness_data)
    result, workdir = run_in(adapter, harness_data, tmp_path, shell_script())
    assert result.ok, result.error
    assert not (workdir / "proof.txt").exists()
    denied = [e for e in result.events if isinstance(e, ErrorEvent)]
    assert len(denied) == 1 and not denied[0].fatal and "echo two-ways > proof.txt" in denied[0].message
    outputs = [e for e in result.events if isinstance(e, ToolResult)]
    assert len(outputs) == 1 and outputs[0].is_error
    assert processes_in(workdir) == []


def test_a_timeout_mid_turn_stops_the_agent_and_everything_it_started(
    harness_data: Path, tmp_path: Path
) -> None:
    adapter = installed("claude-code-acp", harness_data)
    slow = Script([Turn.call("shell", {"command": "sleep 300"}), Turn.reply("never")])
    result, workdir = run_in(
        adapter, harness_data, tmp_path, slow, options={"auto_accept": True}, timeout_s=20.0
    )
    assert result.timed_out and not result.ok and not result.released
    assert result.session_id is not None
    assert processes_in(workdir) == []


def test_a_timeout_while_the_model_thinks_cancels_the_turn_and_the_agent_ends_it(
    harness_data: Path, tmp_path: Path
) -> None:
    # At the timeout tackroom sends session/cancel; claude-agent-acp stops waiting on the model
    # and answers the prompt with stopReason "cancelled" before any signal is sent.
    adapter = installed("claude-code-acp", harness_data)
    slow = Script([Turn.reply("too late", delay_s=120.0)])
    result, workdir = run_in(adapter, harness_data, tmp_path, slow, timeout_s=15.0)
    assert result.timed_out and not result.ok
    said = [e.message for e in result.events if isinstance(e, ErrorEvent)]
    assert any("tackroom cancelled the turn" in message for message in said), said
    assert processes_in(workdir) == []
