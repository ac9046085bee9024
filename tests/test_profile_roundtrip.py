"""Render and import are exact inverses, for every implemented renderer of every adapter.

Hypothesis generates profiles; for each adapter, ``import(render(p))`` must give
back ``p`` as that harness sees it, less exactly the items the render dropped by
name. The neutral writer and loader are held to the same standard.
"""

from __future__ import annotations

import string
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.engines import engines
from tackroom.profile.engines.base import Drop
from tackroom.profile.load import load_profile
from tackroom.profile.model import Agent, Command, Hook, McpServer, Profile, Rule, Skill
from tackroom.profile.render import import_native, import_profile, plan_render, write
from tackroom.profile.write import write_profile
from tackroom.vocabulary import MOMENTS, NEUTRAL_TOOLS, SESSION_SOURCES

NAMES = st.from_regex(r"[a-z0-9][a-z0-9-]{0,8}", fullmatch=True)
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\x85\u2028\u2029")
    | st.sampled_from("\n\t"),
    max_size=60,
)
LINE = (
    st.text(alphabet=string.ascii_letters + string.digits + " .,:-_'\"!?/", min_size=1, max_size=40)
    .map(str.strip)
    .filter(bool)
)
TOOLS = st.lists(st.sampled_from(NEUTRAL_TOOLS), max_size=3, unique=True).map(tuple)


def unique(items: list, key: str = "name") -> tuple:  # type: ignore[type-arg]
    seen: dict[str, object] = {}
    for item in items:
        seen.setdefault(getattr(item, key), item)
    return tuple(sorted(seen.values(), key=lambda i: getattr(i, key)))  # type: ignore[arg-type]


GLOBS = st.lists(
    st.sampled_from(["src/**/*.py", "docs/*.md", "**/*.{ts,tsx}", "tests/**"]),
    min_size=1,
    max_size=2,
    unique=True,
).map(tuple)
REFS = st.lists(
    st.sampled_from(NEUTRAL_TOOLS) | st.sampled_from(['shell("git push:*")', 'read_file("src/**")']),
    max_size=3,
    unique=True,
).map(tuple)
MODELS = st.none() | st.sampled_from(["sonnet", "opus", "gpt-5", "gemini-pro", "qwen-coder"])
HINT = st.none() | st.sampled_from(["[file]", "<issue> [mode]"])
BODY = st.lists(
    TEXT.filter(lambda t: "$" not in t and "!" not in t and "@" not in t and "{" not in t)
    | st.sampled_from(["$ARGUMENTS", "$1", "!{git status}", "@{README.md}"]),
    max_size=4,
).map(lambda parts: " ".join(parts) + "\n")

rules = st.builds(Rule, NAMES, TEXT.map(lambda t: t + "\n"))
scoped_rules = st.builds(Rule, NAMES, TEXT.map(lambda t: t + "\n"), globs=GLOBS, description=st.none() | LINE)
skill_files = st.lists(
    st.tuples(st.from_regex(r"(ref/)?[a-z]{1,6}\.(md|txt|py)", fullmatch=True), st.binary(max_size=30)),
    max_size=2,
    unique_by=lambda f: f[0],
).map(lambda fs: tuple(sorted(fs)))
skills = st.builds(
    Skill,
    NAMES,
    LINE,
    TEXT,
    skill_files,
    allowed_tools=st.none() | REFS,
    model=MODELS,
    argument_hint=HINT,
)
agents = st.builds(
    Agent,
    NAMES,
    LINE,
    TEXT,
    TOOLS,
    MODELS,
    disallowed_tools=st.just(()) | REFS,
    reasoning=st.none() | st.sampled_from(["low", "high"]),
    temperature=st.none() | st.sampled_from([0.0, 0.2, 1.0]),
)
COMMAND_NAMES = NAMES | st.tuples(NAMES, NAMES).map(":".join)
commands = st.builds(
    Command,
    COMMAND_NAMES,
    LINE,
    BODY,
    allowed_tools=st.none() | REFS,
    model=MODELS,
    argument_hint=HINT,
)
DURATION = st.none() | st.sampled_from([5.0, 30.0, 1.5])
servers = st.one_of(
    st.builds(
        McpServer,
        NAMES,
        command=st.sampled_from(["python3", "npx", "/usr/bin/tool"]),
        args=st.lists(LINE, max_size=3).map(tuple),
        env=st.dictionaries(st.sampled_from(["LOG_LEVEL", "MODE"]), LINE, max_size=2).map(
            lambda d: tuple(sorted(d.items()))
        )
        | st.just((("API_TOKEN", "${API_TOKEN}"),)),
        timeout=DURATION,
        tool_timeout=DURATION,
        auto_approve=st.just(()) | st.just(("*",)) | st.just(("search", "fetch")),
        disabled=st.booleans(),
        cwd=st.none() | st.just("/srv/tool"),
    ),
    st.builds(
        McpServer,
        NAMES,
        url=st.sampled_from(["https://mcp.example.test/mcp", "http://127.0.0.1:9/sse"]),
        headers=st.just((("Authorization", "Bearer ${TOKEN}"),)) | st.just(()),
        transport=st.none() | st.just("sse"),
        timeout=DURATION,
        disabled=st.booleans(),
    ),
)
hooks = st.one_of(
    st.builds(Hook, NAMES, st.sampled_from(MOMENTS), st.just("command"), command=LINE),
    st.builds(Hook, NAMES, st.sampled_from(MOMENTS), st.sampled_from(["inject", "refuse"]), text=LINE),
)
tool_hooks = st.builds(
    Hook, NAMES, st.sampled_from(["before-tool", "after-tool"]), st.just("refuse"), text=LINE, matcher=TOOLS
)
start_hooks = st.builds(
    Hook,
    NAMES,
    st.just("session-start"),
    st.just("command"),
    command=LINE,
    source=st.lists(st.sampled_from(SESSION_SOURCES), min_size=1, max_size=4, unique=True).map(tuple),
)

profiles = st.builds(
    Profile,
    rules=st.lists(rules | scoped_rules, max_size=3).map(unique),
    skills=st.lists(skills, max_size=2).map(unique),
    agents=st.lists(agents, max_size=2).map(unique),
    commands=st.lists(commands, max_size=2).map(unique),
    mcp=st.lists(servers, max_size=2).map(unique),
    hooks=st.lists(hooks | tool_hooks | start_hooks, max_size=3).map(unique),
)

RENDERABLE = sorted(
    name
    for name, adapter in resolve_builtins().items()
    if all(c is None or c.render in engines() for _, c in adapter.spec.capabilities)
)


KIND_OF = {
    "rule": "rules",
    "path-scoped rule": "rules",
    "skill": "skills",
    "subagent": "agents",
    "command": "commands",
    "MCP server": "mcp",
    "hook": "hooks",
}
LISTS = ("tools", "allowed_tools")


def without_dropped(profile: Profile, drops: tuple[Drop, ...], imported: Profile | None = None) -> Profile:
    """``profile`` less the items dropped by name, and less each field dropped by name.

    A list of allowed tools dropped in part (the harness could not name some) must come back as a
    part of what was asked: allowing less, never more.
    """
    items = {(KIND_OF[d.kind], d.name) for d in drops if d.field is None and d.kind in KIND_OF}
    fields: dict[tuple[str, str], set[str]] = {}
    for d in drops:
        if d.field is not None and d.kind in KIND_OF:
            fields.setdefault((KIND_OF[d.kind], d.name), set()).add(d.field)

    def keep(attr: str) -> tuple:  # type: ignore[type-arg]
        got = {i.name: i for i in getattr(imported, attr, ())} if imported is not None else {}
        kept = []
        for item in getattr(profile, attr):
            if (attr, item.name) in items:
                continue
            for name in fields.get((attr, item.name), ()):
                if name in LISTS and item.name in got:
                    assert set(getattr(got[item.name], name) or ()) <= set(getattr(item, name) or ())
                    item = replace(item, **{name: getattr(got[item.name], name)})
                else:
                    item = replace(item, **{name: DEFAULTS[name]})
            kept.append(item)
        return tuple(kept)

    return Profile(
        keep("rules"), keep("skills"), keep("agents"), keep("commands"), keep("mcp"), keep("hooks")
    )


GENERIC = {"concat", "dir", "rule-dir", "mcp-json"}
V2_FIELDS = {
    "rules": ("globs", "description"),
    "skills": ("allowed_tools", "model", "argument_hint"),
    "agents": ("disallowed_tools", "model", "reasoning", "temperature"),
    "commands": ("allowed_tools", "model", "argument_hint"),
    "mcp": ("transport", "timeout", "tool_timeout", "auto_approve", "disabled", "cwd"),
}
CAPABILITY = {
    "rules": "rules",
    "skills": "skills",
    "agents": "subagents",
    "commands": "commands",
    "mcp": "mcp",
}


def v1_fields_for_family_engines(profile: Profile, adapter: Adapter) -> Profile:
    """The new item fields only where a generic engine renders the kind (family engines test their own).

    A scoped rule goes to the ``scoped_rules`` capability; a namespaced command or a body template
    construct is rendered by the generic ``dir`` engine only.
    """
    caps = adapter.spec.capabilities
    changed = {}
    for attr, names in V2_FIELDS.items():
        capability = getattr(caps, CAPABILITY[attr])
        if capability is None or capability.render in GENERIC:
            continue
        items = []
        for item in getattr(profile, attr):
            blank = {n: DEFAULTS.get(n) for n in names if n != "globs"}
            if attr == "rules" and item.globs:
                continue  # the rule is a scoped rule: its own capability
            items.append(replace(item, **blank))
        changed[attr] = tuple(items)
    return replace(profile, **changed)


DEFAULTS = {
    "transport": None,
    "disallowed_tools": (),
    "model": None,
    "argument_hint": None,
    "allowed_tools": None,
    "tools": (),
    "description": None,
    "reasoning": None,
    "temperature": None,
    "timeout": None,
    "tool_timeout": None,
    "auto_approve": (),
    "disabled": False,
    "cwd": None,
    "env": (),
    "headers": (),
}


def test_some_adapters_are_renderable() -> None:
    assert "claude-code" in RENDERABLE


@pytest.mark.parametrize("name", RENDERABLE)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(profile=profiles)
def test_import_is_the_inverse_of_render(name: str, profile: Profile) -> None:
    adapter: Adapter = resolve_builtins()[name]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        profile = v1_fields_for_family_engines(profile, adapter)
        rendered = write(plan_render(profile, adapter, root=root))
        imported = import_native(adapter, root=root)
        expected = without_dropped(profile.for_harness(adapter.harness), rendered.drops, imported.profile)
        assert imported.profile == expected
        assert imported.dropped == ()
        again = write(plan_render(profile, adapter, root=root))  # re-rendering what tackroom owns is fine
        assert import_profile(adapter, root=root) == expected and again.drops == rendered.drops


@settings(max_examples=100, deadline=None)
@given(profile=profiles)
def test_neutral_files_load_back_exactly(profile: Profile) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        write_profile(profile, Path(tmp))
        assert load_profile([Path(tmp)]) == profile
        assert write_profile(profile, Path(tmp)) == []  # idempotent
