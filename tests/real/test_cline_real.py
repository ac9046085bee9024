"""cline against the mock: what the probe does not prove.

cline leaves nothing running: without ``CLINE_SESSION_BACKEND_MODE=local`` its first run starts a
detached hub daemon (``cline --cline-hub-daemon --cwd <workdir> ...``, reparented to init) that
outlives the CLI; the adapter sets the variable, and a test proves no such process is left.

The probe proves each capability once (``docs/capabilities.md``); these tests prove what the
engines claim besides. cline's hooks have no matcher, so a tool hook checks the tool's name
itself and runs for its tools only; two hooks share one event's file; a workflow ending in
``$ARGUMENTS`` gets the prompt's arguments there; an MCP server's ``K = "${K}"`` is left to
the environment cline hands every stdio server, and reaches it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from realkit import Recorder, RunFn, processes_in

from tackroom.adapters.resolve import Adapter
from tackroom.mock import Script, Turn
from tackroom.probe.builtin import MCP_SERVER
from tackroom.profile.model import Agent, Command, Hook, McpServer, Profile

pytestmark = pytest.mark.real


def left_running(workdir: Path, home: str) -> list[str]:
    """Command lines of live processes started for this run: in its workdir, or naming it or its home."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if str(workdir) in argv or home in argv or int(entry.name) in processes_in(workdir):
            found.append(f"{entry.name}: {argv}")
    return found


@pytest.mark.parametrize("harness", ["cline"], indirect=True)
def test_a_cline_run_leaves_no_hub_daemon(harness: Adapter, run_harness: RunFn, workdir: Path) -> None:
    result = run_harness("say the magic words", mock_text="TACKROOM-NO-DAEMON")
    assert result.ok, result.error
    home = str(result.run_dir / "home")
    time.sleep(2)  # a detached daemon is started as the CLI ends
    assert left_running(workdir, home) == []
    assert not list((result.run_dir / "home" / ".cline" / "data" / "logs").glob("hub-daemon*"))


def requests(log: Path) -> list[str]:
    """The model calls the mock received, each as its JSON text."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    found = [json.loads(line) for line in lines if line.strip()]
    return [json.dumps(r.get("body"), ensure_ascii=False) for r in found if r.get("turn") is not None]


@pytest.mark.parametrize("harness", ["cline"], indirect=True)
def test_tool_hooks_run_for_their_tools_only_and_an_inject_reaches_the_model(
    harness: Adapter, run_harness: RunFn, workdir: Path, tmp_path: Path
) -> None:
    fired = tmp_path / "fired.txt"
    (workdir / "notes.txt").write_text("notes\n", encoding="utf-8")
    write = f">> {fired}"
    hooks = (
        Hook("every", "before-tool", "command", command=f"jq -r .tool_call.name {write}"),
        Hook("shell-only", "before-tool", "command", command=f"echo shell-only {write}", matcher=("shell",)),
        Hook("read-only", "after-tool", "command", command=f"echo read-only {write}", matcher=("read_file",)),
        Hook("context", "after-tool", "inject", text="TACKROOM-CLINE-INJECT-5e2", matcher=("shell",)),
    )
    script = Script(
        [
            Turn.call("read_file", {"file_path": str(workdir / "notes.txt")}),
            Turn.call("shell", {"command": "echo ran > ran.txt"}),
            Turn.reply("DONE"),
        ]
    )
    log = tmp_path / "mock.jsonl"
    result = run_harness("read, then run", mock=script, mock_log=log, profile=Profile(hooks=hooks))
    assert result.ok, result.error
    assert not result.dropped, result.dropped
    assert fired.read_text().split() == ["read_files", "read-only", "run_commands", "shell-only"]
    _, after_read, after_shell = requests(log)
    assert "TACKROOM-CLINE-INJECT-5e2" not in after_read
    assert "TACKROOM-CLINE-INJECT-5e2" in after_shell


@pytest.mark.parametrize("harness", ["cline"], indirect=True)
def test_a_workflow_gets_its_arguments_where_its_body_ended_in_the_placeholder(
    harness: Adapter, run_harness: RunFn, tmp_path: Path
) -> None:
    profile = Profile(
        commands=(Command("triage", "Triage", "TACKROOM-CLINE-WORKFLOW triage issue $ARGUMENTS\n"),),
        agents=(Agent("auditor", "TACKROOM-CLINE-AGENT audits money code", "You audit.\n", ("read_file",)),),
    )
    log = tmp_path / "mock.jsonl"
    result = run_harness("/triage #42 today", mock_text="OK", mock_log=log, profile=profile)
    assert result.ok, result.error
    assert not result.dropped, result.dropped
    [sent] = requests(log)
    assert "TACKROOM-CLINE-WORKFLOW triage issue #42 today" in sent
    assert '"subagent_auditor"' in sent and "TACKROOM-CLINE-AGENT audits money code" in sent


@pytest.mark.parametrize("harness", ["cline"], indirect=True)
def test_an_mcp_server_gets_a_variable_from_the_environment_cline_hands_on(
    harness: Adapter,
    run_harness: RunFn,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    record: Recorder,
) -> None:
    """The server's env says LANGUAGE = "${LANGUAGE}"; the file says nothing of it, and the server
    still sees the caller's value (LANGUAGE is on the allowlist): it logs there."""
    mcp_log = tmp_path / "mcp.jsonl"
    monkeypatch.setenv("LANGUAGE", str(mcp_log))
    server = McpServer(
        "trprobe",
        command="sh",
        args=("-c", 'TR_MCP_LOG="$LANGUAGE" exec "$0" "$1"', sys.executable, str(MCP_SERVER)),
        env=(("LANGUAGE", "${LANGUAGE}"),),
    )
    script = Script([Turn.call("mcp:trprobe/tr_echo", {"text": "from-cline"}), Turn.reply("DONE")])
    log = tmp_path / "mock.jsonl"
    result = run_harness("call the tool", mock=script, mock_log=log, profile=Profile(mcp=(server,)))
    assert result.ok, result.error
    assert [d for d in result.dropped if "LANGUAGE is not written" not in d] == []
    calls = [json.loads(line) for line in mcp_log.read_text().splitlines() if '"tools/call"' in line]
    assert [c["params"]["name"] for c in calls] == ["tr_echo"]
    assert "TR_ECHO:from-cline" in requests(log)[-1]
    record(result, "mcp")
