"""Import is total and never widens, for native files nobody wrote with tackroom in mind.

Hypothesis lays out native files at each adapter's own locations: random frontmatter keys and
values (YAML oddities included), CRLF and byte-order marks, nested directories, names that are
not profile names, TOML that is not what tackroom reads. For every adapter:

- import never raises, and what it read always writes as a profile that loads;
- every file laid out is accounted for: imported, or dropped by name (never silently skipped);
- rendering what was imported for the same harness and importing it again gives the same items;
- no widening: a subagent's allowed tools after import and render (for any harness) are a part of
  what the native file allowed, and its denied tools are still denied.
"""

from __future__ import annotations

import json
import string
import tempfile
from pathlib import Path
from typing import Any

import pytest
import tomli_w
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.engines import engines
from tackroom.profile.load import load_profile
from tackroom.profile.model import Agent, Profile
from tackroom.profile.render import _target, import_native, plan_render, write
from tackroom.profile.write import write_loadable
from tackroom.vocabulary import NEUTRAL_TOOLS

ADAPTERS = sorted(
    name
    for name, adapter in resolve_builtins().items()
    if all(c is None or c.render in engines() for _, c in adapter.spec.capabilities)
)
FILE_KINDS = ("commands", "subagents", "skills", "scoped_rules")

NAMES = st.sampled_from(
    ["ok", "review", "My Command", "UPPER", "a.b", "-dash", "名前", "x" * 130, "two words", "git"]
) | st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True)
KEYS = st.sampled_from(
    [
        "name",
        "description",
        "tools",
        "disallowedTools",
        "model",
        "allowed-tools",
        "argument-hint",
        "paths",
        "globs",
        "applyTo",
        "alwaysApply",
        "inclusion",
        "fileMatchPattern",
        "color",
        "mode",
        "temperature",
    ]
) | st.text(alphabet=string.ascii_letters + "-_", min_size=1, max_size=8)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(
        ["sonnet", "inherit", "Read, Bash(git:*)", "[a] [b]", "**/*.py", "yes", "always", "fileMatch", "x: y"]
    ),
    st.text(max_size=12),
)
VALUES = SCALARS | st.lists(SCALARS, max_size=3) | st.dictionaries(st.text(max_size=4), SCALARS, max_size=2)
BODY = st.text(max_size=40) | st.sampled_from(
    ["$ARGUMENTS $1", "!`ls` @a.md", "!{ls} @{a.md} {{args}}", "---"]
)


@st.composite
def markdown(draw: st.DrawFn) -> bytes:
    head = draw(st.dictionaries(KEYS, VALUES, max_size=4))
    body = draw(BODY)
    style = draw(st.sampled_from(["yaml", "lines", "none", "unclosed"]))
    if style == "yaml" and head:
        text = "---\n" + yaml.safe_dump(head, allow_unicode=True) + "---\n" + body
    elif style == "lines":
        text = "---\n" + "".join(f"{k}: {v}\n" for k, v in head.items()) + "---\n" + body
    elif style == "unclosed":
        text = "---\nname: x\n" + body
    else:
        text = body
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    raw = text.encode("utf-8", "surrogatepass")
    return raw if draw(st.integers(0, 9)) else raw + b"\xff"


@st.composite
def toml_file(draw: st.DrawFn) -> bytes:
    data = draw(
        st.dictionaries(
            st.sampled_from(["name", "description", "prompt", "developer_instructions", "model", "x"]),
            st.text(max_size=10) | st.integers() | st.lists(st.text(max_size=3), max_size=2),
            max_size=4,
        )
    )
    return tomli_w.dumps(data).encode() if draw(st.integers(0, 5)) else b"prompt = \n"


@st.composite
def layout(draw: st.DrawFn, adapter: Adapter, root: Path) -> dict[Path, bytes]:
    """Native files at the adapter's own item locations (home scope)."""
    files: dict[Path, bytes] = {}
    caps = adapter.spec.capabilities
    for kind in FILE_KINDS:
        cap = getattr(caps, kind)
        if cap is None or cap.render not in ("dir", "rule-dir") or cap.path is None:
            continue  # (no home location: Cursor's rules are the project's only)
        base = _target(cap, "home", root, root, adapter)
        assert base is not None
        ext = cap.extension or (".toml" if cap.format == "toml" else ".md")
        for _ in range(draw(st.integers(0, 3))):
            name = draw(NAMES)
            content = draw(toml_file() if ext == ".toml" else markdown())
            nested = draw(st.sampled_from(["", "", "sub/", "a/b/"]))
            if kind == "skills":
                path = base / name / "SKILL.md"
                if draw(st.booleans()):
                    files[base / name / "ref" / "notes.txt"] = b"notes"
            else:
                path = base / f"{nested}{name}{draw(st.sampled_from([ext, ext, '.txt']))}"
            files[path] = content
    mcp = caps.mcp
    if mcp is not None and mcp.render == "mcp-json" and draw(st.integers(0, 3)):
        path = _target(mcp, "home", root, root, adapter)
        assert path is not None
        files[path], _ = draw(mcp_file())
    return files


ENTRY_VALUES = st.one_of(
    st.sampled_from(
        ["npx", "uvx", "https://mcp.example.test/mcp", "sse", "http", "stdio", "local", "${TOKEN}"]
    ),
    st.lists(st.sampled_from(["-y", "server", "${X}"]), max_size=2),
    st.dictionaries(
        st.sampled_from(["LOG", "API_KEY", "Authorization"]),
        st.sampled_from(["1", "${K}", "sk-12345678901234567890"]),
        max_size=2,
    ),
    st.booleans(),
    st.integers(-1, 90000),
    st.none(),
)
ENTRY_KEYS = st.sampled_from(
    [
        "command",
        "args",
        "env",
        "url",
        "httpUrl",
        "type",
        "headers",
        "timeout",
        "disabled",
        "autoApprove",
        "trust",
        "cwd",
        "x",
    ]
)


@st.composite
def mcp_file(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    servers = draw(
        st.dictionaries(
            NAMES,
            st.builds(
                lambda base, extra: base | extra,
                st.sampled_from(
                    [
                        {"command": "npx", "args": ["-y", "server"]},
                        {"type": "sse", "url": "https://mcp.example.test/sse"},
                        {"url": "https://mcp.example.test/mcp", "headers": {"Authorization": "Bearer ${T}"}},
                    ]
                ),
                st.dictionaries(
                    ENTRY_KEYS.filter(lambda k: k not in ("command", "url", "type")), ENTRY_VALUES, max_size=2
                ),
            ),
            max_size=3,
        )
    )
    return json.dumps({"mcpServers": servers, "other": 1}).encode(), list(servers)


def lay_out(files: dict[Path, bytes]) -> None:
    for path, data in files.items():
        if any(parent in files for parent in path.parents):
            continue  # a file where a directory is needed: the draw collided, keep the first
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.parent.is_dir():
            continue
        path.write_bytes(data)


def frontmatter_name(path: Path) -> str:
    from tackroom.profile import frontmatter

    try:
        head, _ = frontmatter.read(path.read_bytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return ""
    return str(head.get("name", ""))


def names_in(profile: Profile) -> set[str]:
    found = set()
    for attr in ("rules", "skills", "agents", "commands"):
        for item in getattr(profile, attr):
            found |= {item.name, *item.name.split(":")}
    return found


@pytest.mark.parametrize("name", ADAPTERS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_import_of_any_native_files_is_total_and_loads(name: str, data: st.DataObject) -> None:
    adapter = resolve_builtins()[name]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "home"
        files = data.draw(layout(adapter, root))
        lay_out(files)
        imported = import_native(adapter, root=root)

        # Written as a profile, it loads (write_loadable proves it before writing).
        into = Path(tmp) / "profile"
        write_loadable(imported.profile, into)
        if into.exists():
            assert load_profile([into]) == imported.profile

        # Every file laid out is accounted for: an item, or a drop naming it or its file.
        reasons = " ".join(d.reason for d in imported.dropped)
        dropped = {d.name for d in imported.dropped}
        items = names_in(imported.profile)
        servers = {s.name for s in imported.profile.mcp}
        for path in files:
            if path.suffix == ".json":
                for server in json.loads(path.read_bytes())["mcpServers"]:
                    assert server in servers or server[:80] in dropped, server
                continue
            if not path.is_file() or path.name == "notes.txt":
                continue
            stem = path.parent.name if path.name == "SKILL.md" else path.name.split(".")[0]
            said = {stem, path.name, path.stem, frontmatter_name(path)}
            assert (
                str(path) in reasons
                or str(path.parent) in reasons
                or bool(said & (dropped | items))
                or any(i.endswith(f"-{s}") for s in said if s for i in items)  # in a subdirectory: sub-stem
                or any(p.name in dropped for p in path.parents)
            ), path

        # What was imported renders for the same harness and reads back the same.
        again = Path(tmp) / "again"
        rendered = write(plan_render(imported.profile, adapter, root=again))
        assert [d for d in rendered.drops if d.field is None] == [], rendered.drops
        assert import_native(adapter, root=again).profile == imported.profile


# -- never widen ----------------------------------------------------------------------------------------

CLAUDE_TOOLS = st.sampled_from(
    [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "Grep",
        "Glob",
        "WebFetch",
        "NotebookEdit",
        "Task",
        "mcp__gh__get",
        "Bash(git:*)",
    ]
)


@settings(max_examples=40, deadline=None)
@given(
    allowed=st.lists(CLAUDE_TOOLS, max_size=4, unique=True),
    denied=st.lists(CLAUDE_TOOLS, max_size=3, unique=True),
    csv=st.booleans(),
)
def test_no_harness_widens_what_a_native_agent_may_use(
    allowed: list[str], denied: list[str], csv: bool
) -> None:
    head: dict[str, Any] = {"name": "agent", "description": "d"}
    if allowed:
        head["tools"] = ", ".join(allowed) if csv else allowed
    if denied:
        head["disallowedTools"] = ", ".join(denied) if csv else denied
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "claude"
        path = home / ".claude/agents/agent.md"
        path.parent.mkdir(parents=True)
        path.write_text("---\n" + yaml.safe_dump(head) + "---\nWork.\n", encoding="utf-8")
        [before] = import_native(resolve_builtins()["claude-code"], root=home).profile.agents
        assert len(before.tools) == len(allowed) and len(before.disallowed_tools) == len(denied)
        for name in ADAPTERS:
            adapter = resolve_builtins()[name]
            root = Path(tmp) / name
            write(plan_render(Profile(agents=(before,)), adapter, root=root))
            after = import_native(adapter, root=root).profile.agents
            if not after:
                continue  # dropped by name: nothing allowed at all
            [agent] = after
            assert_not_wider(before, agent, name)


def usable(agent: Agent, universe: set[str]) -> set[str]:
    """What the agent may really use: its allow-list (or every tool), less what it is denied.

    A harness's own wildcard denial (``opencode:*``) denies everything.
    """
    if any(ref.endswith(":*") for ref in agent.disallowed_tools):
        return set()
    return (set(agent.tools) if agent.tools else set(universe)) - set(agent.disallowed_tools)


def assert_not_wider(before: Agent, after: Agent, harness: str) -> None:
    universe = {*NEUTRAL_TOOLS, *before.tools, *before.disallowed_tools}
    universe |= {*after.tools, *after.disallowed_tools}
    wider = usable(after, universe) - usable(before, universe)
    assert not wider, f"{harness}: the agent may now use {sorted(wider)}"


def test_a_toml_prompt_with_a_carriage_return_loads_back_as_it_was_imported(tmp_path: Path) -> None:
    """A lone CR (or CRLF, or a BOM) in a TOML command's prompt is imported as a profile file reads
    back: LF line ends, no BOM (found by the test above, as `prompt = "\\r"`)."""
    adapter = resolve_builtins()["gemini"]
    root = tmp_path / "home"
    lay_out({root / ".gemini/commands/ok.toml": b'prompt = "\\ufeffa\\r\\nb\\rc"\n'})
    imported = import_native(adapter, root=root)
    into = tmp_path / "profile"
    write_loadable(imported.profile, into)
    assert load_profile([into]) == imported.profile
    assert [c.body for c in imported.profile.commands] == ["a\nb\nc"]
