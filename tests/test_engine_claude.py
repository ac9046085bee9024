"""Claude Code's settings engines: hooks the user wrote, permissions, env and native passthrough.

The fixture ``tests/fixtures/native/claude-code/home`` is a hand-written
``~/.claude`` in the shapes real settings files have; importing it must
account for every item (imported, passthrough or dropped by name), and
rendering the import back must give the same settings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile import jsonc
from tackroom.profile.model import Hook, Native, Permissions, Profile
from tackroom.profile.render import Imported, import_native, plan_render, write

FIXTURE = Path(__file__).parent / "fixtures" / "native" / "claude-code" / "home"
SETTINGS = Path(".claude/settings.json")


@pytest.fixture
def adapter() -> Adapter:
    return resolve_builtins()["claude-code"]


def imported(adapter: Adapter, root: Path) -> Imported:
    shutil.copytree(FIXTURE, root / ".claude")
    return import_native(adapter, root=root)


def settings_at(root: Path) -> dict[str, object]:
    data = jsonc.loads((root / SETTINGS).read_text())
    assert isinstance(data, dict)
    return data


def dropped(result: Imported) -> dict[str, str]:
    return {d.name: d.reason for d in result.dropped}


def test_hooks_the_user_wrote_import_with_moments_matchers_and_timeouts(
    adapter: Adapter, tmp_path: Path
) -> None:
    hooks = {h.name: h for h in imported(adapter, tmp_path).profile.hooks}
    assert hooks == {
        "pre-tool-use-1": Hook(
            "pre-tool-use-1",
            "before-tool",
            "command",
            command="./lint.sh",
            matcher=("edit_file", "write_file"),
            timeout=30.0,
        ),
        # "hooks" written as one object instead of a list
        "pre-tool-use-2": Hook(
            "pre-tool-use-2", "before-tool", "command", command="./guard.sh", matcher=("shell",)
        ),
        # a regex stays Claude's own, whole
        "pre-tool-use-3": Hook(
            "pre-tool-use-3", "before-tool", "command", command="echo nb", matcher=("claude-code:Notebook.*",)
        ),
        "post-tool-use-1": Hook(
            "post-tool-use-1", "after-tool", "command", command="echo gh", matcher=('mcp("github")',)
        ),
        "session-start-1": Hook("session-start-1", "session-start", "command", command="echo hi"),
        # matcher "startup": a new session only (not one resumed, cleared or compacted)
        "session-start-2": Hook(
            "session-start-2", "session-start", "command", command="echo started", source=("startup",)
        ),
        # matcher "*" is every tool / no filter
        "notification-1": Hook("notification-1", "notification", "command", command="notify-send claude"),
    }


def test_what_has_no_neutral_form_is_dropped_by_name_with_the_reason(
    adapter: Adapter, tmp_path: Path
) -> None:
    result = imported(adapter, tmp_path)
    drops = dropped(result)
    assert "'prompt' handler" in drops["stop-1"]
    assert "event TeammateIdle has no neutral moment" in drops["teammate-idle-1"]
    assert "secret" in drops["ANTHROPIC_API_KEY"]
    assert "a string" in drops["RETRIES"]
    assert len(result.dropped) == 4


def test_permissions_become_tool_references_and_unknown_ones_stay_claudes(
    adapter: Adapter, tmp_path: Path
) -> None:
    result = imported(adapter, tmp_path)
    assert result.profile.permissions == Permissions(
        allow=(
            'shell("git status:*")',
            'read_file("src/**")',
            'web_fetch("domain:docs.example.org")',
            'mcp("github/create_issue")',
        ),
        ask=('shell("git push:*")', 'edit_file("**/*.lock")'),
        deny=(
            'read_file(".env")',
            'shell("curl:*")',
            "claude-code:NotebookEdit",
            'mcp("danger")',
            "claude-code:Read(//etc/**)",
        ),
    )


def test_env_and_every_unread_key_and_file_are_kept(adapter: Adapter, tmp_path: Path) -> None:
    result = imported(adapter, tmp_path)
    assert result.profile.env == (("TACKROOM_MODE", "strict"),)
    [native] = result.profile.native
    kept = dict(native.settings)
    assert sorted(kept) == [
        "$schema",
        "enabledPlugins",
        "includeCoAuthoredBy",
        "model",
        "outputStyle",
        "permissions",
        "statusLine",
    ]
    assert kept["permissions"] == {"defaultMode": "acceptEdits", "additionalDirectories": ["../docs"]}
    assert kept["statusLine"] == {"type": "command", "command": "printf ok"}
    assert [rel for rel, _ in native.files] == ["output-styles/terse.md"]
    assert {p.name for p in result.passthrough} == {*kept, "output-styles/terse.md"}


def test_every_item_in_the_file_is_accounted_for(adapter: Adapter, tmp_path: Path) -> None:
    result = imported(adapter, tmp_path)
    raw = jsonc.loads((FIXTURE / "settings.json").read_text())
    handlers = sum(
        len(g["hooks"]) if isinstance(g["hooks"], list) else 1
        for groups in raw["hooks"].values()
        for g in groups
    )
    hook_drops = [d for d in result.dropped if d.kind == "hook"]
    assert len(result.profile.hooks) + len(hook_drops) == handlers
    rules = sum(len(raw["permissions"][v]) for v in ("allow", "ask", "deny"))
    p = result.profile.permissions
    assert len(p.allow) + len(p.ask) + len(p.deny) == rules
    env_drops = [d for d in result.dropped if d.kind == "env variable"]
    assert len(result.profile.env) + len(env_drops) == len(raw["env"])


def test_rendering_the_import_gives_the_same_settings_and_is_idempotent(
    adapter: Adapter, tmp_path: Path
) -> None:
    profile = imported(adapter, tmp_path / "src").profile
    out = tmp_path / "out"
    rendered = write(plan_render(profile, adapter, root=out))
    assert rendered.drops == ()
    data = settings_at(out)
    original = jsonc.loads((FIXTURE / "settings.json").read_text())
    for key in ("$schema", "model", "outputStyle", "includeCoAuthoredBy", "statusLine", "enabledPlugins"):
        assert data[key] == original[key]
    assert data["env"] == {"TACKROOM_MODE": "strict"}
    permissions = data["permissions"]
    assert isinstance(permissions, dict)
    assert permissions["deny"] == [
        "Read(./.env)",
        "Bash(curl:*)",
        "NotebookEdit",
        "mcp__danger",
        "Read(//etc/**)",
    ]
    assert permissions["ask"] == ["Bash(git push:*)", "Edit(./**/*.lock)"]
    assert permissions["defaultMode"] == "acceptEdits"
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    [lint, guard, notebook] = hooks["PreToolUse"]
    assert lint["matcher"] == "Edit|Write" and lint["hooks"][0]["timeout"] == 30
    assert guard["matcher"] == "Bash" and notebook["matcher"] == "Notebook.*"
    assert hooks["PostToolUse"][0]["matcher"] == "mcp__github__.*"
    assert "matcher" not in hooks["SessionStart"][0]
    assert (out / ".claude/output-styles/terse.md").read_bytes() == (
        FIXTURE / "output-styles/terse.md"
    ).read_bytes()
    assert import_native(adapter, root=out).profile == profile
    before = (out / SETTINGS).read_bytes()
    write(plan_render(profile, adapter, root=out))
    assert (out / SETTINGS).read_bytes() == before
    assert import_native(adapter, root=out).profile == profile


def test_a_rerender_replaces_passthrough_values_tackroom_wrote(adapter: Adapter, tmp_path: Path) -> None:
    first = Profile(native=(Native("claude-code", (("outputStyle", "Terse"),)),))
    write(plan_render(first, adapter, root=tmp_path))
    second = Profile(native=(Native("claude-code", (("outputStyle", "Verbose"),)),))
    write(plan_render(second, adapter, root=tmp_path))
    assert settings_at(tmp_path)["outputStyle"] == "Verbose"


def test_a_value_the_user_set_is_not_overwritten(adapter: Adapter, tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / SETTINGS).write_text(json.dumps({"outputStyle": "Mine"}))
    profile = Profile(native=(Native("claude-code", (("outputStyle", "Terse"),)),))
    with pytest.raises(Exception, match="outputStyle"):
        write(plan_render(profile, adapter, root=tmp_path))
    assert settings_at(tmp_path) == {"outputStyle": "Mine"}


def test_permissions_merge_beside_the_users_rules_without_duplicates(
    adapter: Adapter, tmp_path: Path
) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / SETTINGS).write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}}))
    profile = Profile(permissions=Permissions(allow=("shell",), deny=('shell("rm:*")',)))
    write(plan_render(profile, adapter, root=tmp_path))
    write(plan_render(profile, adapter, root=tmp_path))
    assert settings_at(tmp_path)["permissions"] == {"allow": ["Bash(ls:*)", "Bash"], "deny": ["Bash(rm:*)"]}


def test_rules_for_another_harness_or_unspellable_are_dropped_by_name(
    adapter: Adapter, tmp_path: Path
) -> None:
    profile = Profile(
        permissions=Permissions(
            allow=('search("x")',), deny=("gemini:run_shell_command", 'read_file("/etc/x")')
        )
    )
    rendered = plan_render(profile, adapter, root=tmp_path)
    assert {d.name for d in rendered.drops} == {
        'allow search("x")',
        "deny gemini:run_shell_command",
        'deny read_file("/etc/x")',
    }
    assert rendered.outputs == ()


def test_env_with_a_reference_is_dropped_since_settings_env_is_literal(
    adapter: Adapter, tmp_path: Path
) -> None:
    profile = Profile(env=(("A", "1"), ("TOKEN", "${TOKEN}")))
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert [d.name for d in rendered.drops] == ["TOKEN"]
    assert settings_at(tmp_path)["env"] == {"A": "1"}


def test_hostile_hook_shapes_are_dropped_never_a_traceback(adapter: Adapter, tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    hooks = {
        "PreToolUse": [7, {"matcher": 3, "hooks": [{"command": "x"}]}, {"hooks": [{"type": "command"}]}],
        "Stop": {"hooks": [{"type": "command", "command": "ok", "timeout": "soon"}]},
        "SessionEnd": "not a list",
    }
    (tmp_path / SETTINGS).write_text(json.dumps({"hooks": hooks}))
    result = import_native(adapter, root=tmp_path)
    assert [h.name for h in result.profile.hooks] == ["stop-1"]
    assert result.profile.hooks[0].timeout is None
    names = sorted((d.name, d.field) for d in result.dropped)
    assert names == [
        ("pre-tool-use-1", None),
        ("pre-tool-use-2", None),
        ("pre-tool-use-3", None),
        ("session-end-1", None),
        ("stop-1", "timeout"),
    ]


def test_a_hooks_value_that_is_not_an_object_is_dropped(adapter: Adapter, tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / SETTINGS).write_text(json.dumps({"hooks": [1], "permissions": "all", "env": 3}))
    result = import_native(adapter, root=tmp_path)
    assert {(d.kind, d.name) for d in result.dropped} == {
        ("hook", "hooks"),
        ("permission rule", "permissions"),
        ("env variable", "env"),
    }


def test_a_user_hook_named_like_a_tackroom_one_gets_a_unique_name(adapter: Adapter, tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    ours = {"type": "command", "command": "echo a # tackroom:hook stop-1"}
    theirs = {"type": "command", "command": "echo b"}
    (tmp_path / SETTINGS).write_text(json.dumps({"hooks": {"Stop": [{"hooks": [theirs, ours]}]}}))
    hooks = import_native(adapter, root=tmp_path).profile.hooks
    assert [(h.name, h.command) for h in hooks] == [("stop-1", "echo a"), ("stop-1-2", "echo b")]


MORE = [
    "notification",
    "pre-compact",
    "subagent-start",
    "subagent-stop",
    "permission-request",
    "after-tool-failure",
]


@settings(max_examples=30, deadline=None)
@given(
    moment=st.sampled_from(["before-tool", "after-tool", "after-tool-failure", "permission-request"]),
    matcher=st.lists(
        st.sampled_from(
            ["shell", "edit_file", "read_file", 'mcp("github")', 'mcp("fs/read")', "claude-code:NotebookEdit"]
        ),
        max_size=3,
        unique=True,
    ).map(tuple),
    timeout=st.none() | st.integers(1, 600).map(float),
)
def test_tool_hooks_round_trip(moment: str, matcher: tuple[str, ...], timeout: float | None) -> None:
    import tempfile

    adapter = resolve_builtins()["claude-code"]
    profile = Profile(
        hooks=(Hook("h", moment, "command", command="./x.sh", matcher=matcher, timeout=timeout),)
    )
    with tempfile.TemporaryDirectory() as tmp:
        rendered = write(plan_render(profile, adapter, root=Path(tmp)))
        assert rendered.drops == ()
        assert import_native(adapter, root=Path(tmp)).profile.hooks == profile.hooks


@pytest.mark.parametrize("moment", MORE)
def test_the_more_moments_claude_has_render_to_its_events(
    adapter: Adapter, moment: str, tmp_path: Path
) -> None:
    profile = Profile(hooks=(Hook("h", moment, "command", command="true"),))
    write(plan_render(profile, adapter, root=tmp_path))
    hooks = settings_at(tmp_path)["hooks"]
    assert isinstance(hooks, dict)
    [event] = hooks
    assert event == adapter.spec.capabilities.hooks.events[moment]  # type: ignore[union-attr,index]
    assert import_native(adapter, root=tmp_path).profile.hooks == profile.hooks


def test_qwen_permissions_use_its_names_and_its_command_globs(tmp_path: Path) -> None:
    qwen = resolve_builtins()["qwen"]
    profile = Profile(
        permissions=Permissions(
            allow=("read_file", 'shell("git status:*")'),
            deny=('shell("rm -rf /tmp/x")', 'read_file("src/**")', 'mcp("gh/x")'),
        )
    )
    rendered = write(plan_render(profile, qwen, root=tmp_path))
    assert sorted(d.name for d in rendered.drops) == ['deny mcp("gh/x")', 'deny read_file("src/**")']
    assert all("not enforced here" in d.reason for d in rendered.drops)
    data = jsonc.loads((tmp_path / ".qwen/settings.json").read_text())
    assert data["permissions"] == {
        "allow": ["read_file", "run_shell_command(git status *)"],
        "deny": ["run_shell_command(rm -rf /tmp/x)"],
    }
    back = import_native(qwen, root=tmp_path).profile.permissions
    assert back == Permissions(allow=("read_file", 'shell("git status:*")'), deny=('shell("rm -rf /tmp/x")',))


def test_qwen_rules_a_user_wrote_import_without_narrowing_a_category(tmp_path: Path) -> None:
    qwen = resolve_builtins()["qwen"]
    (tmp_path / ".qwen").mkdir()
    rules = {
        "deny": ["Bash(curl *)", "Read", "Edit(src/**)", "ShellTool"],
        "allow": ["web_fetch", "Bash(a * b)"],
    }
    (tmp_path / ".qwen/settings.json").write_text(json.dumps({"permissions": rules}))
    assert import_native(qwen, root=tmp_path).profile.permissions == Permissions(
        allow=("web_fetch", 'shell("a * b")'),
        deny=('shell("curl:*")', "qwen:Read", "qwen:Edit(src/**)", "shell"),
    )


def test_codex_hooks_json_imports_the_hooks_a_user_wrote(tmp_path: Path) -> None:
    codex = resolve_builtins()["codex"]
    (tmp_path / ".codex").mkdir()
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}
        ],
        "PreCompact": [{"hooks": [{"type": "command", "command": "echo c"}]}],
    }
    (tmp_path / ".codex/hooks.json").write_text(json.dumps({"hooks": hooks}))
    result = import_native(codex, root=tmp_path)
    # codex's hooks see the shell tool as Bash (its tool_names), so the matcher is neutral shell.
    assert result.profile.hooks == (
        Hook(
            "pre-tool-use-1", "before-tool", "command", command="./guard.sh", matcher=("shell",), timeout=5.0
        ),
    )
    assert [(d.name, "no neutral moment" in d.reason) for d in result.dropped] == [("pre-compact-1", True)]


@pytest.mark.parametrize(
    ("matcher", "source"),
    [("startup", ("startup",)), ("resume|clear", ("resume", "clear")), ("", ()), ("*", ())],
)
def test_a_session_start_matcher_is_the_starts_the_hook_is_for(
    adapter: Adapter, tmp_path: Path, matcher: str, source: tuple[str, ...]
) -> None:
    (tmp_path / ".claude").mkdir()
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": "./prime.sh"}]}
    (tmp_path / SETTINGS).write_text(json.dumps({"hooks": {"SessionStart": [group]}}))
    result = import_native(adapter, root=tmp_path)
    assert result.dropped == ()
    assert result.profile.hooks == (
        Hook("session-start-1", "session-start", "command", command="./prime.sh", source=source),
    )
    again = tmp_path / "again"
    write(plan_render(result.profile, adapter, root=again))
    assert import_native(adapter, root=again).profile == result.profile


def test_a_session_start_matcher_naming_no_start_is_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    group = {"matcher": "startup|reboot", "hooks": [{"type": "command", "command": "x"}]}
    (tmp_path / SETTINGS).write_text(json.dumps({"hooks": {"SessionStart": [group]}}))
    result = import_native(adapter, root=tmp_path)
    assert not result.profile.hooks
    assert "'startup|reboot'" in dropped(result)["session-start-1"]


@pytest.mark.parametrize("name", ["gemini", "copilot", "opencode", "codex"])
def test_a_hook_for_some_starts_is_dropped_where_starts_cannot_be_told_apart(
    name: str, tmp_path: Path
) -> None:
    hook = Hook("prime", "session-start", "command", command="./prime.sh", source=("compact",))
    rendered = plan_render(Profile(hooks=(hook,)), resolve_builtins()[name], root=tmp_path)
    assert not rendered.outputs
    assert [(d.name, "compact" in d.reason) for d in rendered.drops] == [("prime", True)]


@pytest.mark.parametrize(
    ("event", "moment"),
    [
        ("PreCompact", "pre-compact"),
        ("SubagentStop", "subagent-stop"),
        ("SubagentStart", "subagent-start"),
        ("PostToolUseFailure", "after-tool-failure"),
        ("Notification", "notification"),
        ("PermissionRequest", "permission-request"),
    ],
)
def test_qwen_imports_the_events_its_hook_list_has(event: str, moment: str, tmp_path: Path) -> None:
    adapter = resolve_builtins()["qwen"]
    (tmp_path / ".qwen").mkdir()
    group = {"hooks": [{"type": "command", "command": "./log.sh", "timeout": 10}]}
    (tmp_path / ".qwen" / "settings.json").write_text(json.dumps({"hooks": {event: [group]}}))
    result = import_native(adapter, root=tmp_path)
    assert result.dropped == ()
    [hook] = result.profile.hooks
    assert (hook.moment, hook.command, hook.timeout) == (moment, "./log.sh", 10.0)
    again = tmp_path / "again"
    write(plan_render(result.profile, adapter, root=again))
    assert import_native(adapter, root=again).profile == result.profile


def test_hooks_written_as_objects_without_a_hooks_list_are_each_named(
    adapter: Adapter, tmp_path: Path
) -> None:
    """Shapes real settings files have that Claude Code refuses: never imported, never lost unsaid."""
    (tmp_path / ".claude").mkdir()
    hooks = {
        # an older tool's shape: one object of its own per event, under names Claude never had
        "preEditHook": {"command": "npx some-tool pre-edit", "alwaysRun": False},
        "sessionEndHook": {"command": "npx some-tool summary", "generateSummary": True},
        # a handler where a group belongs, in a list and alone
        "SessionStart": [{"type": "command", "command": "bash .claude/hooks/prime.sh"}],
        "Stop": {"type": "command", "command": "./done.sh"},
        # a group with nothing in it, and a well-formed one beside
        "PostToolUse": [
            {"matcher": "Write"},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]},
        ],
    }
    (tmp_path / SETTINGS).write_text(json.dumps({"hooks": hooks}))
    result = import_native(adapter, root=tmp_path)
    assert [(h.name, h.command) for h in result.profile.hooks] == [("post-tool-use-2", "fmt")]
    why = dropped(result)
    assert set(why) == {
        "pre-edit-hook-1",
        "session-end-hook-1",
        "session-start-1",
        "stop-1",
        "post-tool-use-1",
    }
    assert all("no 'hooks' list" in reason for reason in why.values()), why


@pytest.mark.parametrize(
    ("matcher", "source"),
    [
        ("^(?:startup|resume|clear|compact)$", ()),  # every start codex has: compact never comes here
        ("^(?:startup|resume|clear)$", ()),
        ("^(?:startup)$", ("startup",)),
        ("^resume$", ("resume",)),
        ("startup|compact", ("startup",)),
    ],
)
def test_codex_session_start_matchers_as_its_docs_write_them(
    tmp_path: Path, matcher: str, source: tuple[str, ...]
) -> None:
    """codex's docs anchor a SessionStart matcher (``^(?:startup|resume)$``): its words are the starts;
    a neutral start codex never reports selects nothing there, so it does not stop the import."""
    codex = resolve_builtins()["codex"]
    (tmp_path / ".codex").mkdir()
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": "./prime.sh"}]}
    (tmp_path / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [group]}}))
    result = import_native(codex, root=tmp_path, scope="project")
    assert [d for d in result.dropped if d.kind == "hook"] == []
    [hook] = result.profile.hooks
    assert (hook.moment, hook.source) == ("session-start", source)


def test_an_anchored_matcher_naming_a_start_no_harness_has_is_still_dropped(tmp_path: Path) -> None:
    codex = resolve_builtins()["codex"]
    (tmp_path / ".codex").mkdir()
    group = {"matcher": "^(?:startup|reboot)$", "hooks": [{"type": "command", "command": "x"}]}
    (tmp_path / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [group]}}))
    result = import_native(codex, root=tmp_path, scope="project")
    assert not result.profile.hooks and "reboot" in dropped(result)["session-start-1"]
