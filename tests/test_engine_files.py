"""The generic engines: ``dir`` (skills, subagents, commands), ``rule-dir`` (path-scoped rules),
``mcp-json``, and how import accounts for every native file they read.

Fixtures are written here in the shapes the harnesses document (Claude's ``allowed-tools`` and
``!`cmd``` / ``@path``, Gemini's TOML commands, Cursor ``.mdc`` rules with ``alwaysApply``, Kiro
steering ``inclusion``, Copilot ``applyTo``, Kiro's ``autoApprove`` and Gemini's ``trust``).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Kind
from tackroom.profile.model import Agent, Command, McpServer, Profile, Rule, Skill
from tackroom.profile.render import import_native, plan_render, write


def adapter(name: str) -> Adapter:
    return resolve_builtins()[name]


def context(name: str, kind: Kind, path: Path, **changes: Any) -> Context:
    found = adapter(name)
    capability = getattr(found.spec.capabilities, kind)
    return Context(found, kind, capability.model_copy(update=changes), path)


def put(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def texts(ctx: Context, items: list[Any]) -> dict[str, str]:
    outs = engine(ctx.capability.render).render(ctx, items)
    return {str(o.path.relative_to(ctx.path)): str(o.text) for o in outs}


def dropped(ctx: Context) -> list[tuple[str, str, str | None]]:
    return [(d.kind, d.name, d.field) for d in ctx.drops]


# -- commands -------------------------------------------------------------------------------------------


def test_a_claude_command_renders_every_field_and_its_template(tmp_path: Path) -> None:
    ctx = context("claude-code", "commands", tmp_path)
    command = Command(
        "git:commit",
        "Commit staged work",
        "Status: !{git status --short}\nSee @{CONTRIBUTING.md}.\nMessage: $1 ($ARGUMENTS)\n",
        allowed_tools=('shell("git add:*")', "read_file"),
        model="sonnet",
        argument_hint="[message]",
    )
    assert texts(ctx, [command]) == {
        "git/commit.md": "---\n"
        "description: Commit staged work\n"
        "allowed-tools: Bash(git add:*), Read\n"
        "model: sonnet\n"
        "argument-hint: '[message]'\n"
        "---\n"
        "Status: !`git status --short`\nSee @CONTRIBUTING.md.\nMessage: $1 ($ARGUMENTS)\n"
    }
    assert ctx.drops == []
    write(plan_render(Profile(commands=(command,)), adapter("claude-code"), root=tmp_path))
    assert import_native(adapter("claude-code"), root=tmp_path).profile.commands == (command,)


def test_claude_syntax_reads_back_as_the_neutral_template(tmp_path: Path) -> None:
    put(
        tmp_path / ".claude/commands/review.md",
        "\ufeff---\r\nargument-hint: [pr] [mode]\r\nallowed-tools: Bash(gh pr view:*), Grep\r\n---\r\n"
        "PR !`gh pr view $1` and @src/app.py, mail me at a@b.org.\r\n",
    )
    [command] = import_native(adapter("claude-code"), root=tmp_path).profile.commands
    assert command == Command(
        "review",
        "",
        "PR !{gh pr view $1} and @{src/app.py}, mail me at a@b.org.\n",
        allowed_tools=('shell("gh pr view:*")', "search"),
        argument_hint="[pr] [mode]",
    )


def test_a_construct_the_harness_lacks_drops_the_command_by_name(tmp_path: Path) -> None:
    # gemini as it would be without file inclusion and namespaces: each construct it lacks drops.
    ctx = context("gemini", "commands", tmp_path, shell="!{{{cmd}}}", include=None, namespaces=False)
    ok = Command("ok", "fine", "Run !{date} with $ARGUMENTS", model="gemini-pro")
    rendered = engine("dir").render(
        ctx,
        [
            ok,
            Command("inc", "d", "Read @{a.md}"),
            Command("pos", "d", "First: $1"),
            Command("git:log", "d", "x"),
        ],
    )
    assert [o.path.name for o in rendered] == ["ok.toml"]
    assert rendered[0].data == {"description": "fine", "prompt": "Run !{date} with {{args}}"}
    assert dropped(ctx) == [
        ("command", "ok", "model"),
        ("command", "inc", None),
        ("command", "pos", None),
        ("command", "git:log", None),
    ]
    assert "includes a file" in ctx.drops[1].reason and "positional" in ctx.drops[2].reason


def test_gemini_toml_commands_read_back_with_namespaces(tmp_path: Path) -> None:
    ctx = context("gemini", "commands", tmp_path, shell="!{{{cmd}}}", include="@{{{path}}}", namespaces=True)
    put(tmp_path / "git/commit.toml", 'description = "c"\nprompt = "Diff: !{git diff} @{a.md} {{args}}"\n')
    put(tmp_path / "plain.toml", 'prompt = "p"\ncolour = "red"\n')
    put(tmp_path / "broken.toml", "prompt = \n")
    found = engine("dir").parse(ctx)
    assert found == [
        Command("git:commit", "c", "Diff: !{git diff} @{a.md} $ARGUMENTS"),
        Command("plain", "", "p"),
    ]
    assert dropped(ctx) == [("command", "broken", None), ("command", "plain", "colour")]
    assert "not TOML" in ctx.drops[0].reason and "broken.toml" in ctx.drops[0].reason


def test_command_files_that_cannot_be_profile_items_are_dropped_by_name(tmp_path: Path) -> None:
    put(tmp_path / ".claude/commands/My Command.md", "hello\n")
    put(tmp_path / ".claude/commands/bad.md", "---\ndescription: [unclosed\n@bad\n---\nbody\n")
    put(tmp_path / ".claude/commands/notes.txt", "not a command\n")
    put(tmp_path / ".claude/commands/good.md", "body\n")
    imported = import_native(adapter("claude-code"), root=tmp_path)
    assert imported.profile.commands == (Command("good", "", "body\n"),)
    reasons = {d.name: d.reason for d in imported.dropped}
    assert set(reasons) == {"My Command", "bad", "notes.txt"}
    assert "not a profile name" in reasons["My Command"]
    assert re.search(r"bad\.md:\d+: bad frontmatter", reasons["bad"])


def with_data(name: str, kind: str, **changes: Any) -> Adapter:
    """A built-in adapter with one capability's data changed (what another engineer's table may say)."""
    found = adapter(name)
    effective = copy.deepcopy(dict(found.effective))
    effective["capabilities"][kind] |= changes
    return dataclasses.replace(found, effective=effective)


def test_also_locations_and_nested_namespaces_are_read(tmp_path: Path) -> None:
    opencode = with_data("opencode", "commands", also=["{{workdir}}/.opencode/commands"], namespaces=True)
    put(tmp_path / ".opencode/command/deploy.md", "---\ndescription: d\n---\nGo\n")
    put(tmp_path / ".opencode/commands/git/commit.md", "Commit $ARGUMENTS\n")
    put(tmp_path / ".opencode/commands/deploy.md", "Second\n")
    imported = import_native(opencode, root=tmp_path, scope="project")
    assert imported.profile.commands == (
        Command("deploy", "d", "Go\n"),
        Command("git:commit", "", "Commit $ARGUMENTS\n"),
    )
    [twice] = imported.dropped
    assert twice.name == "deploy" and "kept the first" in twice.reason


# -- subagents ------------------------------------------------------------------------------------------


def test_an_agent_renders_tools_denials_and_model_by_the_adapters_keys(tmp_path: Path) -> None:
    ctx = context("claude-code", "subagents", tmp_path)
    agent = Agent(
        "reviewer",
        "Reviews",
        "Be careful.\n",
        tools=("read_file", "search", 'mcp("github/get_issue")'),
        model="opus",
        disallowed_tools=("shell",),
    )
    assert texts(ctx, [agent]) == {
        "reviewer.md": "---\nname: reviewer\ndescription: Reviews\ndisallowedTools: Bash\n"
        "tools: Read, Grep, mcp__github__get_issue\nmodel: opus\n---\nBe careful.\n"
    }
    write(plan_render(Profile(agents=(agent,)), adapter("claude-code"), root=tmp_path / "home"))
    assert import_native(adapter("claude-code"), root=tmp_path / "home").profile.agents == (agent,)


def test_a_denial_the_harness_cannot_say_drops_the_agent_never_widening(tmp_path: Path) -> None:
    ctx = context("claude-code", "subagents", tmp_path)
    denied = Agent("a", "d", "b", disallowed_tools=("gemini:run_shell_command",))
    no_key = context("qwen", "subagents", tmp_path)
    assert engine("dir").render(ctx, [denied]) == []
    assert engine("dir").render(no_key, [Agent("b", "d", "b", disallowed_tools=("shell",))]) == []
    assert dropped(ctx) == [("subagent", "a", None)] and dropped(no_key) == [("subagent", "b", None)]
    assert "widen" in ctx.drops[0].reason


def test_an_allowed_tool_the_harness_cannot_name_is_left_out_aloud(tmp_path: Path) -> None:
    ctx = context("claude-code", "subagents", tmp_path)
    some = Agent("some", "d", "b", tools=("read_file", "gemini:google_web_search"))
    none = Agent("none", "d", "b", tools=("gemini:google_web_search",))
    assert list(texts(ctx, [some, none])) == ["some.md"]
    assert dropped(ctx) == [("subagent", "some", "tools"), ("subagent", "none", None)]


def test_agent_import_is_lenient_and_reports_every_unknown_key(tmp_path: Path) -> None:
    agents = tmp_path / ".claude/agents"
    put(agents / "plain.md", "Just a prompt.\n")
    put(
        agents / "colored.md",
        "---\nname: colored\ndescription: d\ncolor: blue\ntools: Read, NotebookEdit\n---\nx\n",
    )
    put(
        agents / "denies.md",
        "---\ndescription: d\ndisallowedTools: [Bash, WebFetch]\nmodel: inherit\n---\ny\n",
    )
    imported = import_native(adapter("claude-code"), root=tmp_path)
    assert imported.profile.agents == (
        Agent("colored", "d", "x\n", ("read_file", "claude-code:NotebookEdit")),
        Agent("denies", "d", "y\n", model="claude-code:inherit", disallowed_tools=("shell", "web_fetch")),
        Agent("plain", "", "Just a prompt.\n"),
    )
    assert [(d.name, d.field) for d in imported.dropped] == [("colored", "color")]


# -- skills ---------------------------------------------------------------------------------------------


def test_skill_fields_round_trip_and_a_stray_file_is_reported(tmp_path: Path) -> None:
    skill = Skill(
        "pdf", "PDFs", "Use it.\n", (("ref/a.md", b"A"),), allowed_tools=("read_file",), model="haiku"
    )
    write(plan_render(Profile(skills=(skill,)), adapter("claude-code"), root=tmp_path))
    put(tmp_path / ".claude/skills/README.md", "not a skill")
    put(tmp_path / ".claude/skills/empty/notes.md", "no SKILL.md")
    imported = import_native(adapter("claude-code"), root=tmp_path)
    assert imported.profile.skills == (skill,)
    assert sorted(d.name for d in imported.dropped) == ["README.md", "empty"]


# -- rule-dir -------------------------------------------------------------------------------------------


def test_claude_scoped_rules_render_paths_and_read_always_on_files_as_rules(tmp_path: Path) -> None:
    scoped = Rule("api", "Validate input.\n", globs=("src/api/**/*.ts", "**/*.{ts,tsx}"))
    write(plan_render(Profile(rules=(scoped,)), adapter("claude-code"), root=tmp_path))
    rules = tmp_path / ".claude/rules"
    assert (rules / "api.md").read_text() == (
        "---\npaths:\n- src/api/**/*.ts\n- '**/*.{ts,tsx}'\n---\nValidate input.\n"
    )
    put(rules / "style.md", "# Style\nTabs.\n")
    put(rules / "frontend/react.md", "---\npaths: src/**/*.tsx\n---\nHooks.\n")
    imported = import_native(adapter("claude-code"), root=tmp_path)
    assert imported.profile.rules == (
        scoped,
        Rule("frontend-react", "Hooks.\n", globs=("src/**/*.tsx",)),
        Rule("style", "# Style\nTabs.\n"),
    )
    assert imported.dropped == ()


def cursor(tmp_path: Path) -> Context:
    return context(
        "claude-code",
        "scoped_rules",
        tmp_path,
        extension=".mdc",
        globs="globs",
        globs_format="csv",
        frontmatter={"alwaysApply": "false"},
        keys={"description": "description", "always": "alwaysApply=true"},
    )


def test_cursor_style_rules_classify_by_always_apply(tmp_path: Path) -> None:
    ctx = cursor(tmp_path)
    rule = Rule("ts", "Strict.\n", globs=("src/**/*.ts", "lib/**"), description="TypeScript")
    assert texts(ctx, [rule]) == {
        "ts.mdc": "---\nalwaysApply: false\ndescription: TypeScript\n"
        "globs: src/**/*.ts,lib/**\n---\nStrict.\n"
    }
    put(tmp_path / "ts.mdc", texts(ctx, [rule])["ts.mdc"])
    put(tmp_path / "always.mdc", "---\ndescription:\nglobs:\nalwaysApply: true\n---\nAlways.\n")
    put(tmp_path / "raw.mdc", "---\nglobs: **/*.py, tests/**\nalwaysApply: false\n---\nPy.\n")
    put(tmp_path / "asked.mdc", "---\ndescription: When asked\nalwaysApply: false\n---\nMaybe.\n")
    assert engine("rule-dir").parse(ctx) == [
        Rule("always", "Always.\n"),
        Rule("raw", "Py.\n", globs=("**/*.py", "tests/**")),
        rule,
    ]
    assert dropped(ctx) == [("rule", "asked", None)]


def test_kiro_steering_inclusion_modes(tmp_path: Path) -> None:
    root = tmp_path / ".kiro/steering"
    put(root / "product.md", "# Product\n")
    put(root / "always.md", "---\ninclusion: always\n---\nA\n")
    put(root / "ts.md", '---\ninclusion: fileMatch\nfileMatchPattern: "components/**/*.tsx"\n---\nT\n')
    put(root / "manual.md", "---\ninclusion: manual\n---\nM\n")
    put(root / "many.md", '---\ninclusion: fileMatch\nfileMatchPattern: ["**/*.ts", "**/*.tsx"]\n---\nM\n')
    put(root / "comma.md", '---\ninclusion: fileMatch\nfileMatchPattern: "a/**,b/**"\n---\nC\n')
    imported = import_native(adapter("kiro"), root=tmp_path)
    assert imported.profile.rules == (
        Rule("always", "A\n"),
        Rule("comma", "C\n", globs=("a/**,b/**",)),  # one pattern, as kiro-cli reads it
        Rule("many", "M\n", globs=("**/*.ts", "**/*.tsx")),
        Rule("product", "# Product\n"),
        Rule("ts", "T\n", globs=("components/**/*.tsx",)),
    )
    assert [(d.name, d.field) for d in imported.dropped] == [("manual", None)]
    rendered = plan_render(Profile(rules=imported.profile.rules[2:3]), adapter("kiro"), root=tmp_path / "k")
    [out] = rendered.outputs
    assert out.text == "---\ninclusion: fileMatch\nfileMatchPattern:\n- '**/*.ts'\n- '**/*.tsx'\n---\nM\n"


def test_copilot_instructions_apply_to(tmp_path: Path) -> None:
    rule = Rule("py", "Typed.\n", globs=("**/*.py",), description="Python")
    write(plan_render(Profile(rules=(rule,)), adapter("copilot"), root=tmp_path, scope="project"))
    path = tmp_path / ".github/instructions/py.instructions.md"
    assert path.read_text() == "---\ndescription: Python\napplyTo: '**/*.py'\n---\nTyped.\n"
    put(tmp_path / ".github/instructions/all.instructions.md", '---\napplyTo: "**"\n---\nAll.\n')
    imported = import_native(adapter("copilot"), root=tmp_path, scope="project")
    assert imported.profile.rules == (Rule("all", "All.\n"), rule)


def test_a_harness_without_scoped_rules_drops_them_by_name(tmp_path: Path) -> None:
    rendered = plan_render(
        Profile(rules=(Rule("x", "y\n", globs=("a/**",)),)), adapter("gemini"), root=tmp_path
    )
    assert [(d.kind, d.name) for d in rendered.drops] == [("path-scoped rule", "x")]


# -- mcp-json -------------------------------------------------------------------------------------------


def test_claude_keeps_sse_as_sse(tmp_path: Path) -> None:
    ctx = context("claude-code", "mcp", tmp_path / ".mcp.json")
    sse = McpServer("events", url="https://x.test/sse", transport="sse", timeout=5.0)
    [out] = engine("mcp-json").render(ctx, [sse])
    assert out.data == {"mcpServers": {"events": {"type": "sse", "url": "https://x.test/sse"}}}
    assert dropped(ctx) == [("MCP server", "events", "timeout")]


GEMINI_KEYS = {
    "type": "",
    "url.http": "httpUrl",
    "timeout": "timeout:ms",
    "auto_approve.all": "trust",
    "cwd": "cwd",
}


def test_gemini_style_keys_spell_transport_trust_and_milliseconds(tmp_path: Path) -> None:
    ctx = context("kiro", "mcp", tmp_path / "s.json", keys=GEMINI_KEYS)
    servers = [
        McpServer("local", command="uvx", args=("tool",), cwd="/srv", timeout=1.5, auto_approve=("*",)),
        McpServer("events", url="https://x.test/sse", transport="sse"),
        McpServer("stream", url="https://x.test/mcp", auto_approve=("one",)),
    ]
    [out] = engine("mcp-json").render(ctx, servers)
    assert out.data == {
        "mcpServers": {
            "local": {"command": "uvx", "args": ["tool"], "cwd": "/srv", "timeout": 1500, "trust": True},
            "events": {"url": "https://x.test/sse"},
            "stream": {"httpUrl": "https://x.test/mcp"},
        }
    }
    assert dropped(ctx) == [("MCP server", "stream", "auto_approve")]
    put(ctx.path, json.dumps(dict(out.data)))
    read = context("kiro", "mcp", ctx.path, keys=GEMINI_KEYS)
    assert engine("mcp-json").parse(read) == [
        servers[1],
        servers[0],
        McpServer("stream", url="https://x.test/mcp"),
    ]


def test_kiro_reads_auto_approve_and_disabled_and_reports_the_rest(tmp_path: Path) -> None:
    path = put(
        tmp_path / "mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "fetch": {
                        "command": "uvx",
                        "args": ["mcp-server-fetch"],
                        "disabled": True,
                        "autoApprove": ["fetch"],
                        "disabledTools": ["x"],
                    },
                    "broken": {"command": 5},
                    "nothing": {"env": {}},
                }
            }
        ),
    )
    ctx = context("kiro", "mcp", path, keys={"disabled": "disabled", "auto_approve": "autoApprove"})
    assert engine("mcp-json").parse(ctx) == [
        McpServer("fetch", command="uvx", args=("mcp-server-fetch",), auto_approve=("fetch",), disabled=True)
    ]
    assert dropped(ctx) == [
        ("MCP server", "broken", None),
        ("MCP server", "fetch", "disabledTools"),
        ("MCP server", "nothing", None),
    ]


def test_an_inline_secret_is_dropped_by_name_without_its_value(tmp_path: Path) -> None:
    put(
        tmp_path / ".claude/.claude.json",
        json.dumps({"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_" + "a" * 36}}}}),
    )
    imported = import_native(adapter("claude-code"), root=tmp_path)
    assert imported.profile.mcp == ()
    [drop] = imported.dropped
    assert drop.name == "gh" and "inline secret" in drop.reason and "ghp_" not in drop.reason


# -- the import CLI -------------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    put(home / ".claude/agents/good.md", "---\ndescription: d\ncolor: red\n---\nGood.\n")
    put(home / ".claude/commands/Bad Name.md", "x\n")
    return home


def test_import_prints_a_table_and_each_drop(home: Path, tmp_path: Path) -> None:
    into = tmp_path / "profile"
    done = run_cli("profile", "import", "claude-code", "--from", str(home), "--into", str(into))
    assert done.returncode == 0, done.stderr
    assert "subagent" in done.stdout and "command" in done.stdout
    assert "dropped color of subagent 'good'" in done.stdout
    assert "dropped command 'Bad Name'" in done.stdout
    assert (into / "agents/good.md").is_file()


def test_import_json_and_strict(home: Path, tmp_path: Path) -> None:
    into = tmp_path / "strict"
    strict = run_cli("profile", "import", "claude-code", "--from", str(home), "--into", str(into), "--strict")
    assert strict.returncode == 1 and "--strict" in strict.stderr and "Bad Name" in strict.stderr
    assert not into.exists()
    done = run_cli("profile", "import", "claude-code", "--from", str(home), "--into", str(into), "--json")
    data = json.loads(done.stdout)
    assert data["counts"]["subagent"] == {
        "found": 1,
        "imported": 1,
        "passthrough": 0,
        "dropped": 0,
        "fields": 1,
    }
    assert data["counts"]["command"]["dropped"] == 1
    assert {
        "kind": "subagent",
        "name": "good",
        "reason": data["dropped"][1]["reason"],
        "field": "color",
    } in data["dropped"]


def test_a_denial_that_does_not_read_drops_the_agent(tmp_path: Path) -> None:
    agents = tmp_path / ".claude/agents"
    put(agents / "odd.md", "---\ndescription: d\ndisallowedTools: {Bash: true}\n---\nx\n")
    imported = import_native(adapter("claude-code"), root=tmp_path)
    assert imported.profile.agents == ()
    assert [(d.name, d.field) for d in imported.dropped][-1] == ("odd", None)
    assert "widen" in imported.dropped[-1].reason


def test_yaml_shapes_the_harnesses_read_as_text(tmp_path: Path) -> None:
    commands = tmp_path / ".claude/commands"
    put(commands / "fix.md", "---\nargument-hint: [issue]\ndescription: 2024\n---\nFix $ARGUMENTS\n")
    put(commands / "odd.md", "---\ndescription: {a: 1}\n---\nOdd\n")
    imported = import_native(adapter("claude-code"), root=tmp_path)
    assert imported.profile.commands == (
        Command("fix", "2024", "Fix $ARGUMENTS\n", argument_hint="[issue]"),
        Command("odd", "", "Odd\n"),
    )
    assert [(d.name, d.field) for d in imported.dropped] == [("odd", "description")]


def test_rule_dir_can_serve_always_on_rules_beside_scoped_ones(tmp_path: Path) -> None:
    both = with_data(
        "claude-code",
        "rules",
        path="${CLAUDE_CONFIG_DIR:-~/.claude}/rules",
        project="{{workdir}}/.claude/rules",
        render="rule-dir",
        globs="paths",
    )
    profile = Profile(rules=(Rule("always", "A\n"), Rule("scoped", "S\n", globs=("src/**",))))
    rendered = write(plan_render(profile, both, root=tmp_path))
    assert sorted(p.name for p in (tmp_path / ".claude/rules").iterdir()) == ["always.md", "scoped.md"]
    assert rendered.drops == ()
    imported = import_native(both, root=tmp_path)
    assert imported.profile.rules == profile.rules and imported.dropped == ()


def test_globs_a_harness_reads_as_always_on_are_dropped_not_changed(tmp_path: Path) -> None:
    ctx = context("copilot", "scoped_rules", tmp_path)
    assert engine("rule-dir").render(ctx, [Rule("all", "x\n", globs=("**",))]) == []
    assert dropped(ctx) == [("path-scoped rule", "all", None)]


def test_an_agent_whose_tool_list_the_adapter_cannot_read_is_not_imported(tmp_path: Path) -> None:
    """Qwen's adapter writes no subagent tools: an agent limited to two tools must not come in unlimited."""
    put(
        tmp_path / "reviewer.md",
        "---\nname: reviewer\ndescription: d\ntools:\n  - read_file\n  - grep\n---\nBody\n",
    )
    put(tmp_path / "helper.md", "---\nname: helper\ndescription: d\n---\nBody\n")
    ctx = context("qwen", "subagents", tmp_path)
    assert ctx.capability.tools is None
    assert [a.name for a in engine("dir").parse(ctx)] == ["helper"]
    [drop] = ctx.drops
    assert (drop.name, drop.field) == ("reviewer", None) and "widen" in drop.reason


def test_claude_subagents_in_team_folders_are_read_by_their_own_names(tmp_path: Path) -> None:
    agents = tmp_path / ".claude" / "agents"
    put(agents / "lead.md", "---\nname: lead\ndescription: leads\n---\nLead.\n")
    put(agents / "data" / "etl.md", "---\nname: pipeline-keeper\ndescription: runs ETL\n---\nETL.\n")
    put(agents / "data" / "lead.md", "---\nname: lead\ndescription: a second lead\n---\nAgain.\n")
    put(agents / "web" / "deep" / "css.md", "---\ndescription: styles\n---\nCSS.\n")
    found = import_native(adapter("claude-code"), root=tmp_path, scope="project")
    assert {a.name: a.body for a in found.profile.agents} == {
        "lead": "Lead.\n",  # the folder's own file first, as the harness finds it
        "pipeline-keeper": "ETL.\n",
        "css": "CSS.\n",
    }
    assert [(d.kind, d.name) for d in found.dropped] == [("subagent", "lead")]
    again = tmp_path / "again"
    write(plan_render(found.profile, adapter("claude-code"), root=again, scope="project"))
    assert import_native(adapter("claude-code"), root=again, scope="project").profile == found.profile


def test_a_harness_that_reads_no_team_folders_names_each_one(tmp_path: Path) -> None:
    put(tmp_path / ".qwen" / "agents" / "team" / "a.md", "---\nname: a\ndescription: d\n---\nA.\n")
    found = import_native(adapter("qwen"), root=tmp_path, scope="project")
    assert not found.profile.agents
    assert [(d.kind, d.name) for d in found.dropped] == [("subagent", "team")]
