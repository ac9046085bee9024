"""Letta Code's ``letta-settings`` engine: hooks in Claude Code's shape, timeouts in milliseconds.

Rendered into the run's home (``~/.letta/settings.json``) or a project (``.letta/settings.json``),
read back exactly; native files as people and letta write them account for every item.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import assert_adapter_conformance, assert_adapter_loads_hooks
from tackroom.families import get_family
from tackroom.profile.model import Hook, Profile
from tackroom.profile.render import Imported, import_native, plan_render, write

SETTINGS = Path(".letta/settings.json")
REPO = Path(__file__).parent / "fixtures" / "repos" / "letta-project"


@pytest.fixture(scope="module")
def adapter() -> Adapter:
    return resolve_builtins()["letta"]


def settings_at(root: Path) -> dict[str, Any]:
    data = json.loads((root / SETTINGS).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def native(root: Path, hooks: Any, **more: Any) -> None:
    (root / ".letta").mkdir(parents=True, exist_ok=True)
    (root / SETTINGS).write_text(json.dumps({**more, "hooks": hooks}), encoding="utf-8")


def dropped(result: Imported) -> dict[tuple[str, str | None], str]:
    return {(d.name, d.field): d.reason for d in result.dropped}


def test_the_family_serves_the_engine_and_the_adapter_conforms(adapter: Adapter) -> None:
    assert [e.name for e in get_family("letta").engines()] == ["letta-settings"]
    assert adapter.spec.capabilities.hooks is not None
    assert adapter.spec.capabilities.hooks.render == "letta-settings"
    assert_adapter_conformance(adapter)
    assert_adapter_loads_hooks(adapter)


def test_hooks_render_as_letta_reads_them_and_import_back_exactly(adapter: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("guard", "before-tool", "refuse", text="Never force-push.", matcher=("shell",)),
            Hook("context", "after-tool", "inject", text="Run the tests next."),
            Hook("log", "after-tool-failure", "command", command="./log.sh", timeout=1.5),
        )
    )
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert rendered.drops == ()
    assert settings_at(tmp_path) == {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "printf '%s\\n' 'Never force-push.' >&2; exit 2 # tackroom:hook guard",
                        }
                    ],
                }
            ],
            "PostToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "jq -nc --arg m 'Run the tests next.' "
                            """'{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":$m}}'"""
                            " # tackroom:hook context",
                        }
                    ],
                }
            ],
            # letta reads a handler's timeout in milliseconds (hook.timeout ?? 60000).
            "PostToolUseFailure": [
                {
                    "matcher": "*",
                    "hooks": [
                        {"type": "command", "command": "./log.sh # tackroom:hook log", "timeout": 1500}
                    ],
                }
            ],
        }
    }
    assert import_native(adapter, root=tmp_path).profile.hooks == tuple(
        sorted(profile.hooks, key=lambda h: h.name)
    )


@settings(max_examples=40, deadline=None)
@given(
    moment=st.sampled_from(["before-tool", "after-tool", "after-tool-failure"]),
    matcher=st.lists(
        st.sampled_from(["shell", "read_file", "edit_file", "letta:TaskOutput"]), max_size=3, unique=True
    ).map(tuple),
    timeout=st.none() | st.integers(1, 600).map(float) | st.sampled_from([0.25, 1.001, 2.5, 0.001]),
)
def test_tool_hooks_round_trip(
    adapter: Adapter, moment: str, matcher: tuple[str, ...], timeout: float | None
) -> None:
    profile = Profile(
        hooks=(Hook("h", moment, "command", command="./x.sh", matcher=matcher, timeout=timeout),)
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(profile, adapter, root=root))
        assert rendered.drops == ()
        assert import_native(adapter, root=root).profile.hooks == profile.hooks
        [group] = next(iter(settings_at(root)["hooks"].values()))
        if timeout is not None:
            assert group["hooks"][0]["timeout"] == round(timeout * 1000)


def test_a_timeout_letta_cannot_say_is_dropped_by_name_and_the_hook_kept(
    adapter: Adapter, tmp_path: Path
) -> None:
    profile = Profile(hooks=(Hook("quick", "after-tool", "command", command="true", timeout=0.0004),))
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert [(d.name, d.field) for d in rendered.drops] == [("quick", "timeout")]
    [group] = settings_at(tmp_path)["hooks"]["PostToolUse"]
    assert "timeout" not in group["hooks"][0]


@pytest.mark.parametrize("moment", ["session-start", "prompt-submit", "turn-end", "session-end"])
def test_moments_letta_fires_only_in_its_ui_are_dropped_by_name(
    adapter: Adapter, moment: str, tmp_path: Path
) -> None:
    profile = Profile(hooks=(Hook("h", moment, "command", command="true"),))
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert [(d.kind, d.name) for d in rendered.drops] == [("hook", "h")]
    assert not (tmp_path / SETTINGS).exists()


def test_before_tool_cannot_inject_nor_after_tool_refuse(adapter: Adapter, tmp_path: Path) -> None:
    """letta reads a PreToolUse hook's output only when it blocks, and a PostToolUse block is too late."""
    profile = Profile(
        hooks=(
            Hook("early", "before-tool", "inject", text="x"),
            Hook("late", "after-tool", "refuse", text="y"),
        )
    )
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert sorted(d.name for d in rendered.drops) == ["early", "late"]


def test_render_merges_into_the_settings_letta_writes_and_takes_back_only_its_own(
    adapter: Adapter, tmp_path: Path
) -> None:
    theirs = {"type": "command", "command": "./mine.sh"}
    native(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}]}, lastAgent="agent-local-1")
    profile = Profile(
        hooks=(Hook("fmt", "after-tool", "command", command="./fmt.sh", matcher=("edit_file",)),)
    )
    write(plan_render(profile, adapter, root=tmp_path))
    data = settings_at(tmp_path)
    assert data["lastAgent"] == "agent-local-1"
    assert data["hooks"]["PreToolUse"] == [{"matcher": "Bash", "hooks": [theirs]}]
    assert data["hooks"]["PostToolUse"][0]["matcher"] == "Edit"
    before = (tmp_path / SETTINGS).read_bytes()
    write(plan_render(profile, adapter, root=tmp_path))
    assert (tmp_path / SETTINGS).read_bytes() == before  # a second render changes nothing
    write(plan_render(Profile(), adapter, root=tmp_path))
    data = settings_at(tmp_path)
    assert data["lastAgent"] == "agent-local-1"
    assert data["hooks"] == {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}]}


def test_import_reads_milliseconds_and_names_what_it_cannot_say(adapter: Adapter, tmp_path: Path) -> None:
    native(
        tmp_path,
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./g.sh", "timeout": 2500}]}
            ],
            "PostToolUse": [{"hooks": {"type": "command", "command": "./p.sh", "timeout": "soon"}}],
            "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}],
            "PostToolUseFailure": [
                {"matcher": "Edit", "hooks": [{"type": "prompt", "prompt": "Why? $ARGUMENTS"}]}
            ],
        },
    )
    result = import_native(adapter, root=tmp_path)
    assert {h.name: (h.moment, h.command, h.matcher, h.timeout) for h in result.profile.hooks} == {
        "pre-tool-use-1": ("before-tool", "./g.sh", ("shell",), 2.5),
        "post-tool-use-1": ("after-tool", "./p.sh", (), None),
    }
    reasons = dropped(result)
    assert set(reasons) == {
        ("post-tool-use-1", "timeout"),
        ("stop-1", None),
        ("post-tool-use-failure-1", None),
    }
    assert "Stop" in reasons[("stop-1", None)]
    assert "prompt" in reasons[("post-tool-use-failure-1", None)]


def test_hooks_a_file_disables_are_dropped_by_name_never_imported(adapter: Adapter, tmp_path: Path) -> None:
    """Imported, a disabled file's hooks would run wherever the profile is rendered."""
    group = [{"matcher": "*", "hooks": [{"type": "command", "command": "./p.sh"}]}]
    native(tmp_path, {"disabled": True, "PostToolUse": group})
    result = import_native(adapter, root=tmp_path)
    assert result.profile.hooks == ()
    assert set(dropped(result)) == {("hooks.disabled", None), ("post-tool-use-1", None)}
    assert "runs none of them" in dropped(result)[("post-tool-use-1", None)]


def test_a_disabled_switch_set_false_is_named_and_its_hooks_imported(
    adapter: Adapter, tmp_path: Path
) -> None:
    group = [{"matcher": "*", "hooks": [{"type": "command", "command": "./p.sh"}]}]
    native(tmp_path, {"disabled": False, "PostToolUse": group})
    result = import_native(adapter, root=tmp_path)
    assert [h.name for h in result.profile.hooks] == ["post-tool-use-1"]
    assert set(dropped(result)) == {("hooks.disabled", None)}


def test_a_project_as_letta_leaves_it_imports_its_hooks_and_names_the_local_file(
    adapter: Adapter, tmp_path: Path
) -> None:
    """The fixture: a project's .letta as people write it, with the settings.local.json letta writes."""
    shutil.copytree(REPO, tmp_path / "repo")
    root = tmp_path / "repo"
    result = import_native(adapter, root=root, scope="project")
    hooks = {h.name: h for h in result.profile.hooks}
    assert hooks["pre-tool-use-1"] == Hook(
        "pre-tool-use-1",
        "before-tool",
        "command",
        command="./scripts/guard.sh",
        matcher=("shell",),
        timeout=5.0,
    )
    assert hooks["post-tool-use-1"].matcher == ("edit_file", "write_file")
    assert hooks["post-tool-use-failure-1"].moment == "after-tool-failure"
    names = {d.name for d in result.dropped}
    assert names == {".letta/settings.local.json"}
    # Rendered back into an empty project, the same hooks come back.
    out = tmp_path / "out"
    write(plan_render(result.profile, adapter, root=out, scope="project"))
    assert import_native(adapter, root=out, scope="project").profile.hooks == result.profile.hooks
