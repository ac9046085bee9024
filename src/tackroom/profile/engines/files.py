"""Engines that write plain files: ``concat`` (rules), ``dir`` (skills, subagents, commands)
and ``rule-dir`` (one file per rule: path-scoped rules, or always-on rules in a rules directory).

``concat`` joins the rule sections into one document between markers, so the
document parses back into the same sections. ``dir`` writes one file (or, for
skills, one directory) per item, in the harness's format: Markdown with YAML
frontmatter, or TOML, with per-harness fixed keys from the adapter.

What each harness can say is adapter data: ``Capability.keys`` maps an optional
neutral field (``allowed_tools``, ``model``, ``argument_hint``,
``disallowed_tools``, ``reasoning``, ``temperature``, ``description``) to this
harness's key for it. A field without a key is dropped by name (the item is
still written), except a tool denial: an agent whose denied tools the harness
cannot express is dropped whole, since leaving the denial out would widen it.

Import is total and lenient: every file found is imported, or dropped by name
with the reason (a file:line for a malformed one); an unknown frontmatter key
is a field drop, never silently lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tackroom.profile.engines import tree
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.frontmatter import dump_head, normalize
from tackroom.profile.model import ARGUMENTS, Agent, Command, Rule, Skill

_SECTION = re.compile(r"<!-- tackroom:rule (\S+) -->\n(.*?)\n<!-- /tackroom:rule \1 -->\n", re.DOTALL)
_SHELL = re.compile(r"!\{([^{}\n]*)\}")
"""Neutral ``!{cmd}``: a shell command's output."""
_INCLUDE = re.compile(r"@\{([^{}\s]+)\}")
"""Neutral ``@{path}``: a file's content."""
_POSITIONAL = re.compile(r"\$[1-9]")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
_MAX_DEPTH = 4


class Concat(Engine):
    name = "concat"
    kinds: frozenset[Kind] = frozenset({"rules"})

    def render(self, ctx: Context, items: Sequence[Rule]) -> list[Output]:
        for rule in items:
            if rule.description is not None:
                ctx.drop("rule", rule.name, "a rules document has no place for a description", "description")
        text = "".join(
            f"<!-- tackroom:rule {r.name} -->\n{r.text}\n<!-- /tackroom:rule {r.name} -->\n" for r in items
        )
        return [Output(ctx.path, text)] if items else []

    def parse(self, ctx: Context) -> list[Rule]:
        if not ctx.path.is_file():
            return []
        text = _text(ctx, "rule", _document_name(ctx.path), ctx.path)
        if text is None:
            return []
        text = normalize(text)  # a BOM and CRLF, as the profile loader reads them too
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
    if not data:
        return f"---\n---\n{body}" if body.startswith("---") else body
    return f"---\n{dump_head(data)}---\n{body}"


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(head keys, body), read as the harnesses read it (:mod:`tackroom.profile.frontmatter`)."""
    from tackroom.profile import frontmatter as fm

    return fm.read(text)


# -- reading native files, leniently and totally ------------------------------------------------------


def _text(ctx: Context, kind: str, name: str, path: Path) -> str | None:
    """A native file's UTF-8 text, or None after dropping the item by name with why."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        ctx.drop(kind, name, f"{path}: cannot be read ({exc.strerror or exc})")
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        ctx.drop(kind, name, f"{path}:{line}: not UTF-8")
        return None


def _markdown(ctx: Context, kind: str, name: str, path: Path) -> tuple[dict[str, Any], str] | None:
    """(frontmatter, body) of a native Markdown file, or None after dropping it with file:line."""
    from tackroom.profile import frontmatter as fm

    text = _text(ctx, kind, name, path)
    if text is None:
        return None
    try:
        return fm.read(text)
    except fm.FrontmatterError as exc:
        ctx.drop(kind, name, f"{path}:{exc.line}: {exc.message}")
        return None


def _toml(ctx: Context, kind: str, name: str, path: Path) -> tuple[dict[str, Any], str] | None:
    from tackroom._toml import tomllib

    text = _text(ctx, kind, name, path)
    if text is None:
        return None
    try:
        return tomllib.loads(text.removeprefix("\ufeff")), ""
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        ctx.drop(kind, name, f"{path}: not TOML ({str(exc)[:200]})")
        return None


def _fit_name(ctx: Context, kind: str, name: str, where: Path) -> bool:
    """Whether a name read from native files may name a profile item (it becomes a path); else dropped."""
    if _NAME.fullmatch(name) and ".." not in name:
        return True
    ctx.drop(
        kind,
        name[:80],
        f"{where}: {name[:80]!r} is not a profile name (lowercase letters, digits, '.', '_' and '-'; "
        "at most 128 characters); rename it there and import again",
    )
    return False


def _item_name(ctx: Context, kind: str, data: dict[str, Any], default: str, path: Path) -> str | None:
    """The item's name: its frontmatter ``name`` when set, else the file's; None after dropping it."""
    name = data.get("name")
    if name is None or name == "":
        name = default
    if not isinstance(name, str):
        ctx.drop(kind, default, f"{path}: name: {str(name)[:40]!r} is not a string")
        return None
    return name if _fit_name(ctx, kind, name, path) else None


def _files(
    ctx: Context, kind: str, directory: Path, ext: str, dirs: bool = False
) -> Iterator[tuple[str, Path]]:
    """(stem, path) of each item file directly in ``directory``; anything else there is dropped by name.

    With ``dirs`` the caller reads subdirectories itself; otherwise each is dropped by name too.
    """
    for path in tree.entries(ctx, directory, kind):
        if path.is_file() and path.name.endswith(ext) and len(path.name) > len(ext):
            yield path.name[: -len(ext)], path
        elif not path.is_dir():
            ctx.drop(kind, path.name, f"{path}: not a {ext} file, so {ctx.adapter.harness} does not read it")
        elif not dirs:
            ctx.drop(kind, path.name, f"{path}: a subdirectory; tackroom reads no {kind} from it")


def _tool_list(value: Any) -> list[str] | None:
    """A tool list as written: a list of names or one comma-separated string (commas in parentheses kept)."""
    if isinstance(value, list):
        return (
            [v.strip() for v in value if isinstance(v, str) and v.strip()]
            if all(isinstance(v, str) for v in value)
            else None
        )
    if not isinstance(value, str):
        return None
    parts, depth, current = [], 0, ""
    for char in value:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1, "{": 1, "}": -1, "[": 1, "]": -1}.get(char, 0)
        current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


_CALLED = re.compile(r"^([^()\s]+)\((.*)\)$", re.DOTALL)


def tool_refs(ctx: Context, names: list[str]) -> tuple[str, ...]:
    """Import: tool references for this harness's tool names, ``Name(pattern)`` included; never a guess."""
    from tackroom.profile.tools import BadReference, parse_tool

    refs = []
    for name in names:
        called = _CALLED.match(name)
        neutral = ctx.neutral_tool(called.group(1)) if called else None
        ref = f"{neutral}({_quote(called.group(2))})" if called and neutral else ctx.tool_ref(name)
        try:
            parse_tool(ref)
        except BadReference:
            ref = f"{ctx.adapter.harness}:{name}"
        refs.append(ref)
    return tuple(refs)


def _quote(pattern: str) -> str:
    import json

    return json.dumps(pattern, ensure_ascii=False)


def native_tools(ctx: Context, refs: Sequence[str]) -> tuple[list[str], list[str]]:
    """Render: (this harness's names for the tool references it can name, the references it cannot)."""
    from tackroom.profile.tools import BadReference, parse_tool

    names, missing = [], []
    for ref in refs:
        name = ctx.native_tool(ref)
        if name is None:
            try:
                parsed = parse_tool(ref)
            except BadReference:
                parsed = None
            base = (
                ctx.tool_name(parsed.tool)
                if parsed is not None and parsed.pattern is not None and parsed.harness is None
                else None
            )
            if parsed is not None and parsed.tool != "mcp" and base is not None:
                name = f"{base}({parsed.pattern})"
        if name is None:
            missing.append(ref)
        else:
            names.append(name)
    return names, missing


def _tools_value(ctx: Context, names: list[str]) -> str | list[str]:
    return ", ".join(names) if (ctx.capability.tools or "csv") == "csv" else names


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

    def _toml_format(self, ctx: Context) -> bool:
        return ctx.capability.format == "toml"

    def _read(self, ctx: Context, kind: str, name: str, path: Path) -> tuple[dict[str, Any], str] | None:
        if self._toml_format(ctx):
            return _toml(ctx, kind, name, path)
        return _markdown(ctx, kind, name, path)

    # -- optional fields, by the adapter's keys ------------------------------------------------------

    def _optional(self, ctx: Context, kind: str, item: Any, fields: Sequence[str]) -> dict[str, Any]:
        """The head keys for the optional fields set on ``item``; a field without a key is dropped by name."""
        head: dict[str, Any] = {}
        for field in fields:
            value = getattr(item, field)
            if value is None:
                continue
            key = ctx.capability.keys.get(field)
            if key is None:
                ctx.drop(
                    kind, item.name, f"{ctx.adapter.harness} has no {field.replace('_', '-')} here", field
                )
                continue
            if field == "model":
                value = ctx.model(value, kind, item.name)
                if value is None:
                    continue
            elif field == "allowed_tools":
                names, missing = native_tools(ctx, value)
                if missing:
                    ctx.drop(kind, item.name, f"no tool {', '.join(missing)} here (allowing less)", field)
                value = _tools_value(ctx, names)
            head[key] = value
        return head

    def _read_optional(
        self, ctx: Context, kind: str, name: str, path: Path, data: dict[str, Any], fields: Sequence[str]
    ) -> dict[str, Any]:
        """Import: the optional fields the adapter's keys name, each checked; a bad value is a field drop."""
        from tackroom.vocabulary import REASONING

        found: dict[str, Any] = {}
        for field in fields:
            key = ctx.capability.keys.get(field)
            if key is None or key not in data:
                continue
            value = data[key]
            if field in ("allowed_tools", "disallowed_tools"):
                names = _tool_list(value)
                ok = names is not None
                value = tool_refs(ctx, names or [])
            elif field == "model":
                ok = isinstance(value, str) and bool(value.strip())
                value = ctx.neutral_model(value) if ok else None
                ok = ok and _model_ok(value)
            elif field == "temperature":
                ok = isinstance(value, int | float) and not isinstance(value, bool)
                value = float(value) if ok else None
            elif field == "reasoning":
                ok = value in REASONING
            else:
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    value = f"[{', '.join(value)}]"  # `argument-hint: [message]` is a YAML list
                ok = isinstance(value, str)
            if ok:
                found[field] = value
            else:
                ctx.drop(kind, name, f"{path}: {key}: {str(value)[:80]!r} is not what tackroom reads", field)
        return found

    def _unknown(
        self, ctx: Context, kind: str, name: str, path: Path, data: dict[str, Any], known: set[str]
    ) -> None:
        """Import: every key tackroom has no word for is a field drop, said aloud."""
        fixed = ctx.capability.frontmatter
        for key in data:
            if key in known:
                continue
            if key in fixed and data[key] == fixed[key]:
                continue
            ctx.drop(kind, name, f"{path}: tackroom has no word for {key!r}", str(key))

    def _known(self, ctx: Context, *keys: str) -> set[str]:
        return {*keys, *ctx.capability.keys.values()}

    # skills: the Agent Skills layout is the same for every harness

    _SKILL_FIELDS = ("allowed_tools", "model", "argument_hint")

    def _render_skills(self, ctx: Context, skill: Skill) -> list[Output]:
        from tackroom.paths import inside

        base = ctx.path / skill.name
        head = {"name": skill.name, "description": skill.description, **ctx.capability.frontmatter}
        head |= self._optional(ctx, "skill", skill, self._SKILL_FIELDS)
        # A skill's file paths stay inside the skill ("../../CLAUDE.md" would reach a sibling output).
        return [Output(base / "SKILL.md", frontmatter(head, skill.body))] + [
            Output(inside(base, rel), content) for rel, content in skill.files
        ]

    def _parse_skills(self, ctx: Context) -> list[Skill]:
        skills = []
        for skill_dir in tree.entries(ctx, ctx.path, "skill"):
            main = skill_dir / "SKILL.md"
            why = tree.why_not(ctx.root, main, skill_dir) if skill_dir.is_dir() else None
            if why is not None:  # SKILL.md is a link out, or a FIFO: named, never read
                tree.refuse(ctx, "skill", main, why)
                continue
            if not skill_dir.is_dir() or not main.is_file():
                what = (
                    "a skill directory without a SKILL.md" if skill_dir.is_dir() else "not a skill directory"
                )
                ctx.drop("skill", skill_dir.name, f"{skill_dir}: {what}")
                continue
            parsed = _markdown(ctx, "skill", skill_dir.name, main)
            if parsed is None:
                continue
            data, body = parsed
            name = _item_name(ctx, "skill", data, skill_dir.name, main)
            if name is None:
                continue
            self._unknown(ctx, "skill", name, main, data, self._known(ctx, "name", "description"))
            fields = self._read_optional(ctx, "skill", name, main, data, self._SKILL_FIELDS)
            below = tree.files_below(ctx, skill_dir, "skill", name)
            files = tuple((str(p.relative_to(skill_dir)), p.read_bytes()) for p in below if p != main)
            description = _description(ctx, "skill", name, main, data)
            skill = Skill(name, description, body, files, **fields)
            skills.append(ctx.read_from(skill, *below))
        return skills

    # subagents

    _AGENT_FIELDS = ("model", "reasoning", "temperature")

    def _render_subagents(self, ctx: Context, agent: Agent) -> list[Output]:
        if agent.tools and ctx.capability.tools is None:
            ctx.drop("subagent", agent.name, "cannot restrict a subagent's tools")
            return []
        tools, missing = native_tools(ctx, agent.tools)
        if agent.tools and not tools:
            ctx.drop("subagent", agent.name, f"no tool {', '.join(missing)} here (it would get every tool)")
            return []
        if missing:
            ctx.drop("subagent", agent.name, f"no tool {', '.join(missing)} here (allowing less)", "tools")
        head: dict[str, Any] = {"name": agent.name, "description": agent.description}
        if agent.disallowed_tools:
            key = ctx.capability.keys.get("disallowed_tools")
            denied, unnamed = native_tools(ctx, agent.disallowed_tools)
            if key is None or unnamed:
                why = f"cannot deny {', '.join(unnamed or agent.disallowed_tools)} here (it would widen)"
                ctx.drop("subagent", agent.name, why)
                return []
            head[key] = _tools_value(ctx, denied)
        if tools:
            head[ctx.capability.keys.get("tools", "tools")] = _tools_value(ctx, tools)
        head |= self._optional(ctx, "subagent", agent, self._AGENT_FIELDS)
        path = ctx.path / f"{agent.name}{self._ext(ctx)}"
        if self._toml_format(ctx):
            data = head | dict(ctx.capability.frontmatter) | {"developer_instructions": agent.body}
            return [Output(path, data=data, format="toml")]
        head = {"name": agent.name, "description": agent.description, **ctx.capability.frontmatter} | head
        return [Output(path, frontmatter(head, agent.body))]

    def _agent_files(self, ctx: Context, directory: Path, depth: int = 0) -> Iterator[tuple[str, Path]]:
        """(stem, path) of each agent file: in subdirectories too where the harness reads them there."""
        nested = ctx.capability.nested
        yield from _files(ctx, "subagent", directory, self._ext(ctx), dirs=nested)  # a folder's own first
        for sub in (p for p in tree.entries(ctx, directory, "subagent") if nested and p.is_dir()):
            if depth + 1 >= _MAX_DEPTH:
                ctx.drop("subagent", sub.name, f"{sub}: nested deeper than {_MAX_DEPTH} levels")
            else:
                yield from self._agent_files(ctx, sub, depth + 1)

    def _parse_subagents(self, ctx: Context) -> list[Agent]:
        agents = []
        for stem, path in self._agent_files(ctx, ctx.path):
            parsed = self._read(ctx, "subagent", stem, path)
            if parsed is None:
                continue
            data, body = parsed
            if self._toml_format(ctx):
                body = data.get("developer_instructions", "")
                if not isinstance(body, str):
                    ctx.drop("subagent", stem, f"{path}: developer_instructions: not text")
                    continue
            name = _item_name(ctx, "subagent", data, stem, path)
            if name is None:
                continue
            tools_key = ctx.capability.keys.get("tools", "tools")
            if tools_key in data and ctx.capability.tools is None:
                # A tool list this harness's adapter cannot read: the agent without it would get
                # every tool, so it is not imported at all (never widen).
                ctx.drop(
                    "subagent",
                    name,
                    f"{path}: {tools_key}: its tool restriction cannot be read here (importing it without "
                    "would widen it)",
                )
                continue
            known = self._known(ctx, "name", "description", *((tools_key,) if ctx.capability.tools else ()))
            self._unknown(ctx, "subagent", name, path, data, known | {"developer_instructions"})
            fields = self._read_optional(
                ctx, "subagent", name, path, data, (*self._AGENT_FIELDS, "disallowed_tools")
            )
            denial = ctx.capability.keys.get("disallowed_tools")
            if denial in data and "disallowed_tools" not in fields:
                # A denial tackroom cannot read: importing the agent without it would widen it.
                ctx.drop("subagent", name, f"{path}: {denial}: not a list of tool names (it would widen)")
                continue
            tools: tuple[str, ...] = ()
            if tools_key in data and ctx.capability.tools is not None:
                names = _tool_list(data[tools_key])
                if names is None:  # a tool list tackroom cannot read: never read it as "every tool"
                    ctx.drop("subagent", name, f"{path}: tools: not a list of tool names")
                    continue
                tools = tool_refs(ctx, names)
                if not tools:
                    ctx.drop(
                        "subagent", name, f"{path}: tools: an empty list (no tool at all) has no neutral form"
                    )
                    continue
            description = _description(ctx, "subagent", name, path, data)
            agents.append(ctx.read_from(Agent(name, description, body, tools, **fields), path))
        return agents

    # commands

    _COMMAND_FIELDS = ("allowed_tools", "model", "argument_hint")

    def _render_commands(self, ctx: Context, command: Command) -> list[Output]:
        if ":" in command.name and not ctx.capability.namespaces:
            ctx.drop("command", command.name, "no namespaced commands here")
            return []
        body, problem = render_body(ctx, command.body)
        if body is None:
            ctx.drop("command", command.name, problem)
            return []
        head: dict[str, Any] = {"description": command.description, **ctx.capability.frontmatter}
        head |= self._optional(ctx, "command", command, self._COMMAND_FIELDS)
        path = ctx.path.joinpath(*command.name.split(":")).with_name(
            command.name.split(":")[-1] + self._ext(ctx)
        )
        if self._toml_format(ctx):
            return [Output(path, data=head | {"prompt": body}, format="toml")]
        return [Output(path, frontmatter(head, body))]

    def _parse_commands(self, ctx: Context, directory: Path | None = None, prefix: str = "") -> list[Command]:
        commands: list[Command] = []
        directory = directory or ctx.path
        for sub in (p for p in tree.entries(ctx, directory, "command") if p.is_dir()):
            name = f"{prefix}{sub.name}"
            if not ctx.capability.namespaces:
                ctx.drop(
                    "command", name, f"{sub}: a subdirectory; {ctx.adapter.harness} namespaces no commands"
                )
            elif prefix.count(":") + 1 >= _MAX_DEPTH:
                ctx.drop("command", name, f"{sub}: namespaced deeper than {_MAX_DEPTH} levels")
            elif _fit_name(ctx, "command", sub.name, sub):
                commands += self._parse_commands(ctx, sub, f"{name}:")
        for stem, path in _files(ctx, "command", directory, self._ext(ctx), dirs=True):
            if not _fit_name(ctx, "command", stem, path):
                continue
            name = prefix + stem
            parsed = self._read(ctx, "command", name, path)
            if parsed is None:
                continue
            data, body = parsed
            if self._toml_format(ctx):
                body = data.get("prompt", "")
                if not isinstance(body, str):
                    ctx.drop("command", name, f"{path}: prompt: not a string")
                    continue
                body = normalize(body)  # as a profile's file is read back: LF line ends, no BOM
            self._unknown(ctx, "command", name, path, data, self._known(ctx, "description", "prompt"))
            neutral = parse_body(ctx, body)
            again, problem = render_body(ctx, neutral)
            if again is None:
                ctx.drop("command", name, f"{path}: {problem}")
                continue
            fields = self._read_optional(ctx, "command", name, path, data, self._COMMAND_FIELDS)
            description = _description(ctx, "command", name, path, data)
            commands.append(ctx.read_from(Command(name, description, neutral, **fields), path))
        return commands


def _str(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _description(ctx: Context, kind: str, name: str, path: Path, data: dict[str, Any]) -> str:
    """The item's description ("" when unsaid); one that is not text is a field drop, never a str() of it."""
    value = data.get("description")
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # `description: 2024` is text to the harness
    ctx.drop(kind, name, f"{path}: description: not text", "description")
    return ""


def _model_ok(ref: str | None) -> bool:
    from tackroom.profile.tools import BadReference, parse_model

    try:
        parse_model(ref or "")
    except BadReference:
        return False
    return True


# -- command body templates -----------------------------------------------------------------------------


def _slots(template: str, slot: str) -> tuple[str, str]:
    head, _, tail = template.partition("{{" + slot + "}}")
    return head, tail


def _wrap(head: str, tail: str) -> Callable[[re.Match[str]], str]:
    def wrap(found: re.Match[str]) -> str:
        return f"{head}{found.group(1)}{tail}"

    return wrap


def render_body(ctx: Context, body: str) -> tuple[str | None, str]:
    """(this harness's spelling of a neutral command body, "") or (None, why it cannot be said)."""
    cap = ctx.capability
    if not cap.positional and _POSITIONAL.search(body):
        return None, "its body uses positional arguments ($1..$9), which this harness lacks"
    text = body
    for pattern, template, slot, what in (
        (_SHELL, cap.shell, "cmd", "runs a shell command (!{...})"),
        (_INCLUDE, cap.include, "path", "includes a file (@{...})"),
    ):
        if pattern.search(text) is None:
            continue
        if template is None:
            return None, f"its body {what}, which this harness cannot"
        head, tail = _slots(template, slot)
        text = pattern.sub(_wrap(head, tail), text)
    text = text.replace(ARGUMENTS, cap.arguments or ARGUMENTS)
    if parse_body(ctx, text) != body:
        return None, "its body has text this harness would read as a template"
    return text, ""


def parse_body(ctx: Context, text: str) -> str:
    """The neutral template of a native command body (each harness's own syntax read back)."""
    cap = ctx.capability
    arguments = cap.arguments or ARGUMENTS
    if arguments != ARGUMENTS:
        text = text.replace(arguments, ARGUMENTS)
    for template, slot, neutral in ((cap.shell, "cmd", "!{{{}}}"), (cap.include, "path", "@{{{}}}")):
        if template is None:
            continue
        head, tail = _slots(template, slot)
        if (head, tail) in (("!{", "}"), ("@{", "}")):
            continue  # the harness writes the neutral form itself
        if tail:
            pattern = re.escape(head) + r"([^\n]*?)" + re.escape(tail)
        else:
            pattern = r"(?<![\w@])" + re.escape(head) + r"([^\s{}]*[^\s{}.,;:!?)'\"])"
        text = re.sub(pattern, _wrap(neutral[:2], "}"), text)
    return text


# -- rule-dir -------------------------------------------------------------------------------------------


def _flag(value: Any) -> Any:
    """A fixed frontmatter value as the harness reads it: ``"true"``/``"false"`` are YAML booleans."""
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


class RuleDir(Engine):
    """One Markdown file per rule: path-scoped rules (``scoped_rules``), or always-on ones (``rules``).

    The capability names the frontmatter key of the globs (``globs``) and how
    they are written (``globs_format``: a list, or one comma-separated
    string), fixed keys (``frontmatter``: Cursor's ``alwaysApply: false``,
    Kiro's ``inclusion: fileMatch``), the file ending (``extension``), and in
    ``keys``: ``description``, and ``always`` = ``key=value`` alternatives
    (``|``; an empty one matches a file without the key) saying which files
    the harness always applies. Without ``always``, a file without globs is
    always-on (Claude's ``.claude/rules``).

    Import reads each file: with globs, a scoped rule; always-on, a rule
    without globs (named after the file); anything else (a rule applied by
    description or by hand) is dropped by name.
    """

    name = "rule-dir"
    kinds: frozenset[Kind] = frozenset({"scoped_rules", "rules"})

    def _ext(self, ctx: Context) -> str:
        return ctx.capability.extension or ".md"

    def render(self, ctx: Context, items: Sequence[Rule]) -> list[Output]:
        out = []
        key = ctx.capability.globs
        for rule in items:
            head: dict[str, Any] = {k: _flag(v) for k, v in ctx.capability.frontmatter.items()}
            if rule.description is not None:
                described = ctx.capability.keys.get("description")
                if described is None:
                    ctx.drop("rule", rule.name, "no description here", "description")
                else:
                    head[described] = rule.description
            if rule.globs:
                if key is None:
                    ctx.drop("path-scoped rule", rule.name, "no key for the globs here")
                    continue
                if ctx.capability.globs_format == "csv" and _tool_list(",".join(rule.globs)) != list(
                    rule.globs
                ):
                    ctx.drop("path-scoped rule", rule.name, "a glob with a comma cannot be written here")
                    continue
                globs = list(rule.globs)
                head[key] = ",".join(globs) if ctx.capability.globs_format == "csv" else globs
                if self._always(ctx, head):  # Copilot's `applyTo: "**"`: it would read back always-on
                    ctx.drop("path-scoped rule", rule.name, "this harness reads these globs as always-on")
                    continue
            out.append(Output(ctx.path / f"{rule.name}{self._ext(ctx)}", frontmatter(head, rule.text)))
        return out

    def _always(self, ctx: Context, data: dict[str, Any]) -> bool:
        marker = ctx.capability.keys.get("always")
        if marker is None:
            key = ctx.capability.globs
            return key is None or not data.get(key)
        key, _, values = marker.partition("=")
        if key not in data:
            return "" in values.split("|")
        value = data[key]
        written = str(value).lower() if isinstance(value, bool) else str(value)
        return written in [v for v in values.split("|") if v]

    def _shared(self, ctx: Context, other: str) -> bool:
        """Whether the adapter's ``other`` capability is this engine reading this same directory."""
        cap = getattr(ctx.adapter.spec.capabilities, other)
        mine = ctx.capability
        return (
            cap is not None
            and cap.render == self.name
            and (cap.path, cap.project) == (mine.path, mine.project)
        )

    def parse(self, ctx: Context) -> list[Rule]:
        if not ctx.path.is_dir():
            return []
        other = "rules" if ctx.kind == "scoped_rules" else "scoped_rules"
        shared = self._shared(ctx, other)
        rules = []
        others = self._others(ctx)
        for name, path in self._walk(ctx, ctx.path, ""):
            if path.relative_to(ctx.path).as_posix() in others:
                continue  # another capability's own file (Kiro's rules document in the steering directory)
            parsed = _markdown(ctx, "rule", name, path)
            if parsed is None:
                continue
            data, body = parsed
            always = self._always(ctx, data)
            if shared and always != (ctx.kind == "rules"):
                continue  # the other capability reads it
            found = self._read(ctx, name, path, data, body, always)
            if found is not None:
                rules.append(ctx.read_from(found, path))
        return rules

    def _others(self, ctx: Context) -> set[str]:
        """Files in this directory that another capability of the adapter writes and reads itself."""
        mine = ctx.capability
        found = set()
        for kind, cap in ctx.adapter.spec.capabilities:
            if cap is None or cap is mine or kind == ctx.kind:
                continue
            for theirs, base in ((cap.path, mine.path), (cap.project, mine.project)):
                if theirs and base and theirs.startswith(base.rstrip("/") + "/"):
                    found.add(theirs[len(base.rstrip("/")) + 1 :])
        return found

    def _walk(self, ctx: Context, directory: Path, prefix: str) -> Iterator[tuple[str, Path]]:
        ext = self._ext(ctx)
        for sub in (p for p in tree.entries(ctx, directory, "rule") if p.is_dir()):
            if prefix.count("-") < _MAX_DEPTH:
                yield from self._walk(ctx, sub, f"{prefix}{sub.name}-")
        for stem, path in _files(ctx, "rule", directory, ext, dirs=True):
            if _fit_name(ctx, "rule", prefix + stem, path):
                yield prefix + stem, path

    def _read(
        self, ctx: Context, name: str, path: Path, data: dict[str, Any], body: str, always: bool
    ) -> Rule | None:
        key = ctx.capability.globs
        marker = ctx.capability.keys.get("always", "").partition("=")[0]
        described = ctx.capability.keys.get("description")
        for extra in data:
            if extra in (key, marker, described) or extra in ctx.capability.frontmatter:
                continue
            ctx.drop("rule", name, f"{path}: tackroom has no word for {extra!r}", str(extra))
        description = data.get(described) if described else None
        if description is not None and not isinstance(description, str):
            ctx.drop("rule", name, f"{path}: {described}: not a string", "description")
            description = None
        description = description or None
        if always:
            return Rule(name, body, description=description)
        raw = data.get(key) if key else None
        if isinstance(raw, str) and ctx.capability.globs_format == "list":
            globs: list[str] | None = [raw.strip()] if raw.strip() else []  # one pattern, commas and all
        else:
            globs = _tool_list(raw) if raw is not None else None
        if globs is None:
            ctx.drop(
                "rule",
                name,
                f"{path}: {key}: not a list of globs"
                if raw is not None
                else f"{path}: applied neither always nor by globs (by description, by hand)",
            )
            return None
        if not globs:
            ctx.drop("rule", name, f"{path}: applied neither always nor by globs: no neutral form")
            return None
        return Rule(name, body, globs=tuple(globs), description=description)


ENGINES: list[Engine] = [Concat(), Dir(), RuleDir()]
