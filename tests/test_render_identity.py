"""Native -> tackroom -> the same native gives back the same files, byte for byte.

For every repository fixture under ``tests/fixtures/repos`` and every built-in
adapter whose import reads a file of it: the fixture is imported (as ``tackroom
profile import`` does: written as a profile directory and loaded back), the
profile is rendered back for that same adapter into an empty directory, and
every file the import read must come back at its own path with its own bytes.

Which files the import read is observed, not declared: every file it opens under
the fixture (an audit hook on ``open``). A file that cannot come back is named
in ``ALLOWED`` with the reason; an entry that no longer fails is an error, so the
list only shrinks.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from clikit import run_cli
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.errors import ConfigError
from tackroom.profile.load import load_profile
from tackroom.profile.model import Origin, Profile, Rule
from tackroom.profile.origins import apply, diff, digest
from tackroom.profile.render import Imported, import_native, plan_render, write
from tackroom.profile.write import write_profile
from test_profile_roundtrip import RENDERABLE, profiles, v1_fields_for_family_engines

REPOS = Path(__file__).resolve().parent / "fixtures" / "repos"

_DROPPED = "the import dropped it by name"
_LOSSY = "the import dropped an item of it by name, so it is written from what was kept"
ALLOWED: dict[tuple[str, str, str], str] = {
    # A file whose one item the import dropped by name (every one is in that fixture's EXPECT.toml):
    (
        "claude-agent-teams",
        "claude-code",
        ".claude/agents/backend/reviewer.md",
    ): f"{_DROPPED}: a second 'reviewer'",
    ("claude-starter-kit", "claude-code", ".claude/agents/reviewer.md"): f"{_DROPPED}: a second 'reviewer'",
    ("claude-starter-kit", "claude-code", ".claude/agents/helper.md"): f"{_DROPPED}: 'Helper Bot' is no name",
    ("copilot-instructions", "copilot", ".github/agents/planner.agent.md"): f"{_DROPPED}: unreadable tools",
    ("copilot-instructions", "copilot", ".github/agents/security-reviewer.agent.md"): f"{_DROPPED}: tools",
    ("cursor-rules", "cursor", ".cursor/rules/api-guidelines.mdc"): f"{_DROPPED}: applied by description",
    ("cursor-rules", "cursor", ".cursor/rules/snippets.mdc"): f"{_DROPPED}: applied by hand",
    ("gemini-project", "gemini", ".gemini/commands/broken.toml"): f"{_DROPPED}: not TOML",
    ("kiro-steering", "kiro", ".kiro/steering/release-process.md"): f"{_DROPPED}: included by hand",
    ("opencode-dirs", "opencode", ".opencode/agents/planner.md"): f"{_DROPPED}: a primary agent",
    ("qwen-project", "qwen", ".qwen/agents/reviewer.md"): f"{_DROPPED}: unreadable tools",
    # A settings file the import dropped an item of (a literal secret, a hook or server with no
    # neutral form): writing its bytes back would bring back what was left out on purpose.
    ("claude-hooks-collection", "claude-code", ".claude/settings.json"): f"{_LOSSY}: three hooks",
    ("claude-settings-full", "claude-code", ".claude/settings.json"): f"{_LOSSY}: an env variable",
    ("claude-starter-kit", "claude-code", ".mcp.json"): f"{_LOSSY}: a server with a literal secret",
    ("cursor-rules", "cursor", ".cursor/mcp.json"): f"{_LOSSY}: a server with a literal secret",
    ("gemini-project", "gemini", ".gemini/settings.json"): f"{_LOSSY}: two servers limiting tools",
    ("opencode-json", "opencode", "opencode.json"): f"{_LOSSY}: fields of a command and an agent",
    ("qwen-project", "qwen", ".qwen/settings.json"): f"{_LOSSY}: its ui and model keys (a run writes there)",
    ("droid-project", "droid", ".factory/settings.json"): f"{_LOSSY}: its model keys (a run writes there)",
    # opencode reads a second config, .opencode/opencode.json; tackroom writes one, opencode.json,
    # and the rules of both are one set of permissions: the second's items move there.
    ("opencode-dotdir", "opencode", ".opencode/opencode.json"): "opencode's second config is written as one",
    ("opencode-dotdir", "opencode", "opencode.json"): "opencode's second config is merged into it",
}
"""(fixture, adapter, file) -> why that file cannot come back as it was."""

_opened: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed: it records only while _opened is a list


def _import(adapter: Adapter, root: Path) -> tuple[Imported, list[str]]:
    """The import, and the files under ``root`` it opened (relative, sorted)."""
    global _opened
    _opened = []
    try:
        imported = import_native(adapter, root=root, scope="project")
        opened = list(_opened)
    finally:
        _opened = None
    base = str(root) + os.sep
    read = {os.path.relpath(p, root) for p in opened if p.startswith(base) and Path(p).is_file()}
    return imported, sorted(read)


def _repos() -> list[str]:
    return sorted(p.name for p in REPOS.iterdir() if (p / "EXPECT.toml").is_file())


def differences(repo: str, tmp: Path) -> tuple[dict[tuple[str, str, str], str], int, dict[str, str]]:
    """Each file of ``repo`` that does not come back (``missing``/``changed``), how many were read, and
    per adapter the reasons of what its import dropped."""
    found: dict[tuple[str, str, str], str] = {}
    total = 0
    dropped: dict[str, str] = {}
    adapters = resolve_builtins()
    harnesses = [a.harness for a in adapters.values()]
    for name, adapter in sorted(adapters.items()):
        imported, read = _import(adapter, REPOS / repo)
        if not read:
            continue
        total += len(read)
        dropped[name] = "\n".join(d.reason for d in imported.dropped)
        profile_dir = tmp / name / "profile"
        write_profile(imported.profile, profile_dir)
        profile = load_profile([profile_dir], harnesses=harnesses)
        assert profile == imported.profile, f"{name}: the profile changed through its files"
        assert set(profile.origins) == set(imported.profile.origins), f"{name}: origins changed on the way"
        out = tmp / name / "out"
        out.mkdir()
        write(plan_render(profile, adapter, root=out, scope="project"))
        for rel in read:
            back = out / rel
            if not back.is_file():
                found[(repo, name, rel)] = "missing"
            elif back.read_bytes() != (REPOS / repo / rel).read_bytes():
                found[(repo, name, rel)] = "changed"
    return found, total, dropped


@pytest.mark.parametrize("repo", _repos())
def test_rendered_back_is_the_same_files(repo: str, tmp_path: Path) -> None:
    found, _, dropped = differences(repo, tmp_path)
    allowed = {k: v for k, v in ALLOWED.items() if k[0] == repo}
    unexpected = sorted(
        f"{how}: {h} {rel}" for (_, h, rel), how in found.items() if (repo, h, rel) not in allowed
    )
    assert not unexpected, "not rendered back as they were:\n" + "\n".join(unexpected)
    stale = sorted(f"{h} {rel}" for (_, h, rel) in allowed if (repo, h, rel) not in found)
    assert not stale, "allowed to differ but now the same (remove from ALLOWED):\n" + "\n".join(stale)
    for (_, h, rel), why in allowed.items():  # the reason given is the import's own
        if why.startswith(_DROPPED):  # a drop names the file, or the folder it is in
            file = REPOS / repo / rel
            places = [file, *(p for p in file.parents if REPOS / repo in p.parents)]
            said = any(f"{p}:" in dropped[h] or f"{p} " in dropped[h] for p in places)
            assert said, f"{h} {rel}: no drop of the import names it"
        elif why.startswith(_LOSSY):
            assert dropped[h], f"{h} {rel}: the import dropped nothing"


def test_the_allowlist_names_fixtures_that_exist() -> None:
    adapters = resolve_builtins()
    for repo, adapter, rel in ALLOWED:
        assert (REPOS / repo / rel).is_file(), (repo, rel)
        assert adapter in adapters, adapter


# -- what the origins do and do not do --------------------------------------------------------------


def _claude() -> Adapter:
    return resolve_builtins()["claude-code"]


def _through_files(profile: Profile, tmp: Path) -> Profile:
    (tmp / "profile").mkdir()
    write_profile(profile, tmp / "profile")
    return load_profile([tmp / "profile"])


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_edited_item_renders_as_usual_and_the_others_as_they_were(tmp_path: Path) -> None:
    source = REPOS / "claude-rules-paths"
    profile = _through_files(import_native(_claude(), root=source, scope="project").profile, tmp_path)
    rules = tuple(replace(r, text="Changed.\n") if r.name == "security" else r for r in profile.rules)
    out = tmp_path / "out"
    out.mkdir()
    write(plan_render(replace(profile, rules=rules), _claude(), root=out, scope="project"))
    assert not (out / ".claude/rules/security.md").exists()  # edited: rendered where rules go
    assert "Changed." in (out / "CLAUDE.md").read_text(encoding="utf-8")
    for rel in (".claude/rules/testing.md", ".claude/rules/frontend/react.md"):
        assert (out / rel).read_bytes() == (source / rel).read_bytes()


def test_another_harness_renders_as_if_there_were_no_origins(tmp_path: Path) -> None:
    profile = import_native(_claude(), root=REPOS / "claude-rules-paths", scope="project").profile
    assert profile.origins
    for name in ("cursor", "codex", "claude-code-acp"):
        adapter = resolve_builtins()[name]
        with_origins = plan_render(profile, adapter, root=tmp_path, scope="project")
        without = plan_render(replace(profile, origins=()), adapter, root=tmp_path, scope="project")
        assert with_origins.outputs == without.outputs, name
    home = plan_render(profile, _claude(), root=tmp_path, scope="home")  # imported for the project
    assert home.outputs == plan_render(replace(profile, origins=()), _claude(), root=tmp_path).outputs


def test_a_settings_file_renders_back_the_same_twice_then_follows_an_edit(tmp_path: Path) -> None:
    source = REPOS / "claude-starter-kit"
    profile = _through_files(import_native(_claude(), root=source, scope="project").profile, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    write(plan_render(profile, _claude(), root=out, scope="project"))
    first = _files(out)
    assert first[".claude/settings.json"] == (source / ".claude/settings.json").read_bytes()
    again = write(plan_render(profile, _claude(), root=out, scope="project"))
    assert again.written == () and _files(out) == first
    edited = replace(profile, permissions=replace(profile.permissions, deny=()))
    write(plan_render(edited, _claude(), root=out, scope="project"))
    back = import_native(_claude(), root=out, scope="project").profile
    assert back.permissions == edited.permissions and back.hooks == profile.hooks


def test_an_origin_writes_only_where_the_harness_reads_its_items(tmp_path: Path) -> None:
    rule = Rule("security", "Be careful.\n")
    said = (("rules", "security", digest(rule)),)
    bad = Origin(
        "claude-code", "claude-code", "project", ".git/hooks/pre-commit", said, b"#!/bin/sh\nrm -rf /\n"
    )
    misplaced = Origin("claude-code", "claude-code", "project", ".claude/settings.json", said, b"{}")
    for origin in (bad, misplaced):
        rendered = plan_render(
            Profile(rules=(rule,), origins=(origin,)), _claude(), root=tmp_path, scope="project"
        )
        assert [o.path.relative_to(tmp_path).as_posix() for o in rendered.outputs] == ["CLAUDE.md"]


def test_origins_come_back_from_the_profile_files_and_a_bad_one_is_an_error(tmp_path: Path) -> None:
    profile = import_native(_claude(), root=REPOS / "claude-skills-pack", scope="project").profile
    assert _through_files(profile, tmp_path).origins == profile.origins
    bad = tmp_path / "bad"
    (bad / "native" / "claude-code").mkdir(parents=True)
    entry = {"adapter": "claude-code", "scope": "project", "path": "../../etc/passwd", "items": []}
    (bad / "native" / "claude-code" / "origins.json").write_text(json.dumps({"origins": [entry]}))
    with pytest.raises(ConfigError, match="origins"):
        load_profile([bad])


@pytest.mark.parametrize("name", RENDERABLE)
@settings(max_examples=15, deadline=None)
@given(profile=profiles)
def test_a_render_imported_and_rendered_again_is_the_same_files(name: str, profile: Profile) -> None:
    adapter = resolve_builtins()[name]
    with tempfile.TemporaryDirectory() as tmp:
        # Rendered again in the same place: a file may name where it is (codex's hook trust).
        root = Path(tmp) / "root"
        root.mkdir()
        write(plan_render(v1_fields_for_family_engines(profile, adapter), adapter, root=root))
        first = _files(root)
        imported = _through_files(import_native(adapter, root=root).profile, Path(tmp))
        shutil.rmtree(root)
        root.mkdir()
        write(plan_render(imported, adapter, root=root))
        assert _files(root) == first


def test_a_patch_gives_back_the_file_with_its_bom_and_crlf_or_nothing() -> None:
    rendered = b"---\nname: x\ndescription: Does x\n---\nBody line one.\nBody line two.\n" + b"More.\n" * 20
    native = "\ufeff---\r\ndescription: 'Does x'\r\nname: x\r\n---\r\nBody line one.\r\nBody line two.\r\n"
    native_bytes = (native + "More.\r\n" * 20).encode("utf-8")
    patch = diff(rendered, native_bytes)
    assert patch is not None and patch.bom and patch.crlf
    assert apply(rendered, patch) == native_bytes
    assert apply(rendered.replace(b"line two", b"line 2"), patch) is None  # the render changed since
    assert diff(b"something else entirely\n", b"nothing alike at all\n") is None  # kept whole instead


def test_through_the_cli_a_fixture_comes_back_as_it_was(tmp_path: Path) -> None:
    source = REPOS / "claude-rules-paths"
    into, out = tmp_path / "profile", tmp_path / "out"
    imported = run_cli(
        "profile",
        "import",
        "claude-code",
        "--from",
        str(source),
        "--scope",
        "project",
        "--into",
        str(into),
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr[-2000:]
    rendered = run_cli(
        "profile",
        "render",
        "claude-code",
        "--profile",
        str(into),
        "--scope",
        "project",
        "--into",
        str(out),
        cwd=tmp_path,
    )
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    back = {k: v for k, v in _files(out).items() if k != ".tackroom-owned.json"}
    assert back == {
        k: v for k, v in _files(source).items() if k != "EXPECT.toml" and not k.startswith("docs/")
    }


def test_a_setting_json_cannot_hold_is_dropped_by_name_and_the_rest_renders_back(tmp_path: Path) -> None:
    source = tmp_path / "repo"
    (source / ".codex").mkdir(parents=True)
    (source / ".codex" / "config.toml").write_text('model = "gpt-5"\nsince = 1979-05-27T07:32:00Z\n')
    codex = resolve_builtins()["codex"]
    imported = import_native(codex, root=source, scope="project")
    assert [(d.kind, d.name) for d in imported.dropped] == [("native setting", "since")]
    profile = _through_files(imported.profile, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    write(plan_render(profile, codex, root=out, scope="project"))
    assert import_native(codex, root=out, scope="project").profile == imported.profile


def test_a_settings_file_holding_what_the_profile_does_not_renders_as_usual(tmp_path: Path) -> None:
    source = REPOS / "claude-starter-kit"
    profile = import_native(_claude(), root=source, scope="project").profile
    settings = next(o for o in profile.origins if o.path == ".claude/settings.json")
    assert settings.data is not None and b"PostToolUse" in settings.data
    # An origin saying only the permission rules, its bytes still holding the hook: never written.
    narrowed = replace(settings, items=tuple(i for i in settings.items if i[0] == "permissions"))
    out = tmp_path / "out"
    out.mkdir()
    write(plan_render(replace(profile, hooks=(), origins=(narrowed,)), _claude(), root=out, scope="project"))
    assert b"PostToolUse" not in (out / ".claude/settings.json").read_bytes()


def test_a_skill_whose_one_file_cannot_be_kept_renders_whole_as_usual(tmp_path: Path) -> None:
    skill = tmp_path / "repo" / ".claude" / "skills" / "deploying"  # its folder named otherwise
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Deploys\nname: deploy\n---\nDeploy it.\n")
    token = "ghp_" + "a1B2" * 9  # a literal secret by its shape: never stored in origins.json
    (skill / "scripts" / "push.py").write_text(f'TOKEN = "{token}"\n')
    imported = import_native(_claude(), root=tmp_path / "repo", scope="project").profile
    assert imported.skills and not imported.origins  # SKILL.md alone would leave push.py out
    out = tmp_path / "out"
    out.mkdir()
    write(plan_render(_through_files(imported, tmp_path), _claude(), root=out, scope="project"))
    assert (out / ".claude/skills/deploy/scripts/push.py").read_text() == f'TOKEN = "{token}"\n'
    assert (out / ".claude/skills/deploy/SKILL.md").is_file()


def test_a_skill_with_an_origin_missing_for_one_file_renders_whole_as_usual(tmp_path: Path) -> None:
    profile = import_native(_claude(), root=REPOS / "claude-skills-pack", scope="project").profile
    gone = next(o for o in profile.origins if o.path.endswith("/reference.md"))
    rendered = plan_render(
        replace(profile, origins=tuple(o for o in profile.origins if o != gone)),
        _claude(),
        root=tmp_path,
        scope="project",
    )
    paths = {o.path.relative_to(tmp_path).as_posix() for o in rendered.outputs}
    assert {"pdf-processing/reference.md", "pdf-processing/SKILL.md"} <= {
        p.partition("skills/")[2] for p in paths
    }
