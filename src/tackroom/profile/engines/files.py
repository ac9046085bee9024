"""Engines that write plain files: ``concat`` (rules) and ``dir`` (skills, subagents, commands).

``concat`` joins the rule sections into one document between markers, so the
document parses back into the same sections. ``dir`` writes one file (or, for
skills, one directory) per item, in the harness's format: Markdown with YAML
frontmatter, or TOML, with per-harness fixed keys from the adapter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.model import ARGUMENTS, Agent, Command, Rule, Skill

_SECTION = re.compile(r"<!-- tackroom:rule (\S+) -->\n(.*?)\n<!-- /tackroom:rule \1 -->\n", re.DOTALL)


class Concat(Engine):
    name = "concat"
    kinds: frozenset[Kind] = frozenset({"rules"})

    def render(self, ctx: Context, items: Sequence[Rule]) -> list[Output]:
        text = "".join(
            f"<!-- tackroom:rule {r.name} -->\n{r.text}\n<!-- /tackroom:rule {r.name} -->\n" for r in items
        )
        return [Output(ctx.path, text)] if items else []

    def parse(self, ctx: Context) -> list[Rule]:
        if not ctx.path.is_file():
            return []
        text = ctx.path.read_bytes().decode("utf-8")
        rules = [Rule(name, body) for name, body in _SECTION.findall(text)]
        rest = _SECTION.sub("", text).strip()
        if rest:  # a document tackroom did not write: keep it whole, named after its file
            rules.append(Rule(_document_name(ctx.path), rest + "\n"))
        return sorted(rules, key=lambda r: r.name)


def _document_name(path: Path) -> str:
    """A rule name for a whole native document: its stem as a profile name (``.goosehints``: goosehints)."""
    name = re.sub(r"\.{2,}", ".", re.sub(r"[^a-z0-9._-]+", "-", path.stem.lower()))
    return name[:128].strip(".-_") or "rules"


def frontmatter(data: dict[str, Any], body: str) -> str:
    import yaml

    head = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{head}---\n{body}"


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    import yaml

    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 3)
    if end < 0:
        return {}, text
    data = yaml.safe_load(text[4 : end + 1]) or {}
    return (data if isinstance(data, dict) else {}), text[end + 5 :]


class Dir(Engine):
    """One file per item (one directory per skill), Markdown+frontmatter or TOML."""

    name = "dir"
    kinds: frozenset[Kind] = frozenset({"skills", "subagents", "commands"})
    formats = frozenset({"markdown", "toml"})

    def render(self, ctx: Context, items: Sequence[Any]) -> list[Output]:
        out: list[Output] = []
        for item in items:
            out += getattr(self, f"_render_{ctx.kind}")(ctx, item)
        return out

    def parse(self, ctx: Context) -> list[Any]:
        if not ctx.path.is_dir():
            return []
        parsed: list[Any] = getattr(self, f"_parse_{ctx.kind}")(ctx)
        return parsed

    def _ext(self, ctx: Context) -> str:
        return ctx.capability.extension or (".toml" if ctx.capability.format == "toml" else ".md")

    def _items(self, ctx: Context) -> list[tuple[str, Path]]:
        ext = self._ext(ctx)
        return sorted(
            (p.name[: -len(ext)], p) for p in ctx.path.iterdir() if p.is_file() and p.name.endswith(ext)
        )

    # skills: the Agent Skills layout is the same for every harness

    def _render_skills(self, ctx: Context, skill: Skill) -> list[Output]:
        from tackroom.paths import inside

        base = ctx.path / skill.name
        head = {"name": skill.name, "description": skill.description, **ctx.capability.frontmatter}
        # A skill's file paths stay inside the skill ("../../CLAUDE.md" would reach a sibling output).
        return [Output(base / "SKILL.md", frontmatter(head, skill.body))] + [
            Output(inside(base, rel), content) for rel, content in skill.files
        ]

    def _parse_skills(self, ctx: Context) -> list[Skill]:
        skills = []
        for skill_dir in sorted(p for p in ctx.path.iterdir() if (p / "SKILL.md").is_file()):
            data, body = split_frontmatter((skill_dir / "SKILL.md").read_bytes().decode("utf-8"))
            files = tuple(
                (str(p.relative_to(skill_dir)), p.read_bytes())
                for p in sorted(skill_dir.rglob("*"))
                if p.is_file() and p.name != "SKILL.md"
            )
            skills.append(
                Skill(str(data.get("name", skill_dir.name)), str(data.get("description", "")), body, files)
            )
        return skills

    # subagents

    def _render_subagents(self, ctx: Context, agent: Agent) -> list[Output]:
        tools = [ctx.tool_name(t) for t in agent.tools]
        if None in tools:
            missing = [t for t, n in zip(agent.tools, tools, strict=True) if n is None]
            ctx.drop("subagent", agent.name, f"no tool {', '.join(missing)} here")
            return []
        if agent.tools and ctx.capability.tools is None:
            ctx.drop("subagent", agent.name, "cannot restrict a subagent's tools")
            return []
        path = ctx.path / f"{agent.name}{self._ext(ctx)}"
        if ctx.capability.format == "toml":
            data: dict[str, Any] = {"name": agent.name, "description": agent.description}
            data |= {"model": agent.model} if agent.model else {}
            data |= dict(ctx.capability.frontmatter) | {"developer_instructions": agent.body}
            return [Output(path, data=data, format="toml")]
        head: dict[str, Any] = {
            "name": agent.name,
            "description": agent.description,
            **ctx.capability.frontmatter,
        }
        if agent.tools:
            head["tools"] = ", ".join(str(t) for t in tools) if ctx.capability.tools == "csv" else tools
        if agent.model:
            head["model"] = agent.model
        return [Output(path, frontmatter(head, agent.body))]

    def _parse_subagents(self, ctx: Context) -> list[Agent]:
        agents = []
        for name, path in self._items(ctx):
            if ctx.capability.format == "toml":
                import tomllib

                data = tomllib.loads(path.read_bytes().decode("utf-8"))
                body = str(data.get("developer_instructions", ""))
            else:
                data, body = split_frontmatter(path.read_bytes().decode("utf-8"))
            raw = data.get("tools", [])
            names = [t.strip() for t in raw.split(",")] if isinstance(raw, str) else list(raw)
            tools = tuple(ctx.neutral_tool(n) or n for n in names if n)
            agents.append(
                Agent(
                    str(data.get("name", name)),
                    str(data.get("description", "")),
                    body,
                    tools,
                    data.get("model"),
                )
            )
        return agents

    # commands

    def _arguments(self, ctx: Context) -> str:
        return ctx.capability.arguments or ARGUMENTS

    def _render_commands(self, ctx: Context, command: Command) -> list[Output]:
        body = command.body.replace(ARGUMENTS, self._arguments(ctx))
        path = ctx.path / f"{command.name}{self._ext(ctx)}"
        if ctx.capability.format == "toml":
            data = {"description": command.description, **ctx.capability.frontmatter, "prompt": body}
            return [Output(path, data=data, format="toml")]
        head = {"description": command.description, **ctx.capability.frontmatter}
        return [Output(path, frontmatter(head, body))]

    def _parse_commands(self, ctx: Context) -> list[Command]:
        commands = []
        for name, path in self._items(ctx):
            if ctx.capability.format == "toml":
                import tomllib

                data = tomllib.loads(path.read_bytes().decode("utf-8"))
                body = str(data.get("prompt", ""))
            else:
                data, body = split_frontmatter(path.read_bytes().decode("utf-8"))
            body = body.replace(self._arguments(ctx), ARGUMENTS)
            commands.append(Command(name, str(data.get("description", "")), body))
        return commands


ENGINES: list[Engine] = [Concat(), Dir()]
