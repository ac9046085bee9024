"""Kimi CLI's ``kimi-agents`` engine: subagents as an agent spec that extends kimi's default agent.

1.51.0 reads subagent types only from the spec ``--agent-file`` names, so the built-in adapter
declares no subagents yet (its argv cannot name a file of the run's home); these tests give an
operator adapter that extends kimi the capability, as the built-in one would.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, load_adapters
from tackroom.families import get_family
from tackroom.families.kimi.agents import TOOL_PATHS
from tackroom.profile.model import Agent, Profile
from tackroom.profile.render import Imported, import_native, plan_render, write

MAIN = Path(".kimi/tackroom-agent.yaml")
NATIVE = Path(__file__).parent / "fixtures" / "native" / "kimi" / "agents"


@pytest.fixture(scope="module")
def adapter(tmp_path_factory: pytest.TempPathFactory) -> Adapter:
    config = tmp_path_factory.mktemp("config")
    (config / "tackroom.toml").write_text(
        '[adapter.kimi-with-agents]\nextends = "kimi"\n'
        "[adapter.kimi-with-agents.capabilities.subagents]\n"
        'path = "${KIMI_SHARE_DIR:-~/.kimi}/tackroom-agent.yaml"\nrender = "kimi-agents"\n',
        encoding="utf-8",
    )
    return load_adapters(config=config)["kimi-with-agents"]


def spec_at(path: Path) -> dict[str, Any]:
    """A spec file as kimi's agentspec.py reads it (yaml.safe_load)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def dropped(result: Imported) -> dict[tuple[str, str | None], str]:
    return {(d.name, d.field): d.reason for d in result.dropped}


def test_the_family_serves_the_engine(adapter: Adapter) -> None:
    assert "kimi-agents" in [e.name for e in get_family("kimi").engines()]
    assert adapter.spec.capabilities.subagents is not None


def test_agents_render_as_a_spec_extending_the_default_agent(adapter: Adapter, tmp_path: Path) -> None:
    reviewer = Agent(
        "reviewer",
        "Reviews changes.",
        "You review changes.\n",
        tools=("read_file", "search"),
        disallowed_tools=("write_file",),
        model="kimi:k2",
    )
    plain = Agent("plain", "Does anything.", "You help.\n")
    rendered = write(plan_render(Profile(agents=(reviewer, plain)), adapter, root=tmp_path))
    assert rendered.drops == ()
    assert spec_at(tmp_path / MAIN) == {
        "version": 1,
        "agent": {
            "extend": "default",
            "subagents": {
                "reviewer": {"path": "./tackroom-agent/reviewer.yaml", "description": "Reviews changes."},
                "plain": {"path": "./tackroom-agent/plain.yaml", "description": "Does anything."},
            },
        },
    }
    folder = tmp_path / ".kimi" / "tackroom-agent"
    assert spec_at(folder / "reviewer.yaml")["agent"] == {
        "extend": "default",
        "system_prompt_path": "./reviewer.md",
        "subagents": {},
        "allowed_tools": ["kimi_cli.tools.file:ReadFile", "kimi_cli.tools.file:Grep"],
        "exclude_tools": ["kimi_cli.tools.file:WriteFile"],
        "model": "k2",
    }
    assert spec_at(folder / "plain.yaml")["agent"] == {
        "extend": "default",
        "system_prompt_path": "./plain.md",
        "subagents": {},
    }
    assert (folder / "reviewer.md").read_text(encoding="utf-8") == "You review changes.\n"
    found = import_native(adapter, root=tmp_path)
    assert found.dropped == ()
    assert found.profile.agents == (plain, reviewer)


def test_no_agents_render_no_spec(adapter: Adapter, tmp_path: Path) -> None:
    """Without agents no spec is written: the run keeps kimi's default agent and its subagents."""
    assert plan_render(Profile(), adapter, root=tmp_path).outputs == ()
    mcp_only = Agent("x", "X.", "Body.\n", tools=('mcp("srv/one")',))
    rendered = plan_render(Profile(agents=(mcp_only,)), adapter, root=tmp_path)
    assert rendered.outputs == ()
    assert "it would get every tool" in str(rendered.drops)


def test_a_prompt_kimi_would_read_as_a_template_is_quoted_whole(adapter: Adapter, tmp_path: Path) -> None:
    body = "Use ${HOME} and {% if %} literally {# not a comment #}.\n"
    agent = Agent("quoted", "Quotes.", body)
    write(plan_render(Profile(agents=(agent,)), adapter, root=tmp_path))
    text = (tmp_path / ".kimi" / "tackroom-agent" / "quoted.md").read_text(encoding="utf-8")
    assert text == "{% raw %}" + body + "{% endraw %}\n"
    assert import_native(adapter, root=tmp_path).profile.agents == (agent,)
    unquotable = Agent("bad", "Bad.", "Ends {% endraw %} early ${x}.\n")
    rendered = plan_render(Profile(agents=(unquotable,)), adapter, root=tmp_path)
    assert rendered.outputs == ()
    assert [(d.name, d.field) for d in rendered.drops] == [("bad", None)]


def test_what_a_spec_cannot_say_is_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    agent = Agent(
        "r",
        "R.",
        "Body.\n",
        tools=("shell", 'shell("git *")'),
        reasoning="high",
        temperature=0.2,
    )
    rendered = plan_render(Profile(agents=(agent,)), adapter, root=tmp_path)
    assert {(d.name, d.field) for d in rendered.drops} == {
        ("r", "tools"),
        ("r", "reasoning"),
        ("r", "temperature"),
    }
    wider = Agent("w", "W.", "Body.\n", disallowed_tools=('shell("rm *")',))
    rendered = plan_render(Profile(agents=(wider,)), adapter, root=tmp_path)
    assert rendered.outputs == ()
    assert "it would widen" in str(rendered.drops)


def test_a_users_spec_imports_what_a_neutral_agent_can_say(adapter: Adapter, tmp_path: Path) -> None:
    shutil.copytree(NATIVE, tmp_path, dirs_exist_ok=True)
    found = import_native(adapter, root=tmp_path)
    [reviewer] = found.profile.agents
    assert reviewer == Agent(
        "reviewer",
        "Reviews a diff for bugs before it is committed.",
        "You review the staged diff.\n\nReport each bug with its file and line; say nothing about style.\n",
        tools=("read_file", "search", "shell"),
        disallowed_tools=("write_file",),
    )
    drops = dropped(found)
    assert set(drops) == {
        ("reviewer", "when_to_use"),
        ("scout", None),
        ("templated", None),
        ("elsewhere", None),
    }
    assert "not kimi's default agent" in drops[("scout", None)]
    assert "kimi template" in drops[("templated", None)]
    assert "outside" in drops[("elsewhere", None)]


def test_a_broken_main_spec_is_named(adapter: Adapter, tmp_path: Path) -> None:
    (tmp_path / MAIN).parent.mkdir(parents=True)
    (tmp_path / MAIN).write_text("version: 2\nagent: {}\n", encoding="utf-8")
    assert "not a version 1 agent spec" in str(import_native(adapter, root=tmp_path).dropped)
    (tmp_path / MAIN).write_text("agent: [\n", encoding="utf-8")
    assert "not YAML" in str(import_native(adapter, root=tmp_path).dropped)


_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r")
    | st.sampled_from(["\n", "\t"]),
    max_size=60,
)


@settings(max_examples=40, deadline=None)
@given(
    description=_TEXT.filter(lambda s: s.strip() == s and s != ""),
    body=_TEXT.map(lambda s: s + "\n"),
    tools=st.lists(
        st.sampled_from(["shell", "read_file", "write_file", "search", "glob", "todo"]), unique=True
    ),
    denied=st.lists(st.sampled_from(["kimi:SearchWeb", "web_fetch", "subagent"]), unique=True),
)
def test_agents_round_trip(
    adapter: Adapter, description: str, body: str, tools: list[str], denied: list[str]
) -> None:
    agent = Agent("a-1", description, body, tuple(tools), disallowed_tools=tuple(denied))
    if "endraw" in body:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(Profile(agents=(agent,)), adapter, root=root))
        assert rendered.drops == ()
        found = import_native(adapter, root=root)
        assert found.dropped == ()
        assert found.profile.agents == (agent,)
        again = plan_render(Profile(agents=found.profile.agents), adapter, root=root)
        assert [(o.path, o.text) for o in again.outputs] == [(o.path, o.text) for o in rendered.outputs]


def test_every_tool_path_is_one_of_the_default_agents() -> None:
    """The default agent's tool list (1.51.0 agents/default/agent.yaml) names each path once."""
    assert len(set(TOOL_PATHS.values())) == len(TOOL_PATHS) == 17
