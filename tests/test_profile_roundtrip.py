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
from tackroom.profile.render import import_profile, plan_render, write
from tackroom.profile.write import write_profile
from tackroom.vocabulary import MOMENTS, NEUTRAL_TOOLS

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


rules = st.builds(Rule, NAMES, TEXT.map(lambda t: t + "\n"))
skill_files = st.lists(
    st.tuples(st.from_regex(r"(ref/)?[a-z]{1,6}\.(md|txt|py)", fullmatch=True), st.binary(max_size=30)),
    max_size=2,
    unique_by=lambda f: f[0],
).map(lambda fs: tuple(sorted(fs)))
skills = st.builds(Skill, NAMES, LINE, TEXT, skill_files)
agents = st.builds(Agent, NAMES, LINE, TEXT, TOOLS, st.none() | st.sampled_from(["sonnet", "opus"]))
commands = st.builds(Command, NAMES, LINE, TEXT.map(lambda t: t + " $ARGUMENTS\n"))
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
    ),
    st.builds(
        McpServer,
        NAMES,
        url=st.sampled_from(["https://mcp.example.test/mcp", "http://127.0.0.1:9/sse"]),
        headers=st.just((("Authorization", "Bearer ${TOKEN}"),)) | st.just(()),
    ),
)
hooks = st.one_of(
    st.builds(Hook, NAMES, st.sampled_from(MOMENTS), st.just("command"), command=LINE),
    st.builds(Hook, NAMES, st.sampled_from(MOMENTS), st.sampled_from(["inject", "refuse"]), text=LINE),
)
tool_hooks = st.builds(
    Hook, NAMES, st.sampled_from(["before-tool", "after-tool"]), st.just("refuse"), text=LINE, matcher=TOOLS
)

profiles = st.builds(
    Profile,
    rules=st.lists(rules, max_size=3).map(unique),
    skills=st.lists(skills, max_size=2).map(unique),
    agents=st.lists(agents, max_size=2).map(unique),
    commands=st.lists(commands, max_size=2).map(unique),
    mcp=st.lists(servers, max_size=2).map(unique),
    hooks=st.lists(hooks | tool_hooks, max_size=3).map(unique),
)

RENDERABLE = sorted(
    name
    for name, adapter in resolve_builtins().items()
    if all(c is None or c.render in engines() for _, c in adapter.spec.capabilities)
)


def without_dropped(profile: Profile, drops: tuple[Drop, ...]) -> Profile:
    """``profile`` less the items dropped by name, and less the fields dropped from the items kept."""
    whole = {(d.kind, d.name) for d in drops if d.field is None}
    fields: dict[tuple[str, str], set[str]] = {}
    for d in drops:
        if d.field is not None:
            fields.setdefault((d.kind, d.name), set()).add(d.field)

    def keep(kind: str, items: tuple) -> tuple:  # type: ignore[type-arg]
        kept = []
        for item in items:
            if (kind, item.name) in whole:
                continue
            unset = {f: type(item).__dataclass_fields__[f].default for f in fields.get((kind, item.name), ())}
            kept.append(replace(item, **unset))
        return tuple(kept)

    return Profile(
        keep("rule", profile.rules),
        keep("skill", profile.skills),
        keep("subagent", profile.agents),
        keep("command", profile.commands),
        keep("MCP server", profile.mcp),
        keep("hook", profile.hooks),
    )


def test_some_adapters_are_renderable() -> None:
    assert "claude-code" in RENDERABLE


@pytest.mark.parametrize("name", RENDERABLE)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(profile=profiles)
def test_import_is_the_inverse_of_render(name: str, profile: Profile) -> None:
    adapter: Adapter = resolve_builtins()[name]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(profile, adapter, root=root))
        expected = without_dropped(profile.for_harness(adapter.harness), rendered.drops)
        assert import_profile(adapter, root=root) == expected
        again = write(plan_render(profile, adapter, root=root))  # re-rendering what tackroom owns is fine
        assert import_profile(adapter, root=root) == expected and again.drops == rendered.drops


@settings(max_examples=100, deadline=None)
@given(profile=profiles)
def test_neutral_files_load_back_exactly(profile: Profile) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        write_profile(profile, Path(tmp))
        assert load_profile([Path(tmp)]) == profile
        assert write_profile(profile, Path(tmp)) == []  # idempotent
