"""gptme's engines: ``gptme-hooks`` ([[hooks.scripts]] for session start and end, a generated plugin
named in [plugins] for the other moments) and ``gptme-mcp`` ([[mcp.servers]]), in
``~/.config/gptme/config.toml`` or a project's ``gptme.toml``, rendered and read back exactly; native
files in the shapes gptme 0.35.1 writes and people edit account for every item.

The built-in adapter does not declare mcp yet (gptme offers each MCP tool under a hashed alias no
``[tools] mcp`` pattern can spell, see gptme.toml), so its engine is held to the harness's own files
through a copy of the adapter that declares it.
"""

from __future__ import annotations

import copy
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import assert_adapter_conformance
from tackroom.families import get_family
from tackroom.families.gptme.plugin import read_manifest
from tackroom.profile.model import Hook, McpServer, Profile, Skill
from tackroom.profile.render import Imported, import_native, plan_render, write

CONFIG = Path(".config/gptme/config.toml")
FIXTURES = Path(__file__).parent / "fixtures" / "native" / "gptme"
MCP = {
    "path": "~/.config/gptme/config.toml",
    "project": "{{workdir}}/gptme.toml",
    "render": "gptme-mcp",
    "keys": {"type": "", "enabled": "enabled"},
}


@pytest.fixture(scope="module")
def adapter() -> Adapter:
    return resolve_builtins()["gptme"]


@pytest.fixture(scope="module")
def with_mcp() -> Adapter:
    """The built-in with its mcp capability declared, as it will be once a probe can prove it."""
    built_in = resolve_builtins()["gptme"]
    effective = copy.deepcopy(dict(built_in.effective))
    effective["capabilities"]["mcp"] = MCP
    return Adapter("gptme", effective, built_in.harness, "test", {})


def config_at(root: Path, rel: Path = CONFIG) -> dict[str, Any]:
    return tomllib.loads((root / rel).read_text(encoding="utf-8"))


def native(root: Path, text: str, rel: Path = CONFIG) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def dropped(result: Imported) -> dict[tuple[str, str | None], str]:
    return {(d.name, d.field): d.reason for d in result.dropped}


def test_the_family_serves_its_engines_and_the_adapter_conforms(adapter: Adapter, with_mcp: Adapter) -> None:
    assert [e.name for e in get_family("gptme").engines()] == ["gptme-mcp", "gptme-hooks"]
    assert adapter.spec.capabilities.hooks is not None
    assert "agents" in adapter.spec.lacks
    assert_adapter_conformance(adapter)
    assert_adapter_conformance(with_mcp)


# --- hooks ---------------------------------------------------------------------------------------


def test_hooks_render_as_gptme_reads_them_and_import_back_exactly(adapter: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("hello", "session-start", "command", command="echo hi >> log.txt", timeout=5.0),
            Hook("bye", "session-end", "command", command="./archive.sh"),
        )
    )
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert rendered.drops == ()
    assert config_at(tmp_path) == {
        "hooks": {
            "scripts": [
                {
                    "event": "session.start",
                    "command": "echo hi >> log.txt # tackroom:hook hello",
                    "timeout": 5,
                },
                {"event": "session.end", "command": "./archive.sh # tackroom:hook bye"},
            ]
        }
    }
    assert import_native(adapter, root=tmp_path).profile.hooks == tuple(
        sorted(profile.hooks, key=lambda h: h.name)
    )


@settings(max_examples=30, deadline=None)
@given(
    moment=st.sampled_from(["session-start", "session-end"]),
    command=st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=30).filter(
        lambda c: c.strip() == c and c.strip() and "#" not in c
    ),
    timeout=st.none() | st.integers(1, 300).map(float),
)
def test_session_hooks_round_trip(adapter: Adapter, moment: str, command: str, timeout: float | None) -> None:
    profile = Profile(hooks=(Hook("h", moment, "command", command=command, timeout=timeout),))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(profile, adapter, root=root))
        assert rendered.drops == ()
        assert import_native(adapter, root=root).profile.hooks == profile.hooks


PLUGIN = Path(".config/gptme/plugins/tackroom_hooks")
MODULE = PLUGIN / "hooks" / "tackroom.py"


def test_the_other_moments_become_a_plugin_the_config_names_and_import_back_exactly(
    adapter: Adapter, tmp_path: Path
) -> None:
    profile = Profile(
        hooks=(
            Hook("guard", "before-tool", "refuse", text="no shell here", matcher=("shell",)),
            Hook("log", "after-tool", "command", command="jq -r .tool_name >> tools.log", timeout=2.5),
            Hook("note", "prompt-submit", "inject", text="Mind the tests."),
            Hook("pre", "before-tool", "command", command="./check.sh"),
            Hook("start", "session-start", "command", command="echo hi"),
            Hook("turned", "turn-end", "command", command="date >> turns.log"),
        )
    )
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert rendered.drops == ()
    assert config_at(tmp_path) == {
        "hooks": {"scripts": [{"event": "session.start", "command": "echo hi # tackroom:hook start"}]},
        "plugins": {"paths": ["~/.config/gptme/plugins/tackroom_hooks"]},
    }
    assert (tmp_path / PLUGIN / "__init__.py").is_file()
    source = (tmp_path / MODULE).read_text(encoding="utf-8")
    compile(source, str(MODULE), "exec")  # the module gptme imports is Python
    events = read_manifest(source)
    assert events is not None
    assert sorted(events) == ["tool.execute.post", "tool.execute.pre", "turn.post", "turn.pre"]
    assert [g["matcher"] for g in events["tool.execute.pre"]] == ["shell", "*"]
    assert events["tool.execute.post"][0]["hooks"][0]["timeout"] == 2.5
    assert import_native(adapter, root=tmp_path).profile.hooks == profile.hooks
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    write(plan_render(profile, adapter, root=tmp_path))
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # a re-render is a no-op


_moment = st.sampled_from(["prompt-submit", "before-tool", "after-tool", "turn-end"])


@settings(max_examples=30, deadline=None)
@given(
    moment=_moment,
    command=st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=30).filter(
        lambda c: c.strip() == c and "#" not in c
    ),
    shell=st.booleans(),
    timeout=st.none() | st.floats(0.5, 600, allow_nan=False),
)
def test_plugin_hooks_round_trip(
    adapter: Adapter, moment: str, command: str, shell: bool, timeout: float | None
) -> None:
    matcher = ("shell",) if shell and moment in ("before-tool", "after-tool") else ()
    hook = Hook("h", moment, "command", command=command, matcher=matcher, timeout=timeout)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(Profile(hooks=(hook,)), adapter, root=root))
        assert rendered.drops == ()
        assert read_manifest((root / MODULE).read_text(encoding="utf-8")) is not None
        assert import_native(adapter, root=root).profile.hooks == (hook,)


def test_a_project_plugin_is_named_relative_to_the_workspace(adapter: Adapter, tmp_path: Path) -> None:
    profile = Profile(hooks=(Hook("pre", "before-tool", "command", command="./check.sh"),))
    write(plan_render(profile, adapter, root=tmp_path, scope="project"))
    assert config_at(tmp_path, Path("gptme.toml")) == {
        "plugins": {"paths": [".gptme/plugins/tackroom_hooks"]}
    }
    assert (tmp_path / ".gptme/plugins/tackroom_hooks/hooks/tackroom.py").is_file()
    assert import_native(adapter, root=tmp_path, scope="project").profile.hooks == profile.hooks


def test_the_users_plugins_stay_loaded_and_import_names_them(adapter: Adapter, tmp_path: Path) -> None:
    """An allowlist that names other plugins gets the generated one too; an empty one means all."""
    native(
        tmp_path,
        '[plugins]\npaths = ["~/src/gptme-contrib/plugins"]\nenabled = ["gptme_attention_tracker"]\n',
    )
    profile = Profile(hooks=(Hook("pre", "before-tool", "command", command="./check.sh"),))
    write(plan_render(profile, adapter, root=tmp_path))
    assert config_at(tmp_path)["plugins"] == {
        "paths": ["~/src/gptme-contrib/plugins", "~/.config/gptme/plugins/tackroom_hooks"],
        "enabled": ["gptme_attention_tracker", "tackroom_hooks"],
    }
    found = import_native(adapter, root=tmp_path)
    assert found.profile.hooks == profile.hooks
    assert set(dropped(found)) == {("~/src/gptme-contrib/plugins", None)}
    write(plan_render(Profile(), adapter, root=tmp_path))
    assert config_at(tmp_path)["plugins"] == {
        "paths": ["~/src/gptme-contrib/plugins"],
        "enabled": ["gptme_attention_tracker"],
    }
    assert not (tmp_path / MODULE).exists()

    open_list = tmp_path / "open"
    native(open_list, '[plugins]\npaths = ["~/src/gptme-contrib/plugins"]\n')
    write(plan_render(profile, adapter, root=open_list))
    assert "enabled" not in config_at(open_list)["plugins"]  # naming it would turn the others off


def test_a_plugin_gptme_would_not_load_or_tackroom_did_not_write_gives_no_hooks(
    adapter: Adapter, tmp_path: Path
) -> None:
    profile = Profile(hooks=(Hook("pre", "before-tool", "command", command="./check.sh"),))
    write(plan_render(profile, adapter, root=tmp_path))
    native(tmp_path, '[plugins]\npaths = ["~/.config/gptme/plugins/tackroom_hooks"]\nenabled = ["other"]\n')
    found = import_native(adapter, root=tmp_path)
    assert found.profile.hooks == ()
    assert "enabled leaves it out" in dropped(found)[("~/.config/gptme/plugins/tackroom_hooks", None)]

    native(tmp_path, "def register():\n    pass\n", MODULE)
    native(tmp_path, '[plugins]\npaths = ["~/.config/gptme/plugins/tackroom_hooks"]\n')
    found = import_native(adapter, root=tmp_path)
    assert found.profile.hooks == ()
    assert (
        "not the plugin tackroom generates"
        in dropped(found)[("~/.config/gptme/plugins/tackroom_hooks", None)]
    )


def test_a_moment_gptme_has_no_hook_for_is_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    rendered = write(
        plan_render(
            Profile(hooks=(Hook("h", "pre-compact", "command", command="true"),)), adapter, root=tmp_path
        )
    )
    assert [(d.kind, d.name) for d in rendered.drops] == [("hook", "h")]
    assert not (tmp_path / CONFIG).exists()


def test_inject_refuse_and_a_timeout_gptme_cannot_say_are_dropped_by_name(
    adapter: Adapter, tmp_path: Path
) -> None:
    profile = Profile(
        hooks=(
            Hook("ctx", "session-start", "inject", text="hello"),
            Hook("slow", "session-end", "command", command="true", timeout=1.5),
            Hook("long", "session-end", "command", command="true", timeout=301.0),
        )
    )
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert sorted((d.name, d.field) for d in rendered.drops) == [
        ("ctx", None),
        ("long", "timeout"),
        ("slow", "timeout"),
    ]
    assert all("timeout" not in s for s in config_at(tmp_path)["hooks"]["scripts"])


def test_render_merges_into_the_config_gptme_wrote_and_takes_back_only_its_own(
    adapter: Adapter, tmp_path: Path
) -> None:
    theirs = '[user]\nname = "Ada"\n\n[[hooks.scripts]]\nevent = "session.end"\ncommand = "./mine.sh"\n'
    native(tmp_path, theirs)
    profile = Profile(hooks=(Hook("hi", "session-start", "command", command="echo hi"),))
    write(plan_render(profile, adapter, root=tmp_path))
    data = config_at(tmp_path)
    assert data["user"] == {"name": "Ada"}
    assert [s["command"] for s in data["hooks"]["scripts"]] == ["./mine.sh", "echo hi # tackroom:hook hi"]
    before = (tmp_path / CONFIG).read_bytes()
    write(plan_render(profile, adapter, root=tmp_path))
    assert (tmp_path / CONFIG).read_bytes() == before  # a second render changes nothing
    write(plan_render(Profile(), adapter, root=tmp_path))
    assert config_at(tmp_path)["hooks"]["scripts"] == [{"event": "session.end", "command": "./mine.sh"}]


def test_import_names_the_scripts_gptme_would_refuse(adapter: Adapter, tmp_path: Path) -> None:
    native(
        tmp_path,
        """
[[hooks.scripts]]
event = "session.start"
command = "./a.sh"

[[hooks.scripts]]
event = "tool.execute.pre"
command = "./b.sh"

[[hooks.scripts]]
event = "session.end"
command = "./c.sh"
timeout = 900

[[hooks.scripts]]
event = "session.end"
command = "./d.sh"
shell = "zsh"
""",
    )
    result = import_native(adapter, root=tmp_path)
    assert [(h.name, h.command) for h in result.profile.hooks] == [("session-start-1", "./a.sh")]
    assert set(dropped(result)) == {
        ("hooks.scripts[2]", None),
        ("hooks.scripts[3]", None),
        ("hooks.scripts[4]", None),
    }
    assert "tool.execute.pre" in dropped(result)[("hooks.scripts[2]", None)]


# --- MCP -----------------------------------------------------------------------------------------


def test_servers_render_with_mcp_enabled_and_import_back_exactly(with_mcp: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        mcp=(
            McpServer(
                "db", command="uvx", args=("mcp-server-sqlite", "--db-path", "x.db"), env=(("MODE", "ro"),)
            ),
            McpServer("docs", url="https://mcp.example.com/mcp", headers=(("X-Team", "core"),)),
            McpServer("off", command="srv", disabled=True),
        )
    )
    rendered = write(plan_render(profile, with_mcp, root=tmp_path))
    assert rendered.drops == ()
    assert config_at(tmp_path) == {
        "mcp": {
            "enabled": True,
            "servers": [
                {
                    "name": "db",
                    "command": "uvx",
                    "args": ["mcp-server-sqlite", "--db-path", "x.db"],
                    "env": {"MODE": "ro"},
                },
                {"name": "docs", "url": "https://mcp.example.com/mcp", "headers": {"X-Team": "core"}},
                {"name": "off", "command": "srv", "args": [], "enabled": False},
            ],
        }
    }
    assert import_native(with_mcp, root=tmp_path).profile.mcp == profile.mcp


_name = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)
_word = st.from_regex(r"[A-Za-z0-9_./:-]{1,12}", fullmatch=True)


@settings(max_examples=40, deadline=None)
@given(
    name=_name,
    remote=st.booleans(),
    args=st.lists(_word, max_size=3).map(tuple),
    pairs=st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,6}", fullmatch=True), _word, max_size=2),
    disabled=st.booleans(),
)
def test_servers_round_trip(
    with_mcp: Adapter, name: str, remote: bool, args: tuple[str, ...], pairs: dict[str, str], disabled: bool
) -> None:
    items = tuple(sorted(pairs.items()))
    server = (
        McpServer(name, url=f"https://{name}.example.com/mcp", headers=items, disabled=disabled)
        if remote
        else McpServer(name, command="srv", args=args, env=items, disabled=disabled)
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(Profile(mcp=(server,)), with_mcp, root=root))
        assert rendered.drops == ()
        assert import_native(with_mcp, root=root).profile.mcp == (server,)


def test_what_gptme_cannot_be_given_is_dropped_by_name(with_mcp: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        mcp=(
            McpServer("events", url="https://e.example.com/sse", transport="sse"),
            McpServer(
                "keyed", url="https://k.example.com/mcp", headers=(("Authorization", "Bearer ${TOKEN}"),)
            ),
            McpServer("mixed", command="srv", env=(("A", "x-${B}"),)),
            McpServer("passed", command="srv", env=(("TOKEN", "${TOKEN}"), ("MODE", "ro"))),
            McpServer("slow", command="srv", timeout=30.0),
        )
    )
    rendered = write(plan_render(profile, with_mcp, root=tmp_path))
    assert sorted((d.name, d.field) for d in rendered.drops) == [
        ("events", None),
        ("keyed", None),
        ("mixed", None),
        ("passed", "env"),
        ("slow", "timeout"),
    ]
    servers = {s["name"]: s for s in config_at(tmp_path)["mcp"]["servers"]}
    assert sorted(servers) == ["passed", "slow"]
    assert servers["passed"]["env"] == {"MODE": "ro"}  # TOKEN reaches it from gptme's own environment


def test_servers_a_disabled_switch_keeps_from_running_are_dropped_by_name(
    with_mcp: Adapter, tmp_path: Path
) -> None:
    """Without [mcp] enabled = true gptme starts no server: imported, they would start elsewhere."""
    native(tmp_path, '[mcp]\n\n[[mcp.servers]]\nname = "a"\ncommand = "srv"\n')
    result = import_native(with_mcp, root=tmp_path)
    assert result.profile.mcp == ()
    assert "so gptme starts none" in dropped(result)[("a", None)]


# --- native files --------------------------------------------------------------------------------


def test_the_users_config_as_gptme_writes_it_imports_every_item(with_mcp: Adapter) -> None:
    """config.toml as gptme's first run writes it, with servers, session hooks and a plugin folder
    added by hand (one server with a literal token in a header, which never enters the profile)."""
    found = import_native(with_mcp, root=FIXTURES / "home", scope="home")
    profile = found.profile
    assert {s.name: s for s in profile.mcp} == {
        "memory": McpServer(
            "memory",
            command="npx",
            args=("-y", "@modelcontextprotocol/server-memory"),
            env=(("MEMORY_FILE_PATH", "/home/user/.local/share/mcp-memory.json"),),
            disabled=True,
        ),
        "sqlite": McpServer(
            "sqlite", command="uvx", args=("mcp-server-sqlite", "--db-path", "/home/user/data/notes.db")
        ),
    }
    assert [(h.name, h.moment, h.timeout) for h in profile.hooks] == [
        ("session-end-2", "session-end", None),
        ("session-start-1", "session-start", 5.0),
    ]
    assert [s.name for s in profile.skills] == ["release-notes"]
    reasons = dropped(found)
    assert set(reasons) == {
        ("docs", None),
        ("mcp.auto_start", None),
        ("session-end-2", "priority"),
        ("~/src/gptme-contrib/plugins", None),  # a plugin is code: named, never read
    }
    assert "inline secret" in reasons[("docs", None)]  # a literal token never enters the profile


def test_a_project_imports_its_rules_skills_hooks_and_servers(with_mcp: Adapter) -> None:
    found = import_native(with_mcp, root=FIXTURES / "project", scope="project")
    assert found.dropped == ()
    profile = found.profile
    assert "make test" in profile.rules[0].text
    assert [s.name for s in profile.skills] == ["db-migrations"]
    assert [(h.moment, h.command, h.timeout) for h in profile.hooks] == [
        ("session-start", "make -s env-check", 20.0)
    ]
    assert [s.name for s in profile.mcp] == ["postgres"]


@pytest.mark.parametrize("scope", ["home", "project"])
def test_import_renders_back_into_what_imports_the_same(
    with_mcp: Adapter, tmp_path: Path, scope: Any
) -> None:
    found = import_native(with_mcp, root=FIXTURES / scope, scope=scope).profile
    write(plan_render(found, with_mcp, root=tmp_path, scope=scope))
    again = import_native(with_mcp, root=tmp_path, scope=scope)
    assert again.dropped == ()
    assert again.profile == found


def test_a_skill_lands_where_gptme_lists_it(adapter: Adapter, tmp_path: Path) -> None:
    skill = Skill("tr-skill", "Explains the thing.", "Say THING.\n")
    write(plan_render(Profile(skills=(skill,)), adapter, root=tmp_path))
    text = (tmp_path / ".config/gptme/skills/tr-skill/SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\n") and "name: tr-skill" in text and "Explains the thing." in text
    assert import_native(adapter, root=tmp_path).profile.skills == (skill,)


def test_project_files_that_run_code_need_trust_and_no_switch_runs_them_untrusted(adapter: Adapter) -> None:
    """gptme starts a project's servers and plugins whatever its own gate says, so an untrusted
    project that holds any is not run at all: a [trust] env would be a switch, and with one such a
    project would run (tests/real/test_trust_real.py runs that repository for real)."""
    assert "gptme.toml" in adapter.spec.trust.project
    assert not adapter.spec.trust.env and not adapter.spec.trust.argv
