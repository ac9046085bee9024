"""Every harness with a transcript reader, for real: a run's result carries the session its harness logged.

The mock answers with known usage; the session read back from the harness's
own log must hold the tool call and its result, and report per call exactly
what the mock sent, wherever the log reports it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realkit import AT_VERSIONS, RunFn

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.families import get_family
from tackroom.mock import Script, Turn, Usage
from tackroom.trace.attribute import RunWindow, attribute, moment
from tackroom.trace.events import FIGURES, UsageReport
from tackroom.trace.model import SessionMeta

pytestmark = pytest.mark.real


def _readable(param: str) -> bool:
    adapter = resolve_builtins()[param.partition("@")[0]]
    return adapter.spec.transcripts is not None and get_family(adapter.family).transcripts() is not None


def _leaves_a_session(param: str) -> bool:
    """Whether the adapter says tackroom's runs leave their session under its roots (``transcripts.runs``)."""
    spec = resolve_builtins()[param.partition("@")[0]].spec.transcripts
    return spec is not None and spec.runs


# A harness whose run writes its log where tackroom reads its stream (transcripts.runs = false), not in
# its home, has nothing to read back: mini-swe-agent's trajectory goes to stdout, and the one a run
# printed is read as a file below.
READABLE = [
    p
    if _leaves_a_session(p)
    else pytest.param(p, marks=pytest.mark.skip(reason="the adapter's runs leave no session under its roots"))
    for p in AT_VERSIONS
    if _readable(p)
]
USAGE = Usage(input=321, output=45, cache_read=67, cache_write=8, reasoning=0)


@pytest.mark.parametrize("harness", READABLE, indirect=True)
def test_the_run_result_carries_the_session_its_harness_logged(
    harness: Adapter, run_harness: RunFn, workdir: Path
) -> None:
    options = {"auto_accept": True} if harness.spec.options.auto_accept is not None else {}
    if harness.spec.tools.shell is not None:
        turns = [
            Turn.call("shell", {"command": "echo traced > t.txt"}, usage=USAGE),
            Turn.reply("TRACED", usage=USAGE),
        ]
    else:
        turns = [Turn.reply("TRACED", usage=USAGE)]
    result = run_harness("trace this", mock=Script(turns), options=options)
    assert result.ok, result.error
    assert result.trace is not None, "the run's logs were not read"
    assert not result.trace.ambiguous
    main = [t for t in result.trace.traces if t.meta.parent_id is None]
    assert len(main) == 1, [t.session_id for t in result.trace.traces]
    session = main[0]
    if result.session_id is not None:
        assert session.session_id == result.session_id
    kinds = {item.event.kind for item in session.events}
    if harness.spec.tools.shell is not None:
        assert {"tool_call", "tool_result"} <= kinds, kinds
    # Each call's usage in the log, where the log has it, is what the mock sent: never a guess.
    calls = {}
    for n, item in enumerate(session.events):
        if isinstance(item.event, UsageReport):
            calls[item.key or n] = item.event.usage
    for usage in calls.values():
        for name in FIGURES:
            value = getattr(usage, name)
            sent = getattr(USAGE, name)
            if value is not None and name != "input":
                assert value in (sent, 0) if name == "reasoning" else value == sent, (name, usage)
    assert result.to_json()["trace"]["sessions"][0]["session_id"] == session.session_id


@pytest.mark.parametrize(
    "harness", [p for p in AT_VERSIONS if p.partition("@")[0] == "mini-swe-agent"], indirect=True
)
def test_a_log_a_run_prints_reads_as_the_file_its_harness_saves(
    harness: Adapter, run_harness: RunFn, tmp_path: Path
) -> None:
    """mini saves its trajectory with the same bytes to a file as to stdout: the last one printed, saved
    under the reader's glob, is read back with the tool call, its result and each call's usage exact."""
    from tackroom.trace.model import Cursor, TraceEvent

    turns = [
        Turn.call("shell", {"command": "echo traced > t.txt"}, usage=USAGE),
        Turn.reply("TRACED", usage=USAGE),
    ]
    result = run_harness("trace this", mock=Script(turns), options={})
    assert result.ok, result.error
    lines = (result.run_dir / "stdout.log").read_text(encoding="utf-8").splitlines()
    start = max(n for n, line in enumerate(lines) if line == "{")
    end = next(n for n in range(start, len(lines)) if lines[n].startswith("}"))
    saved = tmp_path / "last_mini_run.traj.json"
    saved.write_text("\n".join([*lines[start:end], "}"]), encoding="utf-8")
    reader = get_family(harness.family).transcripts()
    assert reader is not None
    items = [i for i in reader.read(saved, Cursor()) if isinstance(i, TraceEvent)]
    kinds = {i.event.kind for i in items}
    assert {"tool_call", "tool_result", "usage"} <= kinds, kinds
    calls = [i.event.usage for i in items if isinstance(i.event, UsageReport)]
    assert len(calls) == 2
    for usage in calls:
        assert (usage.output, usage.cache_read, usage.input) == (
            USAGE.output,
            USAGE.cache_read,
            USAGE.input - USAGE.cache_read,
        )


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_a_run_in_the_real_home_claims_its_session_by_directory_and_time(
    harness: Adapter, run_harness: RunFn, workdir: Path, tmp_path: Path
) -> None:
    # The test's HOME is its own temporary directory: "real" here is that, never the user's.
    result = run_harness("say hi", mock_text="HI", home="real")
    assert result.ok, result.error
    assert result.trace is not None
    (session,) = result.trace.traces
    assert session.meta.cwd == str(workdir)
    assert session.session_id == result.session_id
    # The same session, with another run of claude-code in the same directory at the same time: ambiguous.
    start = moment(session.meta.started)
    assert start is not None
    ours = RunWindow(result.run_dir.name, "claude-code", str(workdir), start, start, isolated=False)
    theirs = RunWindow("other-run", "claude-code", str(workdir), start, start, isolated=False)
    meta = SessionMeta(session.session_id, cwd=str(workdir), started=session.meta.started)
    claim = attribute("claude-code", meta, None, [ours, theirs])
    assert claim.ambiguous and claim.run_id is None
    assert attribute("claude-code", meta, None, [ours]).run_id == result.run_dir.name
