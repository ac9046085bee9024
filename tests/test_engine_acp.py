"""The ACP agents' profile: each renders where its harness reads, and codex-acp's hooks come trusted.

An ACP agent is its harness behind a protocol, so an ACP adapter declares the
places (and engines) of the harness it wraps; what it lacks over ACP is data.
``codex-acp-hooks`` writes codex's hooks.json and, in the config.toml beside
it, the trust codex-core asks of a user's hook before it runs one (codex-acp
has no flag that bypasses it), keyed and hashed as codex-core does.
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import assert_adapter_conformance, assert_adapter_loads_hooks
from tackroom.families import get_family
from tackroom.families.acp.engines import codex_hook_hash, snake_event
from tackroom.profile.model import Agent, Command, Hook, Profile, Rule, Skill
from tackroom.profile.render import import_native, plan_render, write

ACP = {
    "claude-code-acp": "claude-code",
    "codex-acp": "codex",
    "gemini-acp": "gemini",
    "opencode-acp": "opencode",
    "qwen-acp": "qwen",
}
"""Each ACP adapter and the adapter of the harness it wraps."""
HOOKS = Path(".codex/hooks.json")
CONFIG = Path(".codex/config.toml")


@pytest.fixture(scope="module")
def codex_acp() -> Adapter:
    return resolve_builtins()["codex-acp"]


def hooks_at(root: Path) -> dict[str, Any]:
    data = json.loads((root / HOOKS).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def trust_at(root: Path) -> dict[str, Any]:
    state: dict[str, Any] = tomllib.loads((root / CONFIG).read_text(encoding="utf-8"))["hooks"]["state"]
    return state


@pytest.mark.parametrize("name", sorted(ACP))
def test_each_acp_agent_renders_where_its_harness_reads(name: str) -> None:
    """Rules, skills, subagents, commands: the base harness's home places and engines, where declared
    (how a command is invoked may differ: over ACP it is the prompt's /name, not `opencode run
    --command`; and what turns a capability on: codex-acp's older codex-core offers its subagents
    only with multi_agent_v2 switched on). A project's places are the base harness's alone: it
    imports and renders them."""
    adapters = resolve_builtins()
    acp, base = adapters[name].effective["capabilities"], adapters[ACP[name]].effective["capabilities"]
    assert "rules" in acp  # the row: every ACP agent reads rules, as its harness does

    def home(table: dict[str, Any]) -> dict[str, Any]:
        also = [p for p in table.get("also", []) if "{{workdir}}" not in p]
        skipped = ("invoke", "project", "also", "argv")
        return {k: v for k, v in table.items() if k not in skipped} | {"also": also}

    for kind in ("rules", "skills", "subagents", "commands"):
        if kind in acp:
            assert "project" not in acp[kind], kind
            assert home(acp[kind]) == home(base[kind]), kind
    assert_adapter_conformance(adapters[name])
    if "hooks" in acp:
        assert_adapter_loads_hooks(adapters[name])


@pytest.mark.parametrize("name", sorted(ACP))
def test_what_an_acp_agent_does_not_declare_is_said_or_left_to_the_report(name: str) -> None:
    """A lack names the agent's version; nothing declared is also lacked."""
    adapter = resolve_builtins()[name]
    capabilities = adapter.effective["capabilities"]
    events = capabilities.get("hooks", {}).get("events", {})
    for capability, why in adapter.spec.lacks.items():
        assert adapter.spec.verified_with is not None and str(adapter.spec.verified_with) in why
        kind, _, rest = capability.partition(".")
        declared = {
            "commands": "commands" in capabilities,
            "endpoint": "model" in adapter.effective["options"],
        }
        if kind == "hooks":
            assert rest not in events and not (rest in ("inject", "refuse") and rest in capabilities["hooks"])
        else:
            assert not declared.get(kind, False), capability


def test_a_profile_reaches_each_acp_agents_own_files(tmp_path: Path) -> None:
    profile = Profile(
        rules=(Rule("style", "Keep it short.\n"),),
        skills=(Skill("lint", "Lints the tree.", "Run the linter.\n"),),
        agents=(Agent("reviewer", "Reviews changes.", "You review changes.\n"),),
        commands=(Command("ship", "Ships it.", "Ship $ARGUMENTS\n"),),
    )
    adapters = resolve_builtins()
    for name, base in ACP.items():
        ours, theirs = tmp_path / name, tmp_path / base
        write(plan_render(profile, adapters[name], root=ours))
        write(plan_render(profile, adapters[base], root=theirs))
        mine = {p.relative_to(ours) for p in ours.rglob("*") if p.is_file()}
        assert mine and mine <= {p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()}, name
        imported = import_native(adapters[name], root=ours).profile
        assert imported.rules == profile.rules, name


# --- codex-acp-hooks ---------------------------------------------------------------------


def test_the_family_serves_the_engine_and_codex_acp_uses_it(codex_acp: Adapter) -> None:
    assert [e.name for e in get_family("acp-codex").engines()] == ["acp-mcp", "codex-acp-hooks"]
    assert codex_acp.spec.capabilities.hooks is not None
    assert codex_acp.spec.capabilities.hooks.render == "codex-acp-hooks"


def test_the_hash_is_codex_cores_own() -> None:
    """A hook codex-acp 0.16.0 ran on this trust (and none ran without it): its hash, and its key's event."""
    group = {
        "hooks": [{"type": "command", "command": "echo hi >> /tmp/acpdbg-oa8_bdvt/fired # tackroom:hook h1"}]
    }
    assert codex_hook_hash("SessionStart", group) == (
        "sha256:405aaa8cd9ed97ddd846a5c9b6768e4e9fa38a645162ddaf639b6b30251be881"
    )
    assert [snake_event(e) for e in ("PreToolUse", "UserPromptSubmit", "Stop")] == [
        "pre_tool_use",
        "user_prompt_submit",
        "stop",
    ]
    # The timeout codex fills in is part of the identity: naming it changes nothing, another one does.
    timed = {"hooks": [{**group["hooks"][0], "timeout": 600}]}
    assert codex_hook_hash("SessionStart", timed) == codex_hook_hash("SessionStart", group)
    assert codex_hook_hash("SessionStart", {"hooks": [{**group["hooks"][0], "timeout": 5}]}) != (
        codex_hook_hash("SessionStart", group)
    )
    assert codex_hook_hash("SessionStart", {**group, "matcher": "startup"}) != codex_hook_hash(
        "SessionStart", group
    )


def test_hooks_render_with_their_trust_and_import_back_exactly(codex_acp: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("guard", "before-tool", "refuse", text="Never force-push.", matcher=("shell",)),
            Hook("context", "prompt-submit", "inject", text="Run the tests next."),
            Hook("log", "after-tool", "command", command="./log.sh", timeout=5),
            Hook("hello", "session-start", "command", command="./hello.sh"),
            Hook("bye", "turn-end", "command", command="./bye.sh"),
        )
    )
    rendered = write(plan_render(profile, codex_acp, root=tmp_path))
    assert rendered.drops == ()
    events = hooks_at(tmp_path)["hooks"]
    assert sorted(events) == ["PostToolUse", "PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"]
    assert events["PreToolUse"][0]["matcher"] == "Bash"  # codex's hooks name the shell Bash
    where = tmp_path / HOOKS
    assert trust_at(tmp_path) == {
        f"{where}:{snake_event(event)}:{n}:0": {"trusted_hash": codex_hook_hash(event, group)}
        for event, groups in events.items()
        for n, group in enumerate(groups)
    }
    assert sorted(import_native(codex_acp, root=tmp_path).profile.hooks, key=lambda h: h.name) == sorted(
        profile.hooks, key=lambda h: h.name
    )


def test_two_hooks_of_one_event_are_trusted_each_at_its_place(codex_acp: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("a", "after-tool", "command", command="./a.sh", matcher=("shell",)),
            Hook("b", "after-tool", "command", command="./b.sh"),
        )
    )
    write(plan_render(profile, codex_acp, root=tmp_path))
    [first, second] = hooks_at(tmp_path)["hooks"]["PostToolUse"]
    where = tmp_path / HOOKS
    assert trust_at(tmp_path) == {
        f"{where}:post_tool_use:0:0": {"trusted_hash": codex_hook_hash("PostToolUse", first)},
        f"{where}:post_tool_use:1:0": {"trusted_hash": codex_hook_hash("PostToolUse", second)},
    }


def test_the_trust_merges_into_the_config_codex_keeps_there(codex_acp: Adapter, tmp_path: Path) -> None:
    (tmp_path / CONFIG).parent.mkdir(parents=True)
    (tmp_path / CONFIG).write_text('model = "gpt-5.5"\n\n[projects."/src/app"]\ntrust_level = "trusted"\n')
    write(
        plan_render(
            Profile(hooks=(Hook("h", "turn-end", "command", command="true"),)), codex_acp, root=tmp_path
        )
    )
    config = tomllib.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))
    assert config["model"] == "gpt-5.5"
    assert config["projects"] == {"/src/app": {"trust_level": "trusted"}}
    assert list(config["hooks"]["state"]) == [f"{tmp_path / HOOKS}:stop:0:0"]


def test_session_end_which_codex_core_lacks_is_dropped_by_name(codex_acp: Adapter, tmp_path: Path) -> None:
    rendered = write(
        plan_render(
            Profile(hooks=(Hook("h", "session-end", "command", command="true"),)), codex_acp, root=tmp_path
        )
    )
    assert [(d.kind, d.name) for d in rendered.drops] == [("hook", "h")]
    assert not (tmp_path / HOOKS).exists() and not (tmp_path / CONFIG).exists()


@settings(max_examples=40, deadline=None)
@given(
    moment=st.sampled_from(["before-tool", "after-tool"]),
    matcher=st.sampled_from([(), ("shell",)]),
    timeout=st.none() | st.integers(1, 900).map(float),
    command=st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=30
    ).filter(lambda c: c.strip() == c and "#" not in c),
)
def test_tool_hooks_round_trip(
    codex_acp: Adapter, moment: str, matcher: tuple[str, ...], timeout: float | None, command: str
) -> None:
    profile = Profile(
        hooks=(Hook("h", moment, "command", command=command, matcher=matcher, timeout=timeout),)
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(profile, codex_acp, root=root))
        assert rendered.drops == ()
        assert import_native(codex_acp, root=root).profile.hooks == profile.hooks
        [(event, [group])] = hooks_at(root)["hooks"].items()
        assert trust_at(root) == {
            f"{root / HOOKS}:{snake_event(event)}:0:0": {"trusted_hash": codex_hook_hash(event, group)}
        }


FIXTURE = Path(__file__).parent / "fixtures" / "native" / "acp-codex" / "project"
"""A project as a codex user leaves it: AGENTS.md, a skill, hooks.json, and the trust codex's /hooks wrote."""


def test_a_codex_project_imports_for_codex_acp_and_renders_back_trusted(
    codex_acp: Adapter, tmp_path: Path
) -> None:
    # A project's files are codex's to import; what they say renders into codex-acp's home.
    imported = import_native(resolve_builtins()["codex"], root=FIXTURE, scope="project")
    assert imported.dropped == ()
    profile = imported.profile
    assert [r.text for r in profile.rules] == [(FIXTURE / "AGENTS.md").read_text(encoding="utf-8")]
    assert [s.name for s in profile.skills] == ["release-notes"]
    by_name = {h.moment: h for h in profile.hooks}
    assert sorted(by_name) == ["before-tool", "session-start"]
    assert by_name["before-tool"].matcher == ("shell",) and by_name["session-start"].source == ("startup",)
    assert by_name["session-start"].timeout == 10
    # Rendered again (into the run's home, say), each hook comes with the trust its new place needs.
    write(plan_render(profile, codex_acp, root=tmp_path))
    again = import_native(codex_acp, root=tmp_path).profile
    assert (again.rules, again.skills, again.hooks) == (profile.rules, profile.skills, profile.hooks)
    events = hooks_at(tmp_path)["hooks"]
    assert set(trust_at(tmp_path)) == {f"{tmp_path / HOOKS}:{snake_event(e)}:0:0" for e in events}


def test_a_project_render_never_trusts_hooks(codex_acp: Adapter, tmp_path: Path) -> None:
    """Codex runs a hook only once its config.toml trusts it; a project's config.toml that trusted the
    project's hooks would run them for whoever clones it. codex-acp places only a home: a project
    render drops its hooks by name and writes no trust."""
    profile = import_native(resolve_builtins()["codex"], root=FIXTURE, scope="project").profile
    written = write(plan_render(profile, codex_acp, root=tmp_path, scope="project", workdir=tmp_path))
    assert {d.reason for d in written.drops if d.kind == "hook"} == {"no project-level hooks"}
    assert not (tmp_path / ".codex").exists()
