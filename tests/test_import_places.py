"""Places only ``profile import`` looks at (``[[adapter.X.reads]]``): read with an engine, or named.

Real repositories keep configuration where tackroom's capabilities do not write: Cursor's legacy
``.cursorrules`` (read as a rule), the Kiro IDE's
``.kiro/hooks/*.kiro.hook`` and VS Code's ``.github/prompts/*.prompt.md`` (no reader, or the
harness does not run them: each file is dropped by name with why). None is ever lost unsaid.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.adapters.checks import check_adapter
from tackroom.adapters.resolve import resolve_builtins
from tackroom.adapters.schema import Read
from tackroom.profile.engines import engines
from tackroom.profile.model import Rule
from tackroom.profile.render import Imported, import_native, plan_render, write


def put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def imported(harness: str, root: Path, scope: str = "project") -> Imported:
    return import_native(resolve_builtins()[harness], root=root, scope=scope)  # type: ignore[arg-type]


def named(found: Imported) -> dict[str, tuple[str, str]]:
    return {d.name: (d.kind, d.reason) for d in found.dropped}


def test_cursorrules_is_an_always_on_rule_beside_the_hooks_json(tmp_path: Path) -> None:
    put(tmp_path / ".cursorrules", "Prefer small pull requests.\n")
    hooks = {"version": 1, "hooks": {"beforeShellExecution": [{"command": "./guard.sh"}]}}
    put(tmp_path / ".cursor" / "hooks.json", json.dumps(hooks))
    found = imported("cursor", tmp_path)
    assert found.profile.rules == (Rule("cursorrules", "Prefer small pull requests.\n"),)
    assert [(h.name, h.moment, h.matcher) for h in found.profile.hooks] == [
        ("before-shell-execution-1", "before-tool", ("shell",))
    ]
    assert named(found) == {}


def test_a_users_cursor_hooks_are_read_too(tmp_path: Path) -> None:
    hooks = {"version": 1, "hooks": {"stop": [{"command": "notify-send done"}]}}
    put(tmp_path / ".cursor" / "hooks.json", json.dumps(hooks))
    found = imported("cursor", tmp_path, scope="home")
    assert [(h.name, h.moment, h.command) for h in found.profile.hooks] == [
        ("stop-1", "turn-end", "notify-send done")
    ]


def test_kiro_ide_hooks_are_named_each_and_other_files_are_not_hooks(tmp_path: Path) -> None:
    hook = {
        "name": "Lint",
        "when": {"type": "fileEdited", "patterns": ["*.ts"]},
        "then": {"type": "askAgent"},
    }
    put(tmp_path / ".kiro" / "hooks" / "lint.kiro.hook", json.dumps(hook))
    put(tmp_path / ".kiro" / "hooks" / "team" / "docs.kiro.hook", json.dumps(hook))
    put(tmp_path / ".kiro" / "hooks" / "notes.md", "what the hooks do\n")
    found = named(imported("kiro", tmp_path))
    assert set(found) == {".kiro/hooks/lint.kiro.hook", ".kiro/hooks/team/docs.kiro.hook"}
    assert all(kind == "hook" and "kiro-cli" in why for kind, why in found.values())


def test_vs_code_prompt_files_are_named_and_strict_refuses_them(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    put(repo / ".github" / "prompts" / "plan.prompt.md", "---\nmode: agent\n---\nPlan ${input:task}.\n")
    put(repo / ".github" / "copilot-instructions.md", "Be brief.\n")
    found = imported("copilot", repo)
    assert [r.name for r in found.profile.rules] == ["copilot-instructions"]
    assert named(found) == {
        ".github/prompts/plan.prompt.md": (
            "command",
            f"{repo / '.github/prompts/plan.prompt.md'}: a VS Code prompt file: Copilot CLI reads no "
            "prompt files, so it is not imported",
        )
    }
    args = ("profile", "import", "copilot", "--from", str(repo), "--scope", "project", "--into")
    done = run_cli(*args, str(tmp_path / "into"), "--strict", cwd=tmp_path)
    assert done.returncode == 1 and ".github/prompts/plan.prompt.md" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("place", "said"),
    [
        (Read(kind="hooks", project="{{workdir}}/x.json"), "set exactly one of render"),
        (Read(kind="hooks", project="x", render="concat", reason="no"), "set exactly one of render"),
        (Read(kind="hooks", reason="no"), "set path, project or both"),
        (Read(kind="hooks", project="x", render="concat"), "no hooks capability"),
        (Read(kind="rules", project="x", render="dir"), "renderer 'dir' reads"),
        (Read(kind="rules", project="x", render="concat", ending=".md"), "only a place named with a reason"),
    ],
)
def test_a_place_that_cannot_be_read_is_an_adapter_error(place: Read, said: str) -> None:
    spec = resolve_builtins()["kiro"].spec  # no hooks capability
    spec = spec.model_copy(update={"reads": [place]})
    findings = [message for key, message in check_adapter(spec, engines()) if key[0] == "reads"]
    assert any(said in message for message in findings), findings


def test_copilots_other_hooks_files_are_named_and_its_own_is_read(tmp_path: Path) -> None:
    """Copilot runs every *.json of .github/hooks: tackroom's own tackroom.json is read, each other
    one is named with why, never passed over."""
    from tackroom.profile.model import Hook

    profile = imported("claude-code", tmp_path).profile  # nothing: an empty profile to render from
    hook = Hook("lint", "after-tool", "command", "make lint")
    render = plan_render(
        replace(profile, hooks=(hook,)), resolve_builtins()["copilot"], root=tmp_path, scope="project"
    )
    write(render)
    assert (tmp_path / ".github" / "hooks" / "tackroom.json").is_file()
    theirs = {"version": 1, "hooks": {"sessionEnd": [{"type": "command", "bash": "./notify.sh"}]}}
    put(tmp_path / ".github" / "hooks" / "end-of-task.json", json.dumps(theirs))
    found = imported("copilot", tmp_path)
    assert [h.name for h in found.profile.hooks] == ["lint"]
    assert list(named(found)) == [".github/hooks/end-of-task.json"]
    kind, why = named(found)[".github/hooks/end-of-task.json"]
    assert kind == "hook" and "not imported" in why


def test_claude_codes_local_settings_are_named_not_imported(tmp_path: Path) -> None:
    local = {"permissions": {"allow": ["Bash(npm test)"]}}
    put(tmp_path / ".claude" / "settings.local.json", json.dumps(local))
    found = imported("claude-code", tmp_path)
    assert found.profile.permissions.allow == ()
    assert list(named(found)) == [".claude/settings.local.json"]
    assert "one person's local settings" in named(found)[".claude/settings.local.json"][1]
