"""Probes observe, never infer: each capability is true only when seen, false when looked for and
missing; the runner alone writes the outcome, and every probe ends in a stored row.

The harness here is the fake agent, a real subprocess talking to the real mock over a socket;
each of its flags breaks one thing a probe must notice.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import pytest

from probekit import AGENT_CAPABILITIES, agent_adapter, script
from tackroom.adapters.resolve import Adapter, load_adapters, resolve_builtins
from tackroom.errors import ProbeError
from tackroom.harnesses import Located
from tackroom.probe import procs
from tackroom.probe.builtin import MCP_SERVER, Context, Harness, glob_regex, observe
from tackroom.probe.rows import CAPABILITIES, OUTCOME_NOTE
from tackroom.probe.runner import aprobe_all, check_capabilities, probe
from tackroom.state import CapabilityRows, StateDB


@pytest.fixture
def store(tmp_path: Path) -> CapabilityRows:
    return CapabilityRows(StateDB(tmp_path / "state.db"))


def test_a_harness_that_reads_its_profile_is_proven_on_each_capability(
    config_dir: Path, tmp_path: Path, store: CapabilityRows
) -> None:
    adapter = agent_adapter(config_dir)
    row = probe(adapter, capabilities=AGENT_CAPABILITIES, store=store, scratch=tmp_path, timeout_s=20)
    assert row.outcome == "ok", row.notes
    assert row.supports == dict.fromkeys(AGENT_CAPABILITIES, True), row.notes
    # The row is about the adapter as it applies to the version probed (its since entries).
    assert row.harness_version == "2.1.197" and row.adapter_hash == adapter.at("2.1.197").hash
    assert store.latest("fake") == row


def test_a_harness_that_ignores_its_profile_is_false_on_every_item(config_dir: Path, tmp_path: Path) -> None:
    adapter = agent_adapter(config_dir, "--ignore-profile")
    wanted = ("rules.read", "skills.visible", "agents.visible", "commands.expand")
    row = probe(adapter, capabilities=wanted, scratch=tmp_path, timeout_s=20)
    assert row.outcome == "ok"
    assert row.supports == dict.fromkeys(wanted, False)
    assert all("never reached the model" in row.notes[c] for c in wanted)


@pytest.mark.parametrize(
    ("flag", "capability", "value", "note"),
    [
        ("--wrong-usage", "usage.exact", False, "input 642 (sent 321)"),
        ("--no-usage", "usage.exact", "n/o", "reported no usage"),
        ("--ignore-model", "endpoint.model", False, "the endpoint saw fake-default-model"),
        ("--hide-errors", "error.detected", False, "looked successful"),
        ("--no-transcript", "transcripts.written", False, "no file matching **/*.jsonl"),
    ],
)
def test_each_broken_behaviour_is_found(
    config_dir: Path, tmp_path: Path, flag: str, capability: str, value: object, note: str
) -> None:
    row = probe(agent_adapter(config_dir, flag), capabilities=[capability], scratch=tmp_path, timeout_s=20)
    assert row.outcome == "ok", row.notes
    assert row.supports == {capability: value}
    assert note in row.notes[capability]


def test_a_transcript_written_through_a_link_out_of_the_run_does_not_count(
    config_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    adapter = agent_adapter(config_dir, "--link-transcripts", str(outside))
    row = probe(adapter, capabilities=["transcripts.written"], scratch=tmp_path, timeout_s=20)
    assert list(outside.rglob("*.jsonl")), "the fake wrote its session file through the link"
    assert row.supports == {"transcripts.written": False}
    assert "a link out of the run" in row.notes["transcripts.written"]


def test_a_timeout_that_leaves_nothing_running_is_proven(config_dir: Path, tmp_path: Path) -> None:
    row = probe(
        agent_adapter(config_dir), capabilities=["process.tree_killed"], scratch=tmp_path, timeout_s=3
    )
    assert row.supports == {"process.tree_killed": True}, row.notes
    assert "while the model kept it waiting" in row.notes["process.tree_killed"]


def test_a_process_that_leaves_group_and_marker_is_stopped_by_the_run_where_it_has_a_cgroup(
    config_dir: Path, tmp_path: Path
) -> None:
    from tackroom.run.cgroup import cage

    made = cage("probe-test")
    if made is None:
        pytest.skip("no cgroup can be made here: such a process is the probe's to find (next test)")
    made.remove()
    adapter = agent_adapter(config_dir, "--leave-child", "--lifetime", "60")
    row = probe(adapter, capabilities=["process.tree_killed"], scratch=tmp_path, timeout_s=3)
    assert row.supports == {"process.tree_killed": True}, row.notes
    assert "1 process(es) had left the group and were stopped" in row.notes["process.tree_killed"]


def test_a_process_that_outlives_the_timeout_is_found_and_stopped(config_dir: Path, tmp_path: Path) -> None:
    # It leaves the group, the run's marker and (where it may: as root) the run's cgroup.
    adapter = agent_adapter(config_dir, "--leave-child", "--leave-cgroup", "--lifetime", "60")
    row = probe(adapter, capabilities=["process.tree_killed"], scratch=tmp_path, timeout_s=3)
    assert row.supports == {"process.tree_killed": False}, row.notes
    note = row.notes["process.tree_killed"]
    assert "still running after the timeout" in note and "time.sleep(60" in note
    pid = int(note.split(": ", 1)[1].split()[0])
    deadline = time.monotonic() + 5
    while procs.alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not procs.alive(pid), "the probe must stop what it found"


def test_a_harness_that_crashes_is_a_failed_row_with_a_note_and_no_false_claims(
    config_dir: Path, tmp_path: Path, store: CapabilityRows
) -> None:
    row = probe(agent_adapter(config_dir, "--crash"), store=store, scratch=tmp_path, timeout_s=20)
    assert row.outcome == "failed"
    assert "exit code 3" in row.notes[OUTCOME_NOTE] and "crashing on purpose" in row.notes[OUTCOME_NOTE]
    # It never got to show anything: nothing is claimed false, each untested capability says why.
    assert False not in row.supports.values()
    assert "before this could be observed" in row.notes["rules.read"]
    assert store.history("fake") == [row]


def test_output_that_is_not_a_stream_fails_the_row(config_dir: Path, tmp_path: Path) -> None:
    row = probe(agent_adapter(config_dir, "--garbage"), capabilities=["rules.read"], scratch=tmp_path)
    assert row.outcome == "failed"
    assert "incomplete stream" in row.notes[OUTCOME_NOTE]
    assert row.supports == {}


def test_a_harness_that_is_not_installed_is_a_not_installed_row(
    config_dir: Path, tmp_path: Path, store: CapabilityRows
) -> None:
    codex = resolve_builtins()["codex"]  # nothing is installed in this test's data dir
    row = probe(codex, store=store, scratch=tmp_path, environ={"PATH": str(tmp_path)})
    assert row.outcome == "not_installed" and row.supports == {} and row.harness_version is None
    assert "tackroom install codex" in row.notes[OUTCOME_NOTE]
    assert store.latest("codex") == row


def test_an_adapter_that_cannot_reach_the_mock_is_a_failed_row(config_dir: Path, tmp_path: Path) -> None:
    (config_dir / "adapters.d" / "c.toml").write_text(
        f'[adapter.cursor]\nexecutable = "{Path(__file__).parent / "fakes" / "fake_agent.py"}"\n'
    )
    cursor = load_adapters(config=config_dir)["cursor"]
    assert cursor.spec.model_endpoint is None
    row = probe(cursor, capabilities=["rules.read"], scratch=tmp_path)
    assert row.outcome == "failed" and row.supports == {}
    assert "model_endpoint" in row.notes[OUTCOME_NOTE] and "model_endpoint" in row.notes["rules.read"]


def test_what_the_adapter_does_not_declare_is_untested_without_running(tmp_path: Path) -> None:
    minimal = resolve_builtins()["mini-swe-agent"]
    # Not installed here either: the declared-nothing notes come from the adapter alone.
    wanted = [c for c in CAPABILITIES if c.startswith(("rules", "skills", "mcp", "hooks"))]
    context = Context(
        Harness(minimal, Located(Path("/nonexistent/mini"), "configured", "0"), "0"),
        frozenset(wanted),
        tmp_path,
        {},
        5,
    )
    found = asyncio.run(observe(context))
    assert found.supports == {} and found.troubles == []
    assert set(found.notes) == set(wanted)
    assert all(note.startswith("untested: the adapter declares no") for note in found.notes.values())


def test_an_unknown_capability_is_refused() -> None:
    with pytest.raises(ProbeError, match=r"unknown capabilities rules\.reed"):
        check_capabilities(["rules.reed"])


# --- external probes ----------------------------------------------------------------------------


def _external(config_dir: Path, tmp_path: Path, body: str) -> Adapter:
    probe_file = script(tmp_path / "probe.py", body)
    return agent_adapter(config_dir, extra=f"probe = [{json.dumps(str(probe_file))}]\n")


def test_an_external_probe_reports_supports_and_notes(config_dir: Path, tmp_path: Path) -> None:
    body = (
        "import json, os\n"
        "assert os.environ['TACKROOM_PROBE_ADAPTER'] == 'fake'\n"
        "assert 'SECRET_OF_THE_HOST' not in os.environ\n"
        "print(json.dumps({'supports': {'rules.read': True, 'hooks.inject': 'n/o'},"
        " 'notes': {'hooks.inject': 'silent'}}))\n"
    )
    adapter = _external(config_dir, tmp_path, body)
    environ = {"PATH": "/usr/bin:/bin", "SECRET_OF_THE_HOST": "x"}
    row = probe(adapter, scratch=tmp_path, environ=environ)
    assert row.outcome == "ok", row.notes
    assert row.supports == {"rules.read": True, "hooks.inject": "n/o"}
    assert row.notes == {"hooks.inject": "silent"}


@pytest.mark.parametrize(
    ("body", "outcome", "note"),
    [
        ("print('garbage')\n", "failed", "not one JSON value"),
        ('print(\'{"supports": {}, "outcome": "ok"}\')\n', "failed", "not outcome"),
        ('print(\'{"supports": {"rules.read": 1}}\')\n', "failed", "must be true, false"),
        ('print(\'{"supports": {}}{"supports": {}}\')\n', "failed", "not one JSON value"),
        ("import sys\nprint('boom', file=sys.stderr)\nsys.exit(2)\n", "failed", "exited 2: boom"),
        ("import time\ntime.sleep(30)\n", "timeout", "ran past 1s"),
        ("print('x' * 300000)\n", "failed", "more than"),
    ],
    ids=["garbage", "outcome-key", "not-a-bool", "two-objects", "crash", "hang", "flood"],
)
def test_an_external_probe_that_misbehaves_is_a_failed_or_timed_out_row(
    config_dir: Path, tmp_path: Path, store: CapabilityRows, body: str, outcome: str, note: str
) -> None:
    adapter = _external(config_dir, tmp_path, body)
    started = time.monotonic()
    row = probe(adapter, scratch=tmp_path, timeout_s=1, store=store)
    assert time.monotonic() - started < 10
    assert row.outcome == outcome and row.supports == {}
    assert note in row.notes[OUTCOME_NOTE]
    assert store.history("fake") == [row]


@pytest.mark.timing
def test_probes_of_different_harnesses_run_concurrently(config_dir: Path, tmp_path: Path) -> None:
    body = 'import time\ntime.sleep(1.5)\nprint(\'{"supports": {"rules.read": true}}\')\n'
    adapters = []
    for name in ("one", "two"):
        probe_file = script(tmp_path / f"{name}.py", body)
        adapters.append(
            agent_adapter(config_dir, name=name, extra=f"probe = [{json.dumps(str(probe_file))}]\n")
        )
    started = time.monotonic()
    rows = asyncio.run(aprobe_all(adapters, jobs=2, scratch=tmp_path))
    both = time.monotonic() - started
    assert [r.adapter for r in rows] == ["one", "two"] and all(r.outcome == "ok" for r in rows)
    assert both < 2.8, f"two 1.5 s probes with --jobs 2 took {both:.1f}s"


def test_jobs_must_be_at_least_one(config_dir: Path) -> None:
    with pytest.raises(ProbeError, match="jobs"):
        asyncio.run(aprobe_all([agent_adapter(config_dir)], jobs=0))


def test_transcript_globs_match_as_pathlib_would() -> None:
    assert glob_regex("*/chats/**/*.jsonl").fullmatch("h/chats/s.jsonl")
    assert glob_regex("*/chats/**/*.jsonl").fullmatch("h/chats/a/b/s.jsonl")
    assert not glob_regex("*/*.jsonl").fullmatch("a/b/s.jsonl")
    assert glob_regex(".aider.chat.history.md").fullmatch(".aider.chat.history.md")
    assert not glob_regex("*.md").fullmatch("a/b.md")


def test_a_pid_named_in_the_mcp_log_is_stopped_only_if_it_is_the_probe_server(tmp_path: Path) -> None:
    # The log is written beside the harness, so it is outside input: a pid in it that is not our
    # MCP server (here a bystander sleep, or pid 1) is never counted, and never killed.
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        workdir = tmp_path / "work"
        workdir.mkdir()
        found = procs.leftovers(
            tmp_path / "run-x", workdir, [bystander.pid, 1, True], command=str(MCP_SERVER)
        )
        assert found == {}
        assert procs.alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()


def test_a_probe_inside_bwrap_proves_the_same_capabilities(
    config_dir: Path, tmp_path: Path, store: CapabilityRows
) -> None:
    """Issue 24: `tackroom probe NAME --sandbox bwrap --network none`: every probe run in bubblewrap,
    its hooks and MCP server reporting through the scratch directory the probe lets it write."""
    import os

    from tackroom.sandboxes.bwrap import BwrapSandbox

    why = BwrapSandbox.available()
    if why is not None and not os.environ.get("TACKROOM_TEST_REQUIRE_BWRAP"):
        pytest.skip(f"bwrap cannot run here: {why}")
    adapter = agent_adapter(config_dir)
    row = probe(
        adapter,
        capabilities=AGENT_CAPABILITIES,
        store=store,
        scratch=tmp_path,
        timeout_s=20,
        sandbox="bwrap",
        network="none",
    )
    assert row.outcome == "ok", row.notes
    assert row.supports == dict.fromkeys(AGENT_CAPABILITIES, True), row.notes


def test_what_a_harness_reads_only_from_a_project_is_rendered_into_the_probes_own_workdir(
    tmp_path: Path,
) -> None:
    """Cursor reads rules only from a project (``.cursor/rules``), its skills from the home too: the
    probe writes the rules into the run's scratch workdir, where a run would drop them."""
    from tackroom.profile.model import Profile, Rule, Skill

    cursor = resolve_builtins()["cursor"]
    ctx = Context(
        Harness(cursor, Located(tmp_path / "agent", "path", None), None), frozenset(), tmp_path, {}, 10
    )
    workdir = tmp_path / "work"
    workdir.mkdir()
    rule, skill = Rule("probe", "Rule text TRPROBE_RULES\n"), Skill("tr-probe-skill", "A skill.", "Say it.\n")
    left = ctx.into_project(Profile(rules=(rule,), skills=(skill,)), workdir)
    assert left == Profile(skills=(skill,))
    [written] = (workdir / ".cursor" / "rules").iterdir()
    assert written.name == "probe.mdc" and "TRPROBE_RULES" in written.read_text(encoding="utf-8")
    claude = Context(
        Harness(resolve_builtins()["claude-code"], Located(tmp_path, "path", None), None),
        frozenset(),
        tmp_path,
        {},
        10,
    )
    everything = Profile(rules=(rule,), skills=(skill,))
    assert claude.into_project(everything, workdir) is everything
