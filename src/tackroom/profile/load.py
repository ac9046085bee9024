"""Read a profile directory strictly: every problem names its file and line, all in one pass.

Layout::

    rules/<name>.md                 sections of the rules document; frontmatter (optional):
                                    globs (path-scoped), description
    skills/<name>/SKILL.md (+files) frontmatter: name, description, allowed-tools, model,
                                    argument-hint
    agents/<name>.md                frontmatter: name, description, tools, disallowed-tools,
                                    model, reasoning, temperature
    commands/[<ns>/]<name>.md       frontmatter: description, allowed-tools, model,
                                    argument-hint; the body a template ($ARGUMENTS, $1,
                                    !{cmd}, @{path}); commands/git/commit.md is git:commit
    mcp.toml                        [servers.<name>] command/args/env/cwd or url/headers,
                                    transport, timeout, tool_timeout, auto_approve, disabled
    hooks.toml                      [hooks.<name>] moment, matcher, timeout, source
                                    (session-start: startup, resume, clear, compact),
                                    command | inject | refuse
    permissions.toml                [permissions] allow / ask / deny (tool references)
    env.toml                        [env] the session environment
    native/<harness>/settings.json  keys of that harness's settings, kept as it wrote them
    native/<harness>/files/...      files under its configuration directory, kept as they are
    native/<harness>/origins.json   the native files imported items came from, to render them
                                    back as they were (:mod:`tackroom.profile.origins`)

Tools, hook matchers and permission rules are tool references and models are
model references (:mod:`tackroom.profile.tools`). Descriptions and names in
frontmatter are optional, as the harnesses treat them; frontmatter is read as
the harnesses read it (:mod:`tackroom.profile.frontmatter`).

Any item may say ``harnesses = [...]`` (frontmatter: ``harnesses: [...]``).
Directories layer: a later one's item replaces an earlier one's of the same
kind and name (the project's ``.tackroom/profile`` over the global one).

A profile may come from a stranger's repository, so every file in it is
hostile until parsed: a symbolic link anywhere in it (an entry, a rule, a
skill directory, a file of a skill, ``mcp.toml``) is a load error naming it,
never a read of what it points at; so is a FIFO or device, bytes that are not
UTF-8, and nesting deeper than any profile needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from tackroom._format import Table
from tackroom.errors import ConfigError, Problem, UnsafePathError
from tackroom.paths import read_inside
from tackroom.profile import format as fmt
from tackroom.profile.model import (
    Agent,
    Command,
    Hook,
    HookAction,
    McpServer,
    Native,
    Origin,
    Patch,
    Permissions,
    Profile,
    Rule,
    Skill,
)
from tackroom.profile.places import PROJECT_PROFILE as PROJECT_PROFILE
from tackroom.profile.places import profile_dirs as profile_dirs
from tackroom.profile.tools import BadReference, check_tools, parse_model
from tackroom.redact import inline_secret, inline_secret_in_args, is_secret_header, is_secret_name
from tackroom.vocabulary import ALL_MOMENTS, REASONING, SESSION_SOURCES

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
"""A profile item's name: it becomes a file or directory name in every harness's layout."""
ENV_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


def check_profile_name(name: str) -> bool:
    """Whether ``name`` may name a profile item (it becomes a file or directory name)."""
    return isinstance(name, str) and bool(NAME.fullmatch(name)) and ".." not in name


def check_command_name(name: str) -> bool:
    """Whether ``name`` may name a command: profile names joined by ``:`` (``git:commit``), at most 4."""
    parts = name.split(":") if isinstance(name, str) else []
    return 0 < len(parts) <= 4 and all(check_profile_name(p) for p in parts)


def check_item_name(kind: str, name: str) -> bool:
    """Whether ``name`` may name an item of ``kind`` (a command may be namespaced)."""
    return check_command_name(name) if kind in ("commands", "command") else check_profile_name(name)


def load_profile(dirs: Iterable[Path], harnesses: Iterable[str] | None = None) -> Profile:
    """Read and layer profile directories; ``harnesses`` (if given) are the names items may name.

    >>> import tackroom, tempfile, pathlib
    >>> profile = pathlib.Path(tempfile.mkdtemp())
    >>> (profile / "rules").mkdir()
    >>> (profile / "rules" / "style.md").write_text("Prefer small functions.\\n")
    24
    >>> [rule.name for rule in tackroom.load_profile([profile]).rules]
    ['style']
    """
    reader = _Reader(set(harnesses) if harnesses is not None else None)
    layers = [reader.read_dir(d) for d in dirs]
    if reader.problems:
        raise ConfigError(reader.problems)
    merged: dict[str, dict[str, Any]] = {k: {} for k in _LISTS}
    permissions = Permissions()
    env: dict[str, str] = {}
    for layer in layers:
        for kind, items in layer.items():
            if kind == "permissions":
                permissions = items[0] if items else permissions  # a later file replaces an earlier one
            elif kind == "env":
                env.update(dict(items))
            else:
                merged[kind].update({item.name: item for item in items})

    def pick(kind: str) -> tuple[Any, ...]:
        return tuple(item for _, item in sorted(merged[kind].items()))

    return Profile(
        rules=pick("rules"),
        skills=pick("skills"),
        agents=pick("agents"),
        commands=pick("commands"),
        mcp=pick("mcp"),
        hooks=pick("hooks"),
        permissions=permissions,
        env=tuple(sorted(env.items())),
        native=pick("native"),
        origins=tuple(reader.origins.values()),
        sources=tuple(str(d) for d in dirs),
    )


_LISTS = ("rules", "skills", "agents", "commands", "mcp", "hooks", "native")


class _Reader:
    def __init__(self, harnesses: set[str] | None) -> None:
        self.harnesses = harnesses
        self.problems: list[Problem] = []
        self.origins: dict[tuple[str, str, str], Origin] = {}
        """Origins by (adapter, scope, path): a later directory's replaces an earlier one's."""

    def problem(self, path: Path, key: str, message: str, line: int | None = None) -> None:
        self.problems.append(Problem(str(path), key, message, line))

    def read_dir(self, root: Path) -> dict[str, list[Any]]:
        known = {entry.split("/")[0] for entry, _ in fmt.ENTRIES}
        empty: dict[str, list[Any]] = {k: [] for k in (*_LISTS, "permissions", "env")}
        if not root.is_dir():
            self.problem(root, "", "no such profile directory: create it, or name an existing one")
            return empty
        for entry in sorted(root.iterdir()):
            if entry.is_symlink():
                self.problem(entry, "", _LINK)
            elif entry.name not in known and not entry.name.startswith("."):
                self.problem(entry, "", f"unknown profile entry; a profile holds {', '.join(sorted(known))}")
        return {
            "rules": list(self._markdown(root / "rules", self._rule)),
            "skills": list(self._skills(root / "skills")),
            "agents": list(self._markdown(root / "agents", self._agent)),
            "commands": list(self._markdown(root / "commands", self._command, nested=True)),
            "mcp": list(self._mcp(root / "mcp.toml")),
            "hooks": list(self._hooks(root / "hooks.toml")),
            "permissions": list(self._permissions(root / "permissions.toml")),
            "env": list(self._env(root / "env.toml")),
            "native": list(self._native(root / "native")),
        }

    # -- markdown items --------------------------------------------------------------------

    def _entries(self, directory: Path) -> list[Path]:
        """The entries of one of the profile's directories; none when it is missing or a link."""
        if directory.is_symlink() or not directory.is_dir():
            return []  # a link was reported with the profile's own entries
        return sorted(directory.iterdir())

    def _markdown(self, directory: Path, make: Any, nested: bool = False, prefix: str = "") -> Iterator[Any]:
        for path in self._entries(directory):
            if path.is_symlink():
                self.problem(path, "", _LINK)
                continue
            if nested and path.is_dir() and prefix.count(":") < 3:
                if self._name_ok(path, path.name):
                    yield from self._markdown(path, make, nested, f"{prefix}{path.name}:")
                continue
            if path.suffix != ".md" or not path.is_file():
                what = "<name>.md files and namespace directories" if nested else "<name>.md files"
                self.problem(path, "", f"expected only {what} here")
                continue
            parsed = self._frontmatter(path) if self._name_ok(path, path.stem) else None
            item = make(path, *parsed) if parsed is not None else None
            if item is not None:
                yield item if not prefix else replace(item, name=prefix + item.name)

    def _name_ok(self, path: Path, name: str) -> bool:
        if check_profile_name(name):
            return True
        self.problem(
            path,
            "name",
            f"bad name {name!r}: lowercase letters, digits, '.', '_' and '-' only, at most 128 characters",
        )
        return False

    def _text(self, path: Path) -> str | None:
        """The UTF-8 text of one profile file, or None after reporting why it cannot be read."""
        try:
            data = read_inside(path.parent, path.name)
        except UnsafePathError as exc:
            self.problem(path, "", f"not read: {exc}")
            return None
        if data is None:
            self.problem(path, "", "vanished while the profile was read")
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            self.problem(path, "", f"not UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start})", line)
            return None

    def _frontmatter(self, path: Path) -> tuple[dict[str, Any], str, dict[str, int]] | None:
        """(data, body, key lines), or None after reporting a frontmatter that does not parse."""
        from tackroom.profile import frontmatter

        text = self._text(path)
        if text is None:
            return None
        raw, body = frontmatter.split(frontmatter.normalize(text))
        if raw is None:
            return {}, body, {}
        lines = {
            m.group(1): n + 2
            for n, line in enumerate(raw.splitlines())
            if (m := re.match(r"^(\w[\w-]*)\s*:", line))
        }
        try:
            data = frontmatter.parse_head(raw)
        except frontmatter.FrontmatterError as exc:
            self.problem(path, "", exc.message, exc.line)
            return None
        return data, body, lines

    def _fields(
        self,
        path: Path,
        data: dict[str, Any],
        lines: dict[str, int],
        allowed: dict[str, str],
        required: Iterable[str],
    ) -> dict[str, Any] | None:
        """Check frontmatter keys and types; ``allowed`` maps key -> 'str' | 'list' | 'number' | 'tools'
        | 'model' | 'reasoning'."""
        ok = True
        for key, value in data.items():
            kind = allowed.get(str(key))
            if kind is None:
                self.problem(
                    path, str(key), f"unknown key; allowed: {', '.join(allowed)}", lines.get(str(key))
                )
                ok = False
            elif kind == "str" and not isinstance(value, str):
                self.problem(path, str(key), "must be a string", lines.get(str(key)))
                ok = False
            elif kind in ("list", "tools") and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                self.problem(path, str(key), "must be a list of strings", lines.get(str(key)))
                ok = False
            elif kind == "tools" and (bad := check_tools(value, self.harnesses)):
                self.problem(path, str(key), "; ".join(bad), lines.get(str(key)))
                ok = False
            elif kind == "number" and (isinstance(value, bool) or not isinstance(value, int | float)):
                self.problem(path, str(key), "must be a number", lines.get(str(key)))
                ok = False
            elif kind == "model" and (problem := _model_problem(value)):
                self.problem(path, str(key), problem, lines.get(str(key)))
                ok = False
            elif kind == "reasoning" and value not in REASONING:
                self.problem(path, str(key), f"must be one of {', '.join(REASONING)}", lines.get(str(key)))
                ok = False
        for key in required:
            if not data.get(key):
                self.problem(path, key, "required", 1)
                ok = False
        if ok and "harnesses" in data:
            ok = self._harnesses(path, data["harnesses"], lines.get("harnesses"))
        return data if ok else None

    def _harnesses(self, path: Path, names: list[str], line: int | None) -> bool:
        unknown = [n for n in names if self.harnesses is not None and n not in self.harnesses]
        if unknown:
            self.problem(path, "harnesses", f"unknown harness {', '.join(map(repr, unknown))}", line)
        return not unknown

    def _rule(self, path: Path, data: dict[str, Any], body: str, lines: dict[str, int]) -> Rule | None:
        fields = self._fields(path, data, lines, fmt.RULE.kinds(), ())
        if fields is None:
            return None
        return Rule(
            path.stem,
            body,
            tuple(fields.get("harnesses", ())),
            tuple(fields.get("globs", ())),
            fields.get("description"),
        )

    def _agent(self, path: Path, data: dict[str, Any], body: str, lines: dict[str, int]) -> Agent | None:
        fields = self._fields(path, data, lines, fmt.AGENT.kinds(), ())
        if fields is None or not self._same_name(path, fields, path.stem, lines):
            return None
        temperature = fields.get("temperature")
        return Agent(
            path.stem,
            fields.get("description", ""),
            body,
            tuple(fields.get("tools", ())),
            fields.get("model"),
            tuple(fields.get("harnesses", ())),
            tuple(fields.get("disallowed-tools", ())),
            fields.get("reasoning"),
            float(temperature) if temperature is not None else None,
        )

    def _command(self, path: Path, data: dict[str, Any], body: str, lines: dict[str, int]) -> Command | None:
        fields = self._fields(path, data, lines, fmt.COMMAND.kinds(), ())
        if fields is None:
            return None
        tools = fields.get("allowed-tools")
        return Command(
            path.stem,
            fields.get("description", ""),
            body,
            tuple(fields.get("harnesses", ())),
            tuple(tools) if tools is not None else None,
            fields.get("model"),
            fields.get("argument-hint"),
        )

    def _same_name(self, path: Path, fields: dict[str, Any], expected: str, lines: dict[str, int]) -> bool:
        if fields.get("name", expected) == expected:
            return True
        self.problem(
            path,
            "name",
            f"{fields['name']!r} must match the file or directory name {expected!r}",
            lines.get("name"),
        )
        return False

    # -- skills ----------------------------------------------------------------------------

    def _skills(self, directory: Path) -> Iterator[Skill]:
        for skill_dir in self._entries(directory):
            if skill_dir.is_symlink():
                self.problem(skill_dir, "", _LINK)
                continue
            if not skill_dir.is_dir():
                self.problem(skill_dir, "", "expected only skill directories (<name>/SKILL.md) here")
                continue
            skill = skill_dir / "SKILL.md"
            if not self._name_ok(skill_dir, skill_dir.name):
                continue
            if not skill.is_file() and not skill.is_symlink():
                self.problem(skill_dir, "", "a skill directory needs a SKILL.md")
                continue
            parsed = self._frontmatter(skill)
            if parsed is None:
                continue
            data, body, lines = parsed
            fields = self._fields(skill, data, lines, fmt.SKILL.kinds(), ())
            if fields is None or not self._same_name(skill, fields, skill_dir.name, lines):
                continue
            files = tuple(self._skill_files(skill_dir, skill_dir))
            tools = fields.get("allowed-tools")
            yield Skill(
                skill_dir.name,
                fields.get("description", ""),
                body,
                files,
                tuple(fields.get("harnesses", ())),
                tuple(tools) if tools is not None else None,
                fields.get("model"),
                fields.get("argument-hint"),
            )

    def _skill_files(self, skill_dir: Path, directory: Path) -> Iterator[tuple[str, bytes]]:
        """Every other file of a skill, walked without following a link (each one is a problem)."""
        for path in sorted(directory.iterdir()):
            rel = str(path.relative_to(skill_dir))
            if rel == "SKILL.md":
                continue  # read (or refused) as the skill itself
            if path.is_symlink():
                self.problem(path, "", _LINK)
            elif path.is_dir():
                yield from self._skill_files(skill_dir, path)
            else:
                try:
                    data = read_inside(path.parent, path.name)
                except UnsafePathError as exc:
                    self.problem(path, "", f"not read: {exc}")
                    continue
                if data is not None:
                    yield rel, data

    # -- TOML items ------------------------------------------------------------------------

    def _toml(self, path: Path, table: str) -> Iterator[tuple[str, dict[str, Any], Any]]:
        if path.is_symlink() or not path.exists():
            return  # a link was reported with the profile's own entries
        from tackroom.adapters.tomlsource import parse_toml

        text = self._text(path)
        if text is None:
            return
        try:
            source = parse_toml(text, str(path))
        except ConfigError as exc:
            self.problems.extend(exc.problems)
            return
        except RecursionError:
            self.problem(path, "", "TOML nested too deeply")
            return
        for key in source.data:
            if key != table:
                self.problem(
                    path, key, f"unknown key; this file holds [{table}.<name>] tables", source.line_of((key,))
                )
        tables = source.data.get(table, {})
        if not isinstance(tables, dict):
            self.problem(path, table, f"must be a table of [{table}.<name>] tables", source.line_of((table,)))
            return
        for name, data in tables.items():
            line = source.line_of((table, name))
            if not isinstance(data, dict):
                self.problem(path, f"{table}.{name}", "must be a table", line)
            elif self._name_ok(path, name):
                yield name, data, lambda k, n=name: source.line_of((table, n, k))

    def _check_keys(
        self, path: Path, where: str, data: dict[str, Any], types: dict[str, type], line: Any
    ) -> bool:
        ok = True
        for key, value in data.items():
            if key not in types:
                self.problem(path, f"{where}.{key}", f"unknown key; allowed: {', '.join(types)}", line(key))
                ok = False
            elif not _typed(value, types[key]):
                self.problem(path, f"{where}.{key}", f"must be {_WORD[types[key].__name__]}", line(key))
                ok = False
        return ok and (
            ("harnesses" not in data) or self._harnesses(path, data["harnesses"], line("harnesses"))
        )

    def _mcp(self, path: Path) -> Iterator[McpServer]:
        types = _types(fmt.SERVER)
        for name, data, line in self._toml(path, "servers"):
            where = f"servers.{name}"
            if not self._check_keys(path, where, data, types, line):
                continue
            if ("command" in data) == ("url" in data):
                self.problem(path, where, "set exactly one of command (stdio) or url", line(""))
                continue
            transport = data.get("transport", "stdio" if "command" in data else "http")
            if transport not in (("stdio",) if "command" in data else ("sse", "http")):
                allowed = "stdio" if "command" in data else "sse or http"
                self.problem(path, f"{where}.transport", f"must be {allowed} here", line("transport"))
                continue
            if not self._no_inline_secrets(path, where, data, line):
                continue
            yield McpServer(
                name,
                data.get("command"),
                tuple(data.get("args", ())),
                tuple(sorted(data.get("env", {}).items())),
                data.get("url"),
                tuple(sorted(data.get("headers", {}).items())),
                tuple(data.get("harnesses", ())),
                data.get("transport"),
                _float(data.get("timeout")),
                _float(data.get("tool_timeout")),
                tuple(data.get("auto_approve", ())),
                bool(data.get("disabled", False)),
                data.get("cwd"),
            )

    def _no_inline_secrets(self, path: Path, where: str, data: dict[str, Any], line: Any) -> bool:
        """A credential written out in the profile (by name, in a URL, a header or an argument) fails."""
        found: list[tuple[str, str, str]] = []
        for table in ("env", "headers"):
            for key, value in data.get(table, {}).items():
                secret = is_secret_name(key) or (table == "headers" and is_secret_header(key))
                what = "a secret value" if secret and not ENV_REF.search(value) else inline_secret(value)
                if what:
                    found.append((f"{where}.{table}.{key}", what, table))
        for key in ("url", "command"):
            what = inline_secret(data[key]) if isinstance(data.get(key), str) else None
            if what:
                found.append((f"{where}.{key}", what, key))
        what = inline_secret_in_args(data.get("args", []))
        if what:
            found.append((f"{where}.args", what, "args"))
        for key, what, at in found:
            self.problem(path, key, _INLINE_SECRET.format(what=what), line(at))
        return not found

    def _hooks(self, path: Path) -> Iterator[Hook]:
        types = _types(fmt.HOOK)
        for name, data, line in self._toml(path, "hooks"):
            where = f"hooks.{name}"
            if not self._check_keys(path, where, data, types, line):
                continue
            moment = data.get("moment")
            if moment not in ALL_MOMENTS:
                self.problem(
                    path,
                    f"{where}.moment",
                    f"unknown moment {moment!r}; moments: {', '.join(ALL_MOMENTS)}",
                    line("moment"),
                )
                continue
            actions = [a for a in ("command", "inject", "refuse") if a in data]
            if len(actions) != 1:
                self.problem(path, where, "set exactly one of command, inject or refuse", line(""))
                continue
            what = inline_secret(data["command"]) if "command" in data else None
            if what:
                self.problem(path, f"{where}.command", _INLINE_SECRET.format(what=what), line("command"))
                continue
            bad = check_tools(data.get("matcher", []), self.harnesses)
            if bad:
                self.problem(path, f"{where}.matcher", "; ".join(bad), line("matcher"))
                continue
            source = data.get("source", [])
            wrong = self._source_problem(moment, source)
            if wrong:
                self.problem(path, f"{where}.source", wrong, line("source"))
                continue
            action: HookAction = (
                "command" if actions[0] == "command" else "inject" if actions[0] == "inject" else "refuse"
            )
            yield Hook(
                name,
                moment,
                action,
                command=data.get("command"),
                text=data.get("inject") or data.get("refuse"),
                matcher=tuple(data.get("matcher", ())),
                harnesses=tuple(data.get("harnesses", ())),
                timeout=_float(data.get("timeout")),
                source=tuple(source),
            )

    @staticmethod
    def _source_problem(moment: str, source: list[Any]) -> str | None:
        """What is wrong with a hook's ``source`` (the session starts it is for), if anything."""
        if not source:
            return None
        if moment != "session-start":
            return f"only a session-start hook selects how the session started (this one is {moment})"
        unknown = [s for s in source if s not in SESSION_SOURCES]
        if unknown:
            return f"unknown start {str(unknown[0])[:40]!r}; starts: {', '.join(SESSION_SOURCES)}"
        if len(set(source)) != len(source):
            return "a start is named twice"
        return None

    def _single(self, path: Path, table: str) -> tuple[dict[str, Any], Any] | None:
        """The one ``[table]`` of a TOML file (None when the file is absent or after a problem)."""
        if path.is_symlink() or not path.exists():
            return None
        from tackroom.adapters.tomlsource import parse_toml

        text = self._text(path)
        if text is None:
            return None
        try:
            source = parse_toml(text, str(path))
        except ConfigError as exc:
            self.problems.extend(exc.problems)
            return None
        except RecursionError:
            self.problem(path, "", "TOML nested too deeply")
            return None
        ok = True
        for key in source.data:
            if key != table:
                self.problem(
                    path, key, f"unknown key; this file holds one [{table}] table", source.line_of((key,))
                )
                ok = False
        data = source.data.get(table, {})
        if not isinstance(data, dict):
            self.problem(path, table, "must be a table", source.line_of((table,)))
            return None
        return (data, lambda k: source.line_of((table, k))) if ok else None

    def _permissions(self, path: Path) -> Iterator[Permissions]:
        found = self._single(path, "permissions")
        if found is None:
            return
        data, line = found
        types = _types(fmt.PERMISSIONS)
        if not self._check_keys(path, "permissions", data, types, line):
            return
        ok = True
        for key in ("allow", "ask", "deny"):
            bad = check_tools(data.get(key, []), self.harnesses)
            if bad:
                self.problem(path, f"permissions.{key}", "; ".join(bad), line(key))
                ok = False
        if ok:
            yield Permissions(
                tuple(data.get("allow", ())),
                tuple(data.get("ask", ())),
                tuple(data.get("deny", ())),
                tuple(data.get("harnesses", ())),
            )

    def _env(self, path: Path) -> Iterator[tuple[str, str]]:
        found = self._single(path, "env")
        if found is None:
            return
        data, line = found
        for key, value in data.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) or not isinstance(value, str):
                self.problem(path, f"env.{key}", 'each entry is NAME = "value" (a string)', line(key))
            elif (is_secret_name(key) and not ENV_REF.search(value)) or inline_secret(value):
                what = "a secret value" if is_secret_name(key) else inline_secret(value)
                self.problem(path, f"env.{key}", _INLINE_SECRET.format(what=what), line(key))
            else:
                yield key, value

    def _native(self, directory: Path) -> Iterator[Native]:
        """``native/<harness>/``: ``settings.json`` (an object) and ``files/...``, kept as they are."""
        import json

        for harness_dir in self._entries(directory):
            if harness_dir.is_symlink():
                self.problem(harness_dir, "", _LINK)
                continue
            if not harness_dir.is_dir() or not self._name_ok(harness_dir, harness_dir.name):
                self.problem(harness_dir, "", "expected only <harness>/ directories here")
                continue
            if self.harnesses is not None and harness_dir.name not in self.harnesses:
                self.problem(harness_dir, "", f"unknown harness {harness_dir.name!r}")
                continue
            settings: tuple[tuple[str, Any], ...] = ()
            files: tuple[tuple[str, bytes], ...] = ()
            only_origins = False
            for entry in self._entries(harness_dir):
                if entry.is_symlink():
                    self.problem(entry, "", _LINK)
                elif entry.name == "origins.json" and entry.is_file():
                    self._origins(entry, harness_dir.name)
                    only_origins = True
                elif entry.name == "settings.json" and entry.is_file():
                    text = self._text(entry)
                    try:
                        data = json.loads(text) if text is not None else {}
                    except (ValueError, RecursionError) as exc:
                        self.problem(entry, "", f"not JSON: {exc}")
                        continue
                    if not isinstance(data, dict):
                        self.problem(entry, "", "must be a JSON object of settings keys")
                        continue
                    settings = tuple(sorted(data.items()))
                elif entry.name == "files" and entry.is_dir():
                    files = tuple(self._skill_files(entry, entry))
                else:
                    self.problem(entry, "", "a native directory holds settings.json, files/ and origins.json")
            if settings or files or not only_origins:
                yield Native(harness_dir.name, settings, files)

    def _origins(self, path: Path, harness: str) -> None:
        """``native/<harness>/origins.json``: the native files imported items came from, as they were."""
        import json

        text = self._text(path)
        try:
            data = json.loads(text) if text is not None else {"origins": []}
        except (ValueError, RecursionError) as exc:
            self.problem(path, "", f"not JSON: {exc}")
            return
        entries = data.get("origins") if isinstance(data, dict) and set(data) == {"origins"} else None
        if not isinstance(entries, list):
            self.problem(path, "", 'must be {"origins": [...]}')
            return
        for n, entry in enumerate(entries):
            origin = _origin(entry, harness)
            if isinstance(origin, str):
                self.problem(path, f"origins[{n}]", origin)
            else:
                self.origins[origin.adapter, origin.scope, origin.path] = origin


_ORIGIN_KEYS = {"adapter", "scope", "path", "items"}
_ORIGIN_DATA = ({"text"}, {"base64"}, {"patch", "sha256", "bom", "crlf"}, {"patch", "sha256", "bom"})


def _origin(entry: Any, harness: str) -> Origin | str:
    """One entry of ``origins.json``, or what is wrong with it."""
    import base64
    import binascii

    from tackroom.profile.origins import safe_path

    if not isinstance(entry, dict) or not set(entry) >= _ORIGIN_KEYS:
        return f"an origin has {', '.join(sorted(_ORIGIN_KEYS))}, and text, base64 or patch and sha256"
    rest = set(entry) - _ORIGIN_KEYS
    if rest and not any(rest <= allowed and rest & {"text", "base64", "patch"} for allowed in _ORIGIN_DATA):
        return f"unknown or mixed keys {', '.join(sorted(rest))}: text, base64, or patch with sha256"
    items = entry["items"]
    if not (
        all(isinstance(entry[k], str) for k in ("adapter", "path"))
        and entry["scope"] in ("home", "project")
        and safe_path(entry["path"])
        and isinstance(items, list)
        and all(isinstance(i, list) and len(i) == 3 and all(isinstance(v, str) for v in i) for i in items)
    ):
        return "adapter, scope (home or project), a relative path, [kind, name, digest] items"
    said = tuple((a, b, c) for a, b, c in items)
    origin = Origin(entry["adapter"], harness, entry["scope"], entry["path"], said)
    try:
        if isinstance(entry.get("text"), str):
            return replace(origin, data=entry["text"].encode("utf-8"))
        if isinstance(entry.get("base64"), str):
            return replace(origin, data=base64.b64decode(entry["base64"], validate=True))
    except (binascii.Error, UnicodeEncodeError):
        return "text: not the file's bytes"
    if "patch" not in entry:
        return "text: not the file's bytes" if rest else origin
    patch = _patch(entry)
    return replace(origin, patch=patch) if patch is not None else "patch: [first, end, [lines]] edits, sha256"


def _patch(entry: dict[str, Any]) -> Patch | None:
    edits, sha = entry["patch"], entry.get("sha256")
    flags = [entry.get(k, False) for k in ("bom", "crlf")]
    if not (isinstance(edits, list) and isinstance(sha, str) and all(isinstance(f, bool) for f in flags)):
        return None
    found = []
    for edit in edits:
        if not (
            isinstance(edit, list)
            and len(edit) == 3
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in edit[:2])
            and isinstance(edit[2], list)
            and all(isinstance(line, str) for line in edit[2])
        ):
            return None
        found.append((edit[0], edit[1], tuple(edit[2])))
    return Patch(tuple(found), sha, *flags)


_WORD = {
    "str": "a string",
    "list": "a list of strings",
    "dict": "a table of strings",
    "float": "a number of seconds (0 or more)",
    "bool": "true or false",
}
_LINK = "a symbolic link: tackroom reads no link in a profile (it could point anywhere); copy the file in"
_INLINE_SECRET = (
    'inline secret ({what}): write a reference like "${{MY_TOKEN}}" and keep the value in the environment'
)


def _types(table: Table) -> dict[str, type]:
    """A TOML table's keys and the Python type each value must have."""
    return {key.name: fmt.PY_TYPES[key.kind] for key in table.keys}


def _float(value: Any) -> float | None:
    return float(value) if value is not None else None


def _model_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    try:
        parse_model(value)
    except BadReference as exc:
        return str(exc)
    return None


def _typed(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    if kind is bool:
        return isinstance(value, bool)
    if not isinstance(value, kind):
        return False
    if isinstance(value, dict):
        return all(isinstance(v, str) for v in value.values())
    if isinstance(value, list):
        return all(isinstance(v, str) for v in value)
    return True
