"""Every installable harness, for real, against the mock model: text, a shell round trip,
exact usage, an injected model error, and a dead endpoint.

These drive the real harness binary (installed by ``tackroom install`` at each
version its adapter was verified with: ``verified_with`` and every
``previously_verified``); the mock is the only stand-in.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from realkit import AT_VERSIONS, REAL, Recorder, RunFn, processes_in

from tackroom.adapters.resolve import Adapter
from tackroom.families import get_family
from tackroom.mock import Script, Turn, Usage
from tackroom.sandboxes.bwrap import BwrapSandbox
from tackroom.trace.events import ToolCall, ToolResult

pytestmark = pytest.mark.real
harnesses = pytest.mark.parametrize("harness", AT_VERSIONS, indirect=True)


def auto(harness: Adapter) -> dict[str, object]:
    """Let tools run unattended where the harness needs to be told."""
    return {"auto_accept": True} if harness.spec.options.auto_accept is not None else {}


@harnesses
def test_plain_text_arrives_as_final_text(harness: Adapter, run_harness: RunFn, record: Recorder) -> None:
    text = f"TACKROOM-TEXT-{harness.name}"
    result = run_harness("say the magic words", mock_text=text)
    record(result, "text")
    assert result.ok, result.error
    assert result.final_text is not None and result.final_text.strip() == text
    assert result.harness_version == harness.version
    # The run used the adapter's data for the version that ran, not the verified version's.
    assert result.adapter_hash == harness.hash


@harnesses
def test_shell_round_trip_changes_the_workdir(
    harness: Adapter, run_harness: RunFn, workdir: Path, record: Recorder
) -> None:
    if harness.spec.tools.shell is None:
        pytest.skip(f"{harness.name} has no shell tool (its adapter's [tools] has no shell)")
    script = Script(
        [Turn.call("shell", {"command": "echo tackroom-was-here > proof.txt"}), Turn.reply("DONE")]
    )
    result = run_harness("write the proof file", mock=script, options=auto(harness))
    record(result, "shell", options=auto(harness))
    assert result.ok, result.error
    assert (workdir / "proof.txt").read_text().strip() == "tackroom-was-here"
    assert any(isinstance(e, ToolCall) for e in result.events)
    assert any(isinstance(e, ToolResult) for e in result.events)
    assert result.final_text is not None and result.final_text.strip() == "DONE"


@harnesses
def test_usage_from_the_mock_appears_exactly(harness: Adapter, run_harness: RunFn, record: Recorder) -> None:
    figures = Usage(input=321, output=54, cache_read=21, cache_write=5, reasoning=3)
    result = run_harness("count tokens", mock=Script([Turn.reply("counted", usage=figures)]))
    record(result, "usage")
    assert result.ok, result.error
    wire = harness.spec.model_endpoint.wire_api if harness.spec.model_endpoint else None
    # Anthropic's input_tokens excludes cache reads; the other wires count them in the prompt.
    fresh = figures.input if wire == "anthropic-messages" else figures.input - figures.cache_read
    expected = {
        "input": fresh,
        "output": figures.output,
        "cache_read": figures.cache_read,
        "cache_write": figures.cache_write,
        "reasoning": figures.reasoning,
    }
    family = get_family(harness.family)
    reported = {k: v for k, v in result.usage.to_json().items() if v != "not_reported"}
    assert set(reported) == set(family.reports_usage), reported
    assert reported == {k: expected[k] for k in reported}


@harnesses
def test_injected_model_error_is_a_failure(harness: Adapter, run_harness: RunFn, record: Recorder) -> None:
    script = Script([Turn.error(400, "TACKROOM-INJECTED-ERROR")])
    result = run_harness("fail please", mock=script, timeout_s=90)
    record(result, "error")
    assert not result.timed_out, "a 400 must fail the run, not hang it"
    assert result.model_failed, (result.exit_code, result.final_text, result.error)
    assert not result.ok and result.error


@harnesses
def test_dead_endpoint_ends_within_the_timeout(
    harness: Adapter, run_harness: RunFn, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # An endpoint other than the mock gets the caller's own key, named here.
    monkeypatch.setenv("TACKROOM_TEST_ENDPOINT_KEY", "sk-dead-endpoint")
    started = time.monotonic()
    result = run_harness(
        "anyone there?",
        base_url=f"http://127.0.0.1:{port}",
        api_key_env="TACKROOM_TEST_ENDPOINT_KEY",
        timeout_s=15,
    )
    assert time.monotonic() - started < 15 + 10
    assert not result.ok
    assert processes_in(workdir) == []


@pytest.mark.parametrize("harness", REAL, indirect=True)
def test_plain_text_inside_bwrap_with_no_network(harness: Adapter, run_harness: RunFn) -> None:
    """Issue 24: every harness runs in bubblewrap (host read-only, the user's homes hidden, its own
    PID and network namespaces) and reaches the mock through the relay, and only the mock."""
    why = BwrapSandbox.available()
    if why is not None and not os.environ.get("TACKROOM_TEST_REQUIRE_BWRAP"):
        pytest.skip(f"bwrap cannot run here: {why}")
    text = f"TACKROOM-BWRAP-{harness.name}"
    result = run_harness("say the magic words", mock_text=text, sandbox="bwrap", network="none")
    assert result.ok, result.error
    assert result.final_text is not None and result.final_text.strip() == text


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_the_capability_probe_on_the_host(
    harness: Adapter, harness_environ: dict[str, str], tmp_path: Path
) -> None:
    """`tackroom probe claude-code` with no sandbox proves every declared capability (the probes of
    tests/real/test_profile_real.py run in bwrap, offline)."""
    from tackroom.probe.doctor import declared_capabilities
    from tackroom.probe.runner import probe

    row = probe(harness, environ=harness_environ, scratch=tmp_path, timeout_s=120)
    assert row.outcome == "ok", row.notes
    unproven = {
        c: row.supports.get(c) for c in declared_capabilities(harness) if row.supports.get(c) is not True
    }
    assert not unproven, (unproven, row.notes)
