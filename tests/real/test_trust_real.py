"""A stranger's repository runs nothing through the harness's own config loading, for real.

Headless modes skip the harnesses' own trust prompts, so tackroom is the only
guard. Each case below is a freshly cloned repository that plants, where its
harness reads project config, every kind of thing that runs code: hooks, MCP
servers, plugins. Each leaves a marker file when it runs. Untrusted, the
harness must run its prompt with none of them; after ``tackroom trust``, all
of them run, so the test would see a flag that kept the harness from too much.

gemini 0.61.0 refuses a folder it does not trust (exit 55) unless it is given
``--skip-trust``: tackroom withholds the flag in an untrusted project, so the
run fails and says why; once trusted it runs and its repository's server starts.
letta runs a project's tool hooks with no switch to stop it, so it is refused until
trusted; kimi reads no hook, server or plugin from a project at all, which the
case proves by planting them where a user would look for them.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from realkit import AT_VERSIONS

from clikit import run_cli
from tackroom.adapters.resolve import Adapter
from tackroom.errors import UntrustedProjectError
from tackroom.mock import MockServer, Script, Turn
from tackroom.run.result import Result
from tackroom.run.runner import run
from tackroom.trust import trust

pytestmark = pytest.mark.real


def _mcp(marker: str) -> dict[str, object]:
    """A stdio MCP server entry that leaves ``marker`` and exits (a harness that waits for it to
    answer would wait until its timeout)."""
    return {"command": "sh", "args": ["-c", f"touch {marker}"]}


def _servers(marker: Path) -> str:
    """An ``mcpServers`` file (``.mcp.json`` and its kin) with one server that leaves ``marker``."""
    return json.dumps({"mcpServers": {"planted": _mcp(str(marker))}})


def _hook(marker: Path, **matcher: str) -> dict[str, object]:
    """One hook group in Claude Code's shape (qwen, letta, droid and openhands share it)."""
    return {**matcher, "hooks": [{"type": "command", "command": f"touch {marker}"}]}


def _module(marker: Path, export: str) -> str:
    """A JavaScript or TypeScript module that leaves ``marker`` as soon as it is imported."""
    touch = f"writeFileSync({json.dumps(str(marker))}, '');"
    return f'import {{ writeFileSync }} from "node:fs";\n{touch}\n{export}\n'


def _claude_hooks(markers: Path) -> dict[str, object]:
    return {
        "SessionStart": [_hook(markers / "session-start", matcher="startup")],
        "UserPromptSubmit": [_hook(markers / "prompt-submit")],
    }


@dataclass(frozen=True)
class Planted:
    """What a repository plants for one harness: files by relative path, and the markers they leave."""

    files: dict[str, str]
    markers: tuple[str, ...]
    refused: bool = False
    """The harness refuses an untrusted folder itself once tackroom withholds its trust flag."""
    refused_by_tackroom: bool = False
    """No flag keeps the harness from this config: tackroom does not start it in an untrusted project."""
    options: dict[str, object] = field(default_factory=dict)
    text: tuple[str, ...] = field(default=())
    """Markers of project text (rules) that must reach the model whether trusted or not."""
    tool_call: bool = False
    """The planted hooks fire around a tool call only: the mock has the harness run a shell command."""
    reads_nothing: bool = False
    """The harness reads none of it, trusted or not: nothing may run, and nothing is withheld."""
    prompt: str = "hello"


def _planted(name: str, markers: Path, installs: Path) -> Planted:
    if name == "claude-code":
        settings = {"hooks": _claude_hooks(markers)}
        local = {"hooks": {"Stop": [_hook(markers / "local")]}}
        return Planted(
            {
                ".claude/settings.json": json.dumps(settings),
                ".claude/settings.local.json": json.dumps(local),
                ".mcp.json": _servers(markers / "mcp"),
                "CLAUDE.md": "Project rule: RULE-MARKER-7Q.\n",
            },
            ("session-start", "prompt-submit", "local", "mcp"),
            text=("RULE-MARKER-7Q",),
        )
    if name in ("opencode", "opencode-acp", "kilo"):
        config = "kilo.json" if name == "kilo" else "opencode.json"
        plugins = ".kilo/plugin" if name == "kilo" else ".opencode/plugin"
        server = {"type": "local", "command": ["sh", "-c", f"touch {markers / 'mcp'}"], "enabled": True}
        plugin = _module(markers / "plugin", "export const Planted = async () => ({});")
        files = {config: json.dumps({"mcp": {"planted": server}}), f"{plugins}/planted.js": plugin}
        # Kilo keeps the project from it with a switch; opencode has none for plugins, so is refused.
        return Planted(files, ("mcp", "plugin"), refused_by_tackroom=name != "kilo")
    if name in ("qwen", "qwen-acp"):
        hooks = {event: [_hook(markers / event)] for event in ("UserPromptSubmit", "Stop")}
        settings = {"hooks": hooks}
        if name == "qwen":  # qwen starts a project's MCP servers under --yolo only
            settings["mcpServers"] = {"planted": _mcp(str(markers / "mcp"))}
        markers_left = ("Stop", "UserPromptSubmit", *(("mcp",) if name == "qwen" else ()))
        return Planted(
            {".qwen/settings.json": json.dumps(settings)},
            markers_left,
            refused_by_tackroom=True,
            options={"auto_accept": True} if name == "qwen" else {},
        )
    if name == "gemini":
        settings = {"mcpServers": {"planted": _mcp(str(markers / "mcp"))}}
        return Planted({".gemini/settings.json": json.dumps(settings)}, ("mcp",), refused=True)
    if name == "letta":  # headless, only the tool hooks fire
        hooks = {event: [_hook(markers / event, matcher="*")] for event in ("PreToolUse", "PostToolUse")}
        local = {"hooks": {"PreToolUse": [_hook(markers / "local", matcher="*")]}}
        return Planted(
            {
                ".letta/settings.json": json.dumps({"hooks": hooks}),
                ".letta/settings.local.json": json.dumps(local),
            },
            ("PostToolUse", "PreToolUse", "local"),
            refused_by_tackroom=True,
            tool_call=True,
        )
    if name == "kimi":  # config, hooks, MCP servers and plugins come from its share dir only
        hooks = "".join(
            f'[[hooks]]\nevent = "{event}"\ncommand = "touch {markers / event}"\n'
            for event in ("SessionStart", "UserPromptSubmit", "PreToolUse")
        )
        servers = _servers(markers / "mcp")
        return Planted(
            {".kimi/config.toml": hooks, "kimi.toml": hooks, ".mcp.json": servers, ".kimi/mcp.json": servers},
            (),
            tool_call=True,
            reads_nothing=True,
        )
    if name == "gptme":  # it starts a gptme.toml's MCP servers and imports its plugins
        touch = f"import pathlib\npathlib.Path({json.dumps(str(markers / 'plugin'))}).touch()\n"
        config = (
            '[plugins]\npaths = ["plugins"]\n[mcp]\nenabled = true\n[[mcp.servers]]\nname = "planted"\n'
            f'command = "sh"\nargs = ["-c", "touch {markers / "mcp"}; sleep 5"]\n'
        )
        return Planted(
            {"gptme.toml": config, "plugins/planted/__init__.py": touch, "plugins/planted/tools/tool.py": ""},
            ("mcp", "plugin"),
            refused_by_tackroom=True,
        )
    if name == "openhands":  # its hooks.json, and a .env whose variables reach its shell
        hook = {"session_start": [_hook(markers / "hook", matcher="*")]}
        return Planted(
            {
                ".openhands/hooks.json": json.dumps(hook),
                ".env": f"PROMPT_COMMAND=touch {markers / 'dotenv'}\n",
            },
            ("dotenv", "hook"),
            refused_by_tackroom=True,
        )
    if name == "mini-swe-agent":  # tackroom's `-c mini.yaml` finds the repository's first
        [builtin] = installs.glob("mini-swe-agent/*/lib/python*/site-packages/minisweagent/config/mini.yaml")
        template = "{{ cycler.__init__.__globals__.os.system('touch %s') }}" % (markers / "template")
        config = builtin.read_text(encoding="utf-8").replace(
            "system_template: |\n", f"system_template: |\n    {template}\n", 1
        )
        return Planted({"mini.yaml": config}, ("template",), refused_by_tackroom=True)
    if name == "claude-code-acp":  # the SDK loads every setting source; only ACP's _meta could stop it
        claude = _planted("claude-code", markers, installs)
        files = {k: v for k, v in claude.files.items() if k != "CLAUDE.md"}
        return Planted(files, claude.markers, refused_by_tackroom=True)
    if name in ("pi", "omp"):  # TypeScript run in-process at start: an extension, a custom tool
        module = _module(markers / "module", "export default function () {}")
        if name == "pi":
            return Planted({".pi/extensions/planted.ts": module}, ("module",), refused_by_tackroom=True)
        files = {".omp/tools/planted.ts": module, ".omp/mcp.json": _servers(markers / "mcp")}
        return Planted(files, ("mcp", "module"), refused_by_tackroom=True)
    if name == "aider":  # a config file's `load` runs its /run lines before the message
        files = {".aider.conf.yml": "load: .aider.load\n", ".aider.load": f"/run touch {markers / 'conf'}\n"}
        return Planted(files, ("conf",), refused_by_tackroom=True)
    if name == "droid":
        hooks = {"SessionStart": [_hook(markers / "hook")]}
        server = {"type": "stdio", **_mcp(str(markers / "mcp"))}
        files = {
            ".factory/hooks.json": json.dumps(hooks),
            ".factory/mcp.json": json.dumps({"mcpServers": {"m": server}}),
        }
        return Planted(files, ("hook", "mcp"), refused_by_tackroom=True)
    if name == "cline":  # any file named after an event is a hook; plugins are imported at start
        plugin = _module(
            markers / "plugin", 'export default { name: "planted", manifest: { capabilities: ["hooks"] } };'
        )
        files = {
            ".clinerules/hooks/TaskStart.sh": f"#!/bin/sh\ncat >/dev/null\ntouch {markers / 'hook'}\n",
            ".cline/plugins/planted.js": plugin,
        }
        return Planted(files, ("hook", "plugin"), refused_by_tackroom=True, prompt="say hello please")
    if name == "grok":
        settings = {"mcpServers": {"planted": {"name": "planted", **_mcp(str(markers / "mcp"))}}}
        return Planted({".grok/settings.json": json.dumps(settings)}, ("mcp",), refused_by_tackroom=True)
    if name == "copilot":  # its own trust gate holds hooks and servers back; the variables let them in
        hooks = {
            "version": 1,
            "hooks": {"sessionStart": [{"type": "command", "bash": f"touch {markers / 'hook'}"}]},
        }
        server = {"type": "local", **_mcp(str(markers / "mcp")), "tools": ["*"]}
        files = {
            ".github/hooks/planted.json": json.dumps(hooks),
            ".mcp.json": json.dumps({"mcpServers": {"m": server}}),
        }
        return Planted(files, ("hook", "mcp"))
    if name in ("codex", "codex-acp"):  # codex loads .codex only in a folder its config.toml trusts
        config = (
            f'[mcp_servers.planted]\ncommand = "sh"\nargs = ["-c", "touch {markers / "mcp"}"]\n\n'
            "[[hooks.UserPromptSubmit]]\n[[hooks.UserPromptSubmit.hooks]]\n"
            f'type = "command"\ncommand = "touch {markers / "toml-hook"}"\n'
        )
        hooks = {"hooks": {"SessionStart": [_hook(markers / "session-start")]}}
        files = {".codex/config.toml": config, ".codex/hooks.json": json.dumps(hooks)}
        # codex-acp has no hook-trust bypass: a project's hooks need codex's own per-hook trust.
        return Planted(files, ("mcp",) if name == "codex-acp" else ("mcp", "session-start", "toml-hook"))
    raise KeyError(name)


PLANTING = {
    *("aider", "claude-code", "claude-code-acp", "cline", "codex", "codex-acp", "copilot", "droid"),
    *("gemini", "gptme"),
    *("grok", "kilo", "kimi", "letta", "mini-swe-agent", "omp", "opencode", "opencode-acp"),
    *("openhands", "pi", "qwen", "qwen-acp"),
}
CASES = [param for param in AT_VERSIONS if param.partition("@")[0] in PLANTING]


@pytest.fixture
def environ(harness_data: Path, tmp_path: Path) -> dict[str, str]:
    """Trust records go to this test's own data dir; the shared harness installs are only read."""
    data = tmp_path / "data" / "tackroom"
    data.mkdir(parents=True)
    (data / "harnesses").symlink_to(harness_data / "tackroom" / "harnesses")
    return {**os.environ, "XDG_DATA_HOME": str(data.parent)}


def _installs(environ: dict[str, str]) -> Path:
    return Path(environ["XDG_DATA_HOME"]) / "tackroom" / "harnesses"


def _repository(tmp_path: Path, planted: Planted) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for relative, content in planted.files.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(content, encoding="utf-8")
    return repo


def _run(harness: Adapter, repo: Path, environ: dict[str, str], tmp_path: Path, planted: Planted) -> Result:
    return run(
        harness,
        planted.prompt,
        options=planted.options,
        workdir=repo,
        **_mock(planted),
        mock_log=tmp_path / f"mock-{len(list(tmp_path.glob('mock-*')))}.jsonl",
        runs_dir=tmp_path / "runs",
        environ=environ,
        harness_version=harness.version,
        timeout_s=120,
    )


def _mock(planted: Planted) -> dict[str, Any]:
    if planted.tool_call:
        return {
            "mock": Script(
                [Turn.call("shell", {"command": "echo hi > out.txt"}), Turn.reply("PLANTED-REPLY")]
            )
        }
    return {"mock_text": "PLANTED-REPLY"}


def _left(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


@pytest.mark.parametrize("harness", CASES, indirect=True)
def test_a_strangers_repository_runs_its_config_only_after_trust(
    harness: Adapter, environ: dict[str, str], tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    planted = _planted(harness.name, markers, _installs(environ))
    repo = _repository(tmp_path, planted)

    if planted.refused_by_tackroom:
        with pytest.raises(UntrustedProjectError, match=re.escape(f"run `tackroom trust {repo}`")):
            _run(harness, repo, environ, tmp_path, planted)
        assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").iterdir())
        assert _left(markers) == []
    else:
        _untrusted_run_loads_nothing(harness, repo, environ, tmp_path, planted)
    if planted.reads_nothing:
        return

    trust(repo, environ=environ)
    trusted = _run(harness, repo, environ, tmp_path, planted)
    # A harness may print what the trusted config ran before its answer (aider: "Executing: /run ...").
    assert trusted.ok and (trusted.final_text or "").strip().endswith("PLANTED-REPLY"), trusted.error
    assert _left(markers) == sorted(planted.markers), "a trusted repository's config must run"
    assert not trusted.withheld


def _untrusted_run_loads_nothing(
    harness: Adapter, repo: Path, environ: dict[str, str], tmp_path: Path, planted: Planted
) -> None:
    markers = tmp_path / "markers"
    untrusted = _run(harness, repo, environ, tmp_path, planted)
    assert _left(markers) == [], f"an untrusted repository ran {_left(markers)} through {harness.name}"
    if planted.reads_nothing:
        assert (
            untrusted.ok
            and (untrusted.final_text or "").strip() == "PLANTED-REPLY"
            and not untrusted.withheld
        )
        return
    assert f"tackroom trust {repo}" in " ".join(untrusted.withheld)
    if planted.refused:
        assert not untrusted.ok and untrusted.error and f"tackroom trust {repo}" in untrusted.error
    else:
        assert untrusted.ok and (untrusted.final_text or "").strip() == "PLANTED-REPLY", untrusted.error
        for text in planted.text:
            assert text in (tmp_path / "mock-0.jsonl").read_text(encoding="utf-8"), (
                f"{text} was kept away too"
            )


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_the_cli_says_what_it_kept_from_the_harness_and_how_to_trust(
    harness: Adapter, environ: dict[str, str], tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _repository(tmp_path, _planted(harness.name, markers, _installs(environ)))
    done = run_cli("run", harness.name, "hello", "--mock-text", "PLANTED-REPLY", cwd=repo, env=environ)
    assert done.returncode == 0, done.stderr
    assert _left(markers) == []
    assert ".claude/settings.json, .claude/settings.local.json, .mcp.json" in done.stderr
    assert f"run `tackroom trust {repo}`" in done.stderr


@pytest.mark.parametrize("harness", ["codex"], indirect=True)
def test_a_codex_config_copied_in_by_credentials_does_not_trust_the_project(
    harness: Adapter, environ: dict[str, str], tmp_path: Path
) -> None:
    """The user's own ~/.codex trusts the folder; tackroom has not: the copy in the run's home is
    made to say untrusted, so nothing of the project runs."""
    markers = tmp_path / "markers"
    markers.mkdir()
    planted = _planted(harness.name, markers, _installs(environ))
    repo = _repository(tmp_path, planted)
    user = tmp_path / "user-home"
    (user / ".codex").mkdir(parents=True)
    (user / ".codex" / "config.toml").write_text(
        f'# mine\nmodel = "gpt-5.5"\n\n[projects."{repo}"]\ntrust_level = "trusted"\n', encoding="utf-8"
    )
    # Credentials are for a real endpoint: the mock is given as one, with a key of its own.
    with MockServer(Script([Turn.reply("PLANTED-REPLY")])) as mock:
        result = run(
            harness,
            "hello",
            workdir=repo,
            base_url=mock.base_url,
            runs_dir=tmp_path / "runs",
            environ={**environ, "HOME": str(user), "OPENAI_API_KEY": "sk-test-not-real"},
            harness_version=harness.version,
            credentials=True,
            timeout_s=120,
        )
    assert result.ok and (result.final_text or "").strip() == "PLANTED-REPLY", result.error
    assert _left(markers) == []
    assert 'trust_level = "trusted"' in (user / ".codex" / "config.toml").read_text(encoding="utf-8")
