"""The pi-extension engine: hooks as one generated extension module, and that module read back.

The module is checked where it will run: ``node --check`` parses it, and node
loads it with a stand-in for the extension API so each handler's result (block,
inject, fail closed) is observed, not inferred from the text.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.adapters.schema import HooksCapability, HookTemplate
from tackroom.errors import ProfileError
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Output
from tackroom.profile.model import Hook

ENGINE = engine("pi-extension")
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
needs_jq = pytest.mark.skipif(shutil.which("jq") is None, reason="jq (the templates' tool) is not installed")

FIRE = Hook("fire", "session-start", "command", command="echo fired >> fired.txt")
INJECT = Hook("advise", "prompt-submit", "inject", text="Mind the tests, it's Friday.")
REFUSE = Hook("no-shell", "before-tool", "refuse", text="No shell here.", matcher=("shell",))

# Driven by node: load the module with a stand-in `pi`, call each handler of each event
# given, and print what it returned (null for nothing) or the message it threw.
DRIVER = """
const mod = await import(process.argv[1]);
const handlers = [];
mod.default({ on: (event, handler) => handlers.push([event, handler]) });
const out = [];
for (const [event, payload] of JSON.parse(process.argv[2])) {
  for (const [name, handler] of handlers.filter(([name]) => name === event)) {
    try {
      out.push({ event, value: (await handler(payload, { cwd: process.argv[3] })) ?? null });
    } catch (error) {
      out.push({ event, threw: error.message });
    }
  }
}
console.log(JSON.stringify(out));
"""


def pi() -> Adapter:
    return resolve_builtins()["pi"]


def custom(**hooks: Any) -> Adapter:
    """pi with another hooks capability: nothing about the harness is in the engine."""
    base = pi()
    capability = HooksCapability(path="~/ext/tackroom.ts", render="pi-extension", **hooks)
    caps = base.spec.capabilities.model_copy(update={"hooks": capability})
    spec = base.spec.model_copy(update={"capabilities": caps})
    return Adapter.from_spec("custom", spec, "pi", "test", {})


def context(adapter: Adapter, path: Path) -> Context:
    capability = adapter.spec.capabilities.hooks
    assert capability is not None
    return Context(adapter, "hooks", capability, path)


def render(adapter: Adapter, path: Path, hooks: Sequence[Hook]) -> tuple[list[Output], Context]:
    ctx = context(adapter, path)
    return ENGINE.render(ctx, hooks), ctx


def entries(text: str) -> list[dict[str, Any]]:
    lines = text.splitlines()
    start = lines.index("const HOOKS = [") + 1
    return [json.loads(line.strip().rstrip(",")) for line in lines[start : lines.index("];")]]


def test_one_module_with_one_entry_per_hook(tmp_path: Path) -> None:
    target = tmp_path / "extensions" / "tackroom.ts"
    outputs, ctx = render(pi(), target, [FIRE, INJECT, REFUSE])
    [output] = outputs
    assert output.path == target and not output.merge and isinstance(output.text, str)
    assert ctx.drops == []
    found = entries(output.text)
    assert [(e["event"], e["tools"]) for e in found] == [
        ("session_start", []),
        ("before_agent_start", []),
        ("tool_call", ["bash"]),
    ]
    assert found[0]["command"] == "echo fired >> fired.txt # tackroom:hook fire"
    assert found[2]["command"].startswith("jq -nc --arg m 'No shell here.' ")
    assert 'const TOOL_NAME = "toolName";' in output.text
    assert "export default function" in output.text


def test_event_names_fields_and_templates_come_from_the_adapter(tmp_path: Path) -> None:
    adapter = custom(
        events={"before-tool": "pre_call"},
        fields={"tool-name": "call.tool"},
        refuse=HookTemplate(template="printf 'STOP %s' {{text}}"),
    )
    [output], _ = render(adapter, tmp_path / "t.ts", [REFUSE])
    assert isinstance(output.text, str)
    [entry] = entries(output.text)
    assert entry["event"] == "pre_call" and entry["command"].startswith("printf 'STOP %s' 'No shell here.'")
    assert 'const TOOL_NAME = "call.tool";' in output.text


def test_hooks_without_a_channel_are_dropped_by_name(tmp_path: Path) -> None:
    hooks = [
        Hook("late-advice", "after-tool", "inject", text="too late"),
        Hook("late-refusal", "after-tool", "refuse", text="too late"),
        Hook("start-refusal", "session-start", "refuse", text="nothing to block"),
        Hook("no-search", "before-tool", "refuse", text="x", matcher=("search",)),
        FIRE,
    ]
    outputs, ctx = render(pi(), tmp_path / "t.ts", hooks)
    reasons = {d.name: d.reason for d in ctx.drops}
    assert set(reasons) == {"late-advice", "late-refusal", "start-refusal", "no-search"}
    assert reasons["late-advice"].startswith("after-tool inject unsupported")
    assert reasons["start-refusal"].startswith("session-start refuse unsupported")
    assert reasons["no-search"] == "no tool search here"
    assert [e["command"] for e in entries(str(outputs[0].text))] == [
        "echo fired >> fired.txt # tackroom:hook fire"
    ]
    assert all(str(d).startswith("pi: dropped hook ") for d in ctx.drops)


def test_missing_moment_template_or_tool_name_field_drops(tmp_path: Path) -> None:
    adapter = custom(events={"before-tool": "tool_call", "session-start": "session_start"})
    outputs, ctx = render(adapter, tmp_path / "t.ts", [INJECT, REFUSE, FIRE])
    reasons = {d.name: d.reason for d in ctx.drops}
    assert reasons == {
        "advise": "prompt-submit unsupported",
        "no-shell": "before-tool refuse unsupported",
    }
    adapter = custom(events={"before-tool": "tool_call"}, refuse=HookTemplate(template="echo {{text}}"))
    outputs, ctx = render(adapter, tmp_path / "t.ts", [REFUSE])
    assert outputs == [] and [d.reason for d in ctx.drops] == ["cannot match tools here (no tool-name field)"]


def test_nothing_left_renders_no_file(tmp_path: Path) -> None:
    outputs, ctx = render(pi(), tmp_path / "t.ts", [Hook("x", "turn-end", "refuse", text="no")])
    assert outputs == [] and [d.name for d in ctx.drops] == ["x"]


def test_parse_reads_back_exactly(tmp_path: Path) -> None:
    odd = Hook("odd", "turn-end", "command", command="echo 'line\u2028sep \u00e9 \U0001f600' # not a marker")
    hooks = [INJECT, FIRE, REFUSE, odd, Hook("any-tool", "after-tool", "command", command='printf %s "$X"')]
    [output], ctx = render(pi(), tmp_path / "t.ts", hooks)
    ctx.path.write_text(str(output.text), encoding="utf-8")
    assert ENGINE.parse(ctx) == sorted(hooks, key=lambda h: h.name)


def test_parse_of_files_tackroom_did_not_write(tmp_path: Path) -> None:
    ctx = context(pi(), tmp_path / "tackroom.ts")
    assert ENGINE.parse(ctx) == []  # no file
    own = 'export default function (pi) {\n  pi.on("tool_call", () => ({ block: true }));\n}\n'
    ctx.path.write_text(own, encoding="utf-8")
    assert ENGINE.parse(ctx) == []  # someone's own extension: nothing tackroom can import
    entry = {"event": "tool_call", "tools": [], "command": "echo unmarked"}
    ctx.path.write_text(f"const HOOKS = [\n  {json.dumps(entry)},\n];\n", encoding="utf-8")
    assert ENGINE.parse(ctx) == []  # an entry without tackroom's hook marker


def test_parse_of_a_damaged_module_names_the_line(tmp_path: Path) -> None:
    [output], ctx = render(pi(), tmp_path / "t.ts", [FIRE])
    ctx.path.write_text(str(output.text).replace('{"event"', '{event"'), encoding="utf-8")
    with pytest.raises(ProfileError, match=r"t\.ts:8: not a hook entry tackroom wrote"):
        ENGINE.parse(ctx)


def module(tmp_path: Path, hooks: Sequence[Hook], adapter: Adapter | None = None) -> Path:
    """The rendered module as an .mjs file node can load (jiti loads the same text as .ts)."""
    [output], _ = render(adapter or pi(), tmp_path / "tackroom.ts", hooks)
    path = tmp_path / "tackroom.mjs"
    path.write_text(str(output.text), encoding="utf-8")
    return path


def drive(path: Path, calls: list[tuple[str, dict[str, Any]]], cwd: Path) -> list[dict[str, Any]]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", DRIVER, "--", str(path), json.dumps(calls), str(cwd)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


@needs_node
def test_node_parses_the_module(tmp_path: Path) -> None:
    hooks = [FIRE, INJECT, REFUSE, Hook("odd", "turn-end", "command", command="echo '*/ `${x}` \u2028'")]
    assert NODE is not None
    subprocess.run([NODE, "--check", str(module(tmp_path, hooks))], check=True, timeout=60)


@needs_node
@needs_jq
def test_handlers_block_advise_and_run_commands(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    hooks = [FIRE, INJECT, REFUSE, Hook("see", "before-tool", "command", command=f"cat > {seen}")]
    shell = {"type": "tool_call", "toolName": "bash", "input": {"command": "ls"}}
    read = {"type": "tool_call", "toolName": "read", "input": {"path": "x"}}
    calls = [("session_start", {}), ("before_agent_start", {"prompt": "p"}), ("tool_call", read)]
    found = drive(module(tmp_path, hooks), [*calls, ("tool_call", shell)], tmp_path)
    advice = {"customType": "tackroom", "content": INJECT.text, "display": False}
    assert (tmp_path / "fired.txt").read_text() == "fired\n"  # ran in the session's cwd
    assert found == [
        {"event": "session_start", "value": None},
        {"event": "before_agent_start", "value": {"message": advice}},
        {"event": "tool_call", "value": None},  # read: no-shell does not match it
        {"event": "tool_call", "value": None},  # read: see matches every tool
        {"event": "tool_call", "value": {"block": True, "reason": "No shell here."}},
        {"event": "tool_call", "value": None},  # bash: see
    ]
    assert json.loads(seen.read_text()) == shell  # the event on stdin


@needs_node
def test_a_failing_hook_throws_so_a_tool_call_is_blocked(tmp_path: Path) -> None:
    hooks = [Hook("guard", "before-tool", "command", command="echo cannot check >&2; exit 1")]
    [found] = drive(module(tmp_path, hooks), [("tool_call", {"toolName": "bash"})], tmp_path)
    assert found == {"event": "tool_call", "threw": "cannot check"}


# pi 0.73.1 prints agent_end only after its agent_end handlers settle, in an event queue print
# mode does not drain: it stops printing a few microtasks after the prompt resolves (a handler
# awaiting 6 microtasks still kept the line, 7 lost it). So the driver, like pi's emit, awaits
# the agent_end handlers in turn and looks 4 microtasks later; then it awaits each
# session_shutdown handler, as pi does before it exits.
TURN_END = """
const mod = await import(process.argv[1]);
const handlers = [];
mod.default({ on: (event, handler) => handlers.push([event, handler]) });
const ctx = { cwd: process.argv[2] };
async function emit(event, payload) {
  for (const [name, handler] of handlers) if (name === event) await handler(payload, ctx);
}
let settled = false;
emit("agent_end", { type: "agent_end", messages: [] }).then(() => (settled = true));
for (let i = 0; i < 4; i++) await Promise.resolve();
const shutdown = [];
for (const [name, handler] of handlers.filter(([name]) => name === "session_shutdown")) {
  try {
    shutdown.push((await handler({ type: "session_shutdown" }, ctx)) ?? null);
  } catch (error) {
    shutdown.push({ threw: error.message });
  }
}
const registered = handlers.map(([name]) => name);
console.log(JSON.stringify({ settled, registered, shutdown }));
"""


def turn_end(path: Path, cwd: Path) -> dict[str, Any]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", TURN_END, "--", str(path), str(cwd)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@needs_node
def test_a_turn_end_handler_returns_at_once_and_session_end_waits_for_its_hooks(tmp_path: Path) -> None:
    hooks = [
        Hook("end-1", "turn-end", "command", command="sleep 0.3; echo end-1 >> fired.txt"),
        Hook("end-2", "turn-end", "command", command="echo end-2 >> fired.txt"),
        Hook("bye", "session-end", "command", command="echo bye >> fired.txt"),
    ]
    found = turn_end(module(tmp_path, hooks), tmp_path)
    # Settled before pi stops printing, so the stream keeps its agent_end line.
    assert found["settled"] is True
    # One agent_end handler however many hooks (each handler costs pi a microtask), and the
    # waiting handler before the session-end hooks.
    assert found["registered"] == ["session_shutdown", "agent_end", "session_shutdown"]
    assert found["shutdown"] == [None, None]
    # Every hook ran to its end before pi would exit, in order, turn-end before session-end.
    assert (tmp_path / "fired.txt").read_text() == "end-1\nend-2\nbye\n"


@needs_node
def test_a_failed_turn_end_hook_is_reported_at_session_end(tmp_path: Path) -> None:
    hooks = [
        Hook("broken", "turn-end", "command", command="echo cannot report >&2; exit 3"),
        Hook("after", "turn-end", "command", command="echo after >> fired.txt"),
    ]
    found = turn_end(module(tmp_path, hooks), tmp_path)
    assert found["settled"] is True
    assert found["shutdown"] == [{"threw": "cannot report"}]
    assert (tmp_path / "fired.txt").read_text() == "after\n"  # a failed hook stops no other


def test_turn_end_hooks_need_a_session_end_event_to_wait_for_them(tmp_path: Path) -> None:
    end = Hook("end", "turn-end", "command", command="echo end")
    [output], ctx = render(
        custom(events={"turn-end": "agent_end", "session-end": "bye"}), tmp_path / "t.ts", [end]
    )
    assert ctx.drops == []
    assert [e.get("background") for e in entries(str(output.text))] == [True]
    assert 'const SETTLE = "bye";' in str(output.text)
    outputs, ctx = render(custom(events={"turn-end": "agent_end"}), tmp_path / "t.ts", [end])
    assert outputs == []
    assert [d.reason for d in ctx.drops] == ["turn-end needs session-end here (the event that waits for it)"]


@pytest.mark.parametrize("name", ["pi", "omp"])
def test_a_hook_timeout_the_extension_cannot_keep_is_dropped_by_field(name: str, tmp_path: Path) -> None:
    ctx = context(resolve_builtins()[name], tmp_path / "tackroom.ts")
    [out] = ENGINE.render(ctx, [Hook("slow", "session-start", "command", command="true", timeout=5)])
    assert [(d.name, d.field) for d in ctx.drops] == [("slow", "timeout")]
    assert isinstance(out.text, str) and "tackroom:hook slow" in out.text
