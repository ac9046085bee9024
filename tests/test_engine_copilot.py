"""The copilot-hooks engine, against the built-in copilot adapter."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.errors import ProfileError
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context
from tackroom.profile.model import Hook, Profile
from tackroom.profile.render import import_profile, plan_render, write

HOOKS = Path(".copilot/hooks")
REFUSE = Hook("no-shell", "before-tool", "refuse", text="shell is off", matcher=("shell",))
ADVISE = Hook("advise", "prompt-submit", "inject", text="be brief")
FIRE = Hook("mark", "session-start", "command", command="echo started >> log.txt")


@pytest.fixture
def adapter() -> Adapter:
    return resolve_builtins()["copilot"]


def context(adapter: Adapter, path: Path) -> Context:
    capability = adapter.spec.capabilities.hooks
    assert capability is not None
    return Context(adapter, "hooks", capability, path)


def test_hooks_render_in_copilots_flat_shape(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, tmp_path / "tackroom.json")
    [out] = engine("copilot-hooks").render(ctx, [REFUSE, ADVISE, FIRE])
    assert not out.merge and out.format == "json" and not ctx.drops
    assert out.data == {
        "version": 1,
        "hooks": {
            "preToolUse": [
                {
                    "type": "command",
                    "bash": "jq -nc --arg m 'shell is off' "
                    """'{"permissionDecision":"deny","permissionDecisionReason":$m}'"""
                    " # tackroom:hook no-shell",
                    "matcher": "^(?:bash)$",
                }
            ],
            "userPromptSubmitted": [
                {
                    "type": "command",
                    "bash": """jq -nc --arg m 'be brief' '{"additionalContext":$m}' # tackroom:hook advise""",
                }
            ],
            "sessionStart": [
                {"type": "command", "bash": "echo started >> log.txt # tackroom:hook mark"},
            ],
        },
    }


def test_a_matcher_over_several_tools_is_one_anchored_alternation(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, tmp_path / "tackroom.json")
    edits = Hook("edits", "after-tool", "command", command="fmt", matcher=("edit_file", "write_file"))
    [out] = engine("copilot-hooks").render(ctx, [edits])
    assert out.data is not None
    assert out.data["hooks"]["postToolUse"][0]["matcher"] == "^(?:edit|create)$"


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not on PATH")
def test_the_refuse_command_prints_copilots_deny_decision(adapter: Adapter, tmp_path: Path) -> None:
    reason = 'no: it\'s $HOME `x` "quoted"'
    ctx = context(adapter, tmp_path / "tackroom.json")
    [out] = engine("copilot-hooks").render(ctx, [Hook("r", "before-tool", "refuse", text=reason)])
    assert out.data is not None
    bash = out.data["hooks"]["preToolUse"][0]["bash"]
    printed = subprocess.run(["bash", "-c", bash], capture_output=True, text=True, timeout=10, check=True)
    assert json.loads(printed.stdout) == {"permissionDecision": "deny", "permissionDecisionReason": reason}


def test_render_parses_back_and_leaves_the_users_hook_files_alone(adapter: Adapter, tmp_path: Path) -> None:
    users = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./audit.sh"}]}}
    (tmp_path / HOOKS).mkdir(parents=True)
    (tmp_path / HOOKS / "audit.json").write_text(json.dumps(users), encoding="utf-8")
    write(plan_render(Profile(hooks=(REFUSE, ADVISE, FIRE)), adapter, root=tmp_path))
    assert json.loads((tmp_path / HOOKS / "audit.json").read_text(encoding="utf-8")) == users
    assert import_profile(adapter, root=tmp_path).hooks == (ADVISE, FIRE, REFUSE)


def test_a_hook_file_of_the_users_own_at_tackrooms_path_is_never_overwritten(
    adapter: Adapter, tmp_path: Path
) -> None:
    (tmp_path / HOOKS).mkdir(parents=True)
    (tmp_path / HOOKS / "tackroom.json").write_text('{"version": 1, "hooks": {}}', encoding="utf-8")
    with pytest.raises(ProfileError, match="tackroom does not own it"):
        write(plan_render(Profile(hooks=(FIRE,)), adapter, root=tmp_path))


def test_parse_reads_only_the_entries_tackroom_wrote(adapter: Adapter, tmp_path: Path) -> None:
    path = tmp_path / "tackroom.json"
    entries = {
        "preToolUse": [
            {"type": "command", "bash": "./check.sh", "matcher": "bash"},
            {"type": "command", "bash": "./lint.sh # tackroom:hook lint", "matcher": "^(?:view)$"},
            {"type": "prompt", "prompt": "/review"},
            "junk",
        ],
        "sessionEnd": [{"type": "command", "bash": "./bye.sh # tackroom:hook bye", "timeoutSec": 5}],
        "errorOccurred": [{"type": "command", "bash": "./err.sh # tackroom:hook err"}],
        "postToolUse": "junk",
    }
    path.write_text(json.dumps({"version": 1, "hooks": entries}), encoding="utf-8")
    ctx = context(adapter, path)
    assert engine("copilot-hooks").parse(ctx) == [
        Hook("bye", "session-end", "command", command="./bye.sh", timeout=5.0),  # timeoutSec
        Hook("lint", "before-tool", "command", command="./lint.sh", matcher=("read_file",)),
    ]
    # the rest is named, not skipped
    assert sorted(d.name for d in ctx.drops) == [
        "errorOccurred-1",
        "postToolUse-1",
        "preToolUse-1",
        "preToolUse-3",
        "preToolUse-4",
    ]


def test_hooks_copilot_cannot_express_are_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, tmp_path / "tackroom.json")
    fetch = Hook("fetch", "before-tool", "refuse", text="no", matcher=("web_fetch", "shell"))
    [out] = engine("copilot-hooks").render(ctx, [fetch, FIRE])
    assert out.data is not None and list(out.data["hooks"]) == ["sessionStart"]
    assert [(d.kind, d.name, d.reason) for d in ctx.drops] == [("hook", "fetch", "no tool web_fetch here")]


def test_nothing_to_express_writes_no_file(adapter: Adapter, tmp_path: Path) -> None:
    assert engine("copilot-hooks").render(context(adapter, tmp_path / "t.json"), []) == []
    assert engine("copilot-hooks").parse(context(adapter, tmp_path / "absent.json")) == []


def test_hook_timeouts_render_as_whole_seconds_or_are_dropped(adapter: Adapter, tmp_path: Path) -> None:
    ctx = context(adapter, tmp_path / "hooks.json")
    hooks = [
        Hook("whole", "session-end", "command", command="./a.sh", timeout=15),
        Hook("part", "session-end", "command", command="./b.sh", timeout=1.5),
    ]
    [out] = engine("copilot-hooks").render(ctx, hooks)
    assert out.data is not None
    assert [h.get("timeoutSec") for h in out.data["hooks"]["sessionEnd"]] == [15, None]
    assert [(d.name, d.field) for d in ctx.drops] == [("part", "timeout")]
    out.path.write_text(json.dumps(out.data), encoding="utf-8")
    assert [h.timeout for h in engine("copilot-hooks").parse(ctx)] == [None, 15.0]
