"""Engine ``kimi-agents``: subagents as a Kimi CLI agent spec (``kimi --agent-file FILE``).

Kimi CLI 1.51.0 reads subagent types only from the agent spec ``--agent-file`` names (agentspec.py):
no folder of its own holds them. The engine writes that spec at the capability's path, an agent
that extends kimi's default one and lists the profile's agents::

    version: 1
    agent:
      extend: "default"
      subagents:
        "reviewer":
          path: "./tackroom-agent/reviewer.yaml"
          description: "Reviews changes."

and, in a folder named after the file (``tackroom-agent/``), one spec per agent, which extends the
default agent too (its tools, unless the agent names its own) with the agent's prompt as its whole
system prompt::

    version: 1
    agent:
      extend: "default"
      system_prompt_path: "./reviewer.md"
      subagents: {}
      allowed_tools: ["kimi_cli.tools.file:ReadFile"]

What kimi does with it, and so what the engine must say:

- a spec's ``subagents`` replaces its base's (no merge): with the file, the default agent's own types
  (coder, explore, plan, whose files are inside kimi's package, where no render can name them) are
  not offered. The main spec is therefore named only when the profile has agents;
- each type is offered to the model in the ``Agent`` tool's description as
  ``- `<name>`: <description> (Tools: ..., Model: ..., Background: yes).``;
- the prompt file is a Jinja template (``${var}``, ``{% ... %}``, ``{# ... #}``, undefined names
  are errors): a body holding any of these is written inside ``{% raw %}...{% endraw %}``, which
  kimi renders as it is; a body holding an ``endraw`` tag cannot be, and is dropped by name;
- ``allowed_tools`` and ``exclude_tools`` name tools by their import path
  (``kimi_cli.tools.shell:Shell``), the 1.51.0 paths of the default agent's own tools
  (:data:`TOOL_PATHS`); a tool pattern or an MCP tool has none;
- ``model`` is a model alias of kimi's config; reasoning and temperature have no key.

Import reads the main spec and each subagent spec it lists whose file lies beside it, as kimi would;
what no neutral agent can say (another base, its own tool list, ``when_to_use``, a prompt that is a
template) is dropped by name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tackroom.profile.engines import tree
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.files import _fit_name, _text, native_tools
from tackroom.profile.model import Agent

KIND = "subagent"
BASE = "default"
"""``extend: default``: kimi's own default agent (1.51.0 resolves this one word specially)."""
VERSION = 1
TOOL_PATHS = {
    name: f"kimi_cli.tools.{module}:{name}"
    for module, names in (
        ("agent", ("Agent",)),
        ("ask_user", ("AskUserQuestion",)),
        ("todo", ("SetTodoList",)),
        ("shell", ("Shell",)),
        ("background", ("TaskList", "TaskOutput", "TaskStop")),
        ("file", ("ReadFile", "ReadMediaFile", "Glob", "Grep", "WriteFile", "StrReplaceFile")),
        ("web", ("SearchWeb", "FetchURL")),
        ("plan", ("ExitPlanMode",)),
        ("plan.enter", ("EnterPlanMode",)),
    )
    for name in names
}
"""The import path of each tool of 1.51.0's default agent (agents/default/agent.yaml), by name."""
TOOL_NAMES = {path: name for name, path in TOOL_PATHS.items()}
RAW_OPEN, RAW_CLOSE = "{% raw %}", "{% endraw %}\n"
_TEMPLATE = re.compile(r"\$\{|\{%|\{#")
"""What kimi's Jinja environment reads as a template (variables are ``${...}``)."""
_ENDRAW = re.compile(r"\{%-?\s*endraw\b")
_OWN_KEYS = frozenset(
    {"extend", "system_prompt_path", "subagents", "allowed_tools", "exclude_tools", "model"}
)


class KimiAgents(Engine):
    """Subagents as the ``subagents`` of a Kimi CLI agent spec that extends the default agent."""

    name = "kimi-agents"
    kinds: frozenset[Kind] = frozenset({"subagents"})

    def render(self, ctx: Context, items: Sequence[Agent]) -> list[Output]:
        folder = folder_of(ctx.path)
        entries: dict[str, Any] = {}
        out: list[Output] = []
        for agent in items:
            spec = _agent_spec(ctx, agent)
            if spec is None:
                continue
            prompt = _prompt(agent.body)
            if prompt is None:
                why = "its prompt holds an endraw tag, which kimi's template cannot quote"
                ctx.drop(KIND, agent.name, why)
                continue
            path = f"./{folder.name}/{agent.name}.yaml"
            entries[agent.name] = {"path": path, "description": agent.description}
            out.append(Output(folder / f"{agent.name}.yaml", spec_text({"extend": BASE, **spec})))
            out.append(Output(folder / f"{agent.name}.md", prompt))
        if not entries:
            return []
        return [Output(ctx.path, spec_text({"extend": BASE, "subagents": entries})), *out]

    def parse(self, ctx: Context) -> list[Agent]:
        main = _read_spec(ctx, ctx.path, ctx.path.name)
        if main is None:
            return []
        for key in sorted(set(main) - {"extend", "subagents"}):
            why = f"{ctx.path}: agent.{key} is the main agent's, not a subagent's"
            ctx.drop(KIND, ctx.path.name, why, key)
        subagents = main.get("subagents")
        if subagents is None:
            return []  # kimi's own subagents (inherited or none): nothing of the profile's
        if not isinstance(subagents, dict):
            ctx.drop(KIND, "subagents", f"{ctx.path}: agent.subagents is not a table of subagents")
            return []
        agents = [_agent(ctx, str(name), entry) for name, entry in subagents.items()]
        return sorted((a for a in agents if a is not None), key=lambda a: a.name)


def folder_of(path: Path) -> Path:
    """The folder of the subagents' own files: beside the main spec, named after it."""
    return path.parent / path.stem


def spec_text(agent: dict[str, Any]) -> str:
    """An agent spec file: YAML whose scalars are JSON's (YAML reads JSON), one key a line."""
    lines = [f"version: {VERSION}", "agent:"]
    for key, value in agent.items():
        if key == "subagents" and value:
            lines.append("  subagents:")
            for name, entry in value.items():
                lines.append(f"    {json.dumps(name)}:")
                lines += [f"      {k}: {json.dumps(v, ensure_ascii=False)}" for k, v in entry.items()]
        else:
            lines.append(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


# --- render ------------------------------------------------------------------------------------


def _agent_spec(ctx: Context, agent: Agent) -> dict[str, Any] | None:
    """The keys of ``agent``'s own spec (past ``extend``), or None after dropping it by name."""
    spec: dict[str, Any] = {"system_prompt_path": f"./{agent.name}.md", "subagents": {}}
    if agent.tools:
        paths, missing = _tool_paths(ctx, agent.tools)
        if not paths:
            ctx.drop(KIND, agent.name, f"no tool {', '.join(missing)} here (it would get every tool)")
            return None
        if missing:
            ctx.drop(KIND, agent.name, f"no tool {', '.join(missing)} here (allowing less)", "tools")
        spec["allowed_tools"] = paths
    if agent.disallowed_tools:
        paths, missing = _tool_paths(ctx, agent.disallowed_tools)
        if missing:
            ctx.drop(KIND, agent.name, f"cannot deny {', '.join(missing)} here (it would widen)")
            return None
        spec["exclude_tools"] = paths
    model = ctx.model(agent.model, KIND, agent.name)
    if model is not None:
        spec["model"] = model
    for field in ("reasoning", "temperature"):
        if getattr(agent, field) is not None:
            ctx.drop(KIND, agent.name, f"a kimi agent spec has no {field}", field)
    return spec


def _tool_paths(ctx: Context, refs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the import paths of the tools ``refs`` name, the references that name none)."""
    paths: list[str] = []
    missing: list[str] = []
    for ref in refs:
        names, _ = native_tools(ctx, [ref])
        path = TOOL_PATHS.get(names[0]) if names else None
        if path is None:
            missing.append(ref)
        elif path not in paths:
            paths.append(path)
    return paths, missing


def _prompt(body: str) -> str | None:
    """The prompt file for ``body``: as it is, or quoted whole when kimi would read it as a template."""
    if not _TEMPLATE.search(body):
        return body
    if _ENDRAW.search(body):
        return None
    return RAW_OPEN + body + RAW_CLOSE


# --- import ------------------------------------------------------------------------------------


def _read_spec(ctx: Context, path: Path, name: str) -> dict[str, Any] | None:
    """The ``agent`` table of a spec file, or None (absent: silently; unreadable: dropped by name)."""
    import yaml

    if not path.is_file():
        if path != ctx.path:
            ctx.drop(KIND, name, f"{path}: no such file")
        return None
    text = _text(ctx, KIND, name, path)
    if text is None:
        return None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        ctx.drop(KIND, name, f"{path}: not YAML ({str(exc)[:200]})")
        return None
    if not isinstance(data, dict) or str(data.get("version", VERSION)) != str(VERSION):
        ctx.drop(KIND, name, f"{path}: not a version {VERSION} agent spec, which kimi would refuse")
        return None
    agent = data.get("agent", {})
    if not isinstance(agent, dict):
        ctx.drop(KIND, name, f"{path}: agent is not a table")
        return None
    return agent


def _beside(ctx: Context, name: str, base: Path, value: Any, what: str) -> Path | None:
    """The file a spec's relative ``value`` names (resolved as kimi does), when it lies in ``base``'s
    folder or below; else None after dropping ``name``."""
    if not isinstance(value, str) or not value:
        ctx.drop(KIND, name, f"{base}: {what} is not a path")
        return None
    path = Path(base.parent, value)
    folder = ctx.path.parent
    if ".." in Path(value).parts or not path.is_relative_to(folder):
        ctx.drop(KIND, name, f"{base}: {what} {value!r} lies outside {folder}, which tackroom does not read")
        return None
    why = tree.why_not(ctx.root, path)
    if why is not None:
        ctx.drop(KIND, name, f"{path}: {why}")
        return None
    return path


def _agent(ctx: Context, name: str, entry: Any) -> Agent | None:
    if not _fit_name(ctx, KIND, name, ctx.path):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("description"), str):
        ctx.drop(KIND, name, f"{ctx.path}: subagents.{name} has no path and description, which kimi requires")
        return None
    spec_path = _beside(ctx, name, ctx.path, entry.get("path"), f"subagents.{name}.path")
    if spec_path is None:
        return None
    spec = _read_spec(ctx, spec_path, name)
    if spec is None:
        return None
    if spec.get("extend") != BASE:
        ctx.drop(KIND, name, f"{spec_path}: extends {spec.get('extend')!r}, not kimi's default agent")
        return None
    if "tools" in spec:
        ctx.drop(KIND, name, f"{spec_path}: tools: its own tool list has no neutral form")
        return None
    for key in sorted(set(spec) - _OWN_KEYS):
        ctx.drop(KIND, name, f"{spec_path}: {key} has no neutral form", key)
    if spec.get("subagents"):
        ctx.drop(KIND, name, f"{spec_path}: a subagent's own subagents have no neutral form", "subagents")
    prompt_path = _beside(ctx, name, spec_path, spec.get("system_prompt_path"), "system_prompt_path")
    if prompt_path is None:
        return None
    text = _text(ctx, KIND, name, prompt_path) if prompt_path.is_file() else None
    if text is None:
        ctx.drop(KIND, name, f"{prompt_path}: no prompt there")
        return None
    body = _body(text)
    if body is None:
        ctx.drop(KIND, name, f"{prompt_path}: the prompt is a kimi template, which no neutral prompt says")
        return None
    tools = _tools(ctx, name, spec_path, spec, "allowed_tools")
    denied = _tools(ctx, name, spec_path, spec, "exclude_tools")
    if tools is None or denied is None:
        return None
    model = spec.get("model")
    if model is not None and not isinstance(model, str):
        ctx.drop(KIND, name, f"{spec_path}: model is not a model alias", "model")
        model = None
    agent = Agent(name, entry["description"], body, tools, ctx.neutral_model(model), disallowed_tools=denied)
    ctx.read_from(agent, ctx.path, spec_path, prompt_path)
    return agent


def _body(text: str) -> str | None:
    """The neutral prompt of a prompt file: unquoted when tackroom quoted it; None for a template."""
    if text.startswith(RAW_OPEN) and text.endswith(RAW_CLOSE):
        inner = text[len(RAW_OPEN) : -len(RAW_CLOSE)]
        if not _ENDRAW.search(inner) and _TEMPLATE.search(inner):
            return inner
    return None if _TEMPLATE.search(text) else text


def _tools(ctx: Context, name: str, path: Path, spec: dict[str, Any], key: str) -> tuple[str, ...] | None:
    """The tool references of a tool list (absent: none); None after dropping the agent (never widen)."""
    value = spec.get(key)
    if value is None:
        return ()
    refs: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        tool = TOOL_NAMES.get(item) if isinstance(item, str) else None
        if tool is None:
            ctx.drop(KIND, name, f"{path}: {key}: {str(item)[:80]!r} is none of kimi's tools here")
            return None
        refs.append(ctx.tool_ref(tool))
    if key == "allowed_tools" and not refs:
        ctx.drop(KIND, name, f"{path}: allowed_tools: an empty list (no tool at all) has no neutral form")
        return None
    return tuple(refs)
