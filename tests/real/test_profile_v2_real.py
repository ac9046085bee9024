"""Profile v2 against the real harness binary and the mock model: permissions, path-scoped rules, env.

Each test renders a profile the way every run does (into the run's isolated
home) and watches what the harness does with it: which tool calls it runs,
what it sends the model, what its hooks see. Claude Code runs at 2.1.332 and
2.1.197, Qwen Code at 0.24.4 and 0.15.10 (every version their adapters claim).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from realkit import RunFn

from tackroom.adapters.resolve import Adapter
from tackroom.mock import Script, Turn
from tackroom.profile.model import Agent, Hook, Permissions, Profile
from tackroom.trace.events import ToolResult

pytestmark = pytest.mark.real
CLAUDE = ["claude-code", "claude-code@2.1.197"]
QWEN = ["qwen", "qwen@0.15.10"]
claude = pytest.mark.parametrize("harness", CLAUDE, indirect=True)
permissions = pytest.mark.parametrize("harness", CLAUDE + QWEN, indirect=True)


def requests(log: Path) -> list[dict[str, Any]]:
    """The request bodies the mock received, in order (its side calls included)."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def texts(log: Path) -> list[str]:
    return [json.dumps(r.get("body"), ensure_ascii=False) for r in requests(log) if r.get("turn") is not None]


def auto_argv(harness: Adapter) -> str:
    """What the auto-accept option puts on the command line (it must not undo a deny)."""
    option = harness.spec.options.auto_accept
    argv = option if isinstance(option, list) else getattr(option, "argv", [])
    return " ".join(argv)


def offered(log: Path) -> list[str]:
    """The tool names of the first conversation request."""
    first = next(r for r in requests(log) if r.get("turn") is not None)
    tools = first["body"].get("tools", [])
    # Anthropic {name}; OpenAI chat {function: {name}}
    return [str(t.get("name") or t.get("function", {}).get("name")) for t in tools]


@permissions
def test_a_denied_tool_is_not_offered_even_with_auto_accept(
    harness: Adapter, run_harness: RunFn, tmp_path: Path
) -> None:
    log = tmp_path / "mock.jsonl"
    profile = Profile(permissions=Permissions(deny=("shell",)))
    result = run_harness(
        "hello", mock_text="HI", mock_log=log, profile=profile, options={"auto_accept": True}
    )
    assert result.ok, result.error
    assert auto_argv(harness) in " ".join(result.argv)
    tools = offered(log)
    shell, read = harness.spec.tools.shell, harness.spec.tools.read_file
    assert read in tools and shell not in tools, tools


@permissions
def test_a_denied_command_pattern_does_not_run_even_with_auto_accept(
    harness: Adapter, run_harness: RunFn, workdir: Path, tmp_path: Path
) -> None:
    marker = workdir / "marker.txt"
    script = Script([Turn.call("shell", {"command": f"touch {marker}"}), Turn.reply("DONE")])
    log = tmp_path / "mock.jsonl"
    profile = Profile(permissions=Permissions(deny=('shell("touch:*")',)))
    result = run_harness(
        "touch the marker", mock=script, mock_log=log, profile=profile, options={"auto_accept": True}
    )
    assert result.ok, result.error
    assert auto_argv(harness) in " ".join(result.argv)
    assert harness.spec.tools.shell in offered(log)
    assert not marker.exists(), "a denied shell call ran"
    [tool_result] = [e for e in result.events if isinstance(e, ToolResult)]
    assert tool_result.is_error and tool_result.output is not None
    assert "denied" in tool_result.output.lower() or "permission" in tool_result.output.lower()
    # The harness sent that refusal back to the model as the call's result.
    [_, second] = texts(log)
    assert json.dumps(tool_result.output)[1:40] in second


@claude
def test_without_the_deny_the_same_call_runs(harness: Adapter, run_harness: RunFn, workdir: Path) -> None:
    marker = workdir / "marker.txt"
    script = Script([Turn.call("shell", {"command": f"touch {marker}"}), Turn.reply("DONE")])
    result = run_harness("touch the marker", mock=script, profile=Profile(), options={"auto_accept": True})
    assert result.ok, result.error
    assert marker.exists()


# Not codex: [shell_environment_policy.set] never reached its hooks (0.171.0), so it has no env capability.
env_harnesses = pytest.mark.parametrize("harness", CLAUDE + QWEN, indirect=True)


def env_hook(harness: Adapter, seen: Path) -> Hook:
    """A hook at the first moment this harness fires headless, writing what it sees of the variable."""
    events = harness.spec.capabilities.hooks.events  # type: ignore[union-attr]
    moment = "session-start" if "session-start" in events else "prompt-submit"
    return Hook("probe-env", moment, "command", command=f'printf %s "$TACKROOM_PROBE_ENV" > {seen}')


@env_harnesses
def test_session_env_reaches_a_hook(harness: Adapter, run_harness: RunFn, tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    hook = env_hook(harness, seen)
    profile = Profile(hooks=(hook,), env=(("TACKROOM_PROBE_ENV", "xyz"),))
    result = run_harness("hello", mock_text="HI", profile=profile)
    assert result.ok, result.error
    assert not result.dropped, result.dropped
    assert seen.read_text() == "xyz"


@env_harnesses
def test_without_the_env_the_hook_sees_nothing(harness: Adapter, run_harness: RunFn, tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    hook = env_hook(harness, seen)
    result = run_harness("hello", mock_text="HI", profile=Profile(hooks=(hook,)))
    assert result.ok, result.error
    assert seen.read_text() == ""


RULE = "TACKROOM-SCOPED-RULE: python files use tabs"


@claude
@pytest.mark.parametrize(("target", "reaches"), [("src/a.py", True), ("README.md", False)])
def test_a_path_scoped_rule_reaches_the_model_only_after_a_matching_read(
    harness: Adapter, run_harness: RunFn, workdir: Path, tmp_path: Path, target: str, reaches: bool
) -> None:
    # The rule-dir engine writes the project's .claude/rules file, as `profile render --scope project` does.
    from tackroom.profile.model import Rule
    from tackroom.profile.render import plan_render, write

    scoped = Profile(rules=(Rule("python-tabs", f"{RULE}\n", globs=("src/**/*.py",)),))
    rendered = write(plan_render(scoped, harness, root=workdir, scope="project"))
    assert [p.relative_to(workdir).as_posix() for p in rendered.written] == [".claude/rules/python-tabs.md"]
    (workdir / "src").mkdir()
    (workdir / "src" / "a.py").write_text("print('a')\n")
    (workdir / "README.md").write_text("# readme\n")
    script = Script([Turn.call("read_file", {"file_path": str(workdir / target)}), Turn.reply("DONE")])
    log = tmp_path / "mock.jsonl"
    result = run_harness(
        "read it", mock=script, mock_log=log, profile=Profile(), options={"auto_accept": True}
    )
    assert result.ok, result.error
    [first, second] = texts(log)
    assert RULE not in first
    assert (RULE in second) is reaches


@claude
def test_more_moments_fire_where_claude_has_them(
    harness: Adapter, run_harness: RunFn, workdir: Path, tmp_path: Path
) -> None:
    fired = tmp_path / "fired.txt"
    moments = ("after-tool-failure", "subagent-start", "subagent-stop")
    hooks = tuple(Hook(f"m-{m}", m, "command", command=f"echo {m} >> {fired}") for m in moments)
    agent = Agent("helper", "Helps with small tasks", "You help.\n")
    script = Script(
        [
            Turn.call("read_file", {"file_path": str(workdir / "missing.txt")}),
            Turn.call(
                "subagent", {"description": "help", "prompt": "say hi to the user", "subagent_type": "helper"}
            ),
            Turn.reply("SUBAGENT-DONE"),
            Turn.reply("DONE"),
        ]
    )
    profile = Profile(agents=(agent,), hooks=hooks)
    result = run_harness("go", mock=script, profile=profile, options={"auto_accept": True})
    assert result.ok, result.error
    assert not result.dropped, result.dropped
    seen = fired.read_text().split() if fired.exists() else []
    assert sorted(set(seen)) == sorted(moments), seen
