"""Read a profile directory strictly: every problem names its file and line, all in one pass.

Layout::

    rules/<name>.md                 sections of the rules document (frontmatter optional)
    skills/<name>/SKILL.md (+files) frontmatter: name, description
    agents/<name>.md                frontmatter: name, description, tools (neutral), model
    commands/<name>.md              frontmatter: description; $ARGUMENTS in the body
    mcp.toml                        [servers.<name>] command/args/env or url/headers
    hooks.toml                      [hooks.<name>] moment, matcher, command | inject | refuse

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
from pathlib import Path
from typing import Any

from tackroom.errors import ConfigError, Problem, UnsafePathError
from tackroom.paths import inside, read_inside
from tackroom.plan import is_secret_name
from tackroom.profile.model import Agent, Command, Hook, HookAction, McpServer, Profile, Rule, Skill
from tackroom.redact import inline_secret, inline_secret_in_args, is_secret_header
from tackroom.vocabulary import MOMENTS, NEUTRAL_TOOLS

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
"""A profile item's name: it becomes a file or directory name in every harness's layout."""
ENV_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")
PROJECT_PROFILE = Path(".tackroom") / "profile"


def check_profile_name(name: str) -> bool:
    """Whether ``name`` may name a profile item (it becomes a file or directory name)."""
    return isinstance(name, str) and bool(NAME.fullmatch(name)) and ".." not in name


def profile_dirs(project: Path | None, config: Path) -> list[Path]:
    """The default profile directories that exist: global first, then the project's."""
    dirs = [config / "profile"]
    if project is not None:
        from tackroom.project import load_project

        # The project file may name its profile directory (checked inside the repository there).
        found = load_project(project)
        base = found.root if found is not None else project
        relative = found.profile_dir.relative_to(found.root) if found is not None else PROJECT_PROFILE
        try:
            # A repository's ".tackroom" may be a planted link: never read a profile through it.
            dirs.append(inside(base, relative))
        except UnsafePathError as exc:
            raise ConfigError([Problem(str(base / relative), "", f"not read: {exc}")]) from exc
    return [d for d in dirs if d.is_dir()]


def load_profile(dirs: Iterable[Path], harnesses: Iterable[str] | None = None) -> Profile:
    """Read and layer profile directories; ``harnesses`` (if given) are the names items may name."""
    reader = _Reader(set(harnesses) if harnesses is not None else None)
    layers = [reader.read_dir(d) for d in dirs]
    if reader.problems:
        raise ConfigError(reader.problems)
    merged: dict[str, dict[str, Any]] = {
        k: {} for k in ("rules", "skills", "agents", "commands", "mcp", "hooks")
    }
    for layer in layers:
        for kind, items in layer.items():
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
        sources=tuple(str(d) for d in dirs),
    )


class _Reader:
    def __init__(self, harnesses: set[str] | None) -> None:
        self.harnesses = harnesses
        self.problems: list[Problem] = []

    def problem(self, path: Path, key: str, message: str, line: int | None = None) -> None:
        self.problems.append(Problem(str(path), key, message, line))

    def read_dir(self, root: Path) -> dict[str, list[Any]]:
        known = {"rules", "skills", "agents", "commands", "mcp.toml", "hooks.toml"}
        empty: dict[str, list[Any]] = {
            k: [] for k in ("rules", "skills", "agents", "commands", "mcp", "hooks")
        }
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
            "commands": list(self._markdown(root / "commands", self._command)),
            "mcp": list(self._mcp(root / "mcp.toml")),
            "hooks": list(self._hooks(root / "hooks.toml")),
        }

    # -- markdown items --------------------------------------------------------------------

    def _entries(self, directory: Path) -> list[Path]:
        """The entries of one of the profile's directories; none when it is missing or a link."""
        if directory.is_symlink() or not directory.is_dir():
            return []  # a link was reported with the profile's own entries
        return sorted(directory.iterdir())

    def _markdown(self, directory: Path, make: Any) -> Iterator[Any]:
        for path in self._entries(directory):
            if path.is_symlink():
                self.problem(path, "", _LINK)
                continue
            if path.suffix != ".md" or not path.is_file():
                self.problem(path, "", "expected only <name>.md files here")
                continue
            parsed = self._frontmatter(path) if self._name_ok(path, path.stem) else None
            item = make(path, *parsed) if parsed is not None else None
            if item is not None:
                yield item

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
        text = self._text(path)
        if text is None:
            return None
        if not text.startswith("---\n"):
            return {}, text, {}
        end = text.find("\n---\n", 3)
        if end < 0:
            self.problem(path, "", "frontmatter opened with '---' is never closed", 1)
            return None
        raw, body = text[4 : end + 1], text[end + 5 :]
        lines = {
            m.group(1): n + 2
            for n, line in enumerate(raw.splitlines())
            if (m := re.match(r"^(\w[\w-]*)\s*:", line))
        }
        import yaml

        try:
            data = yaml.safe_load(raw) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            self.problem(path, "", f"bad frontmatter: {exc}".splitlines()[0], mark.line + 2 if mark else 1)
            return None
        except RecursionError:
            self.problem(path, "", "bad frontmatter: nested too deeply", 2)
            return None
        if not isinstance(data, dict):
            self.problem(path, "", "frontmatter must be a mapping of keys to values", 2)
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
        """Check frontmatter keys and types; ``allowed`` maps key -> 'str' | 'list'."""
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
            elif kind == "list" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                self.problem(path, str(key), "must be a list of strings", lines.get(str(key)))
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
        fields = self._fields(path, data, lines, {"harnesses": "list"}, ())
        if fields is None:
            return None
        return Rule(path.stem, body, tuple(fields.get("harnesses", ())))

    def _agent(self, path: Path, data: dict[str, Any], body: str, lines: dict[str, int]) -> Agent | None:
        allowed = {"name": "str", "description": "str", "tools": "list", "model": "str", "harnesses": "list"}
        fields = self._fields(path, data, lines, allowed, ("name", "description"))
        if fields is None or not self._same_name(path, fields, path.stem, lines):
            return None
        tools = tuple(fields.get("tools", ()))
        bad = [t for t in tools if t not in NEUTRAL_TOOLS]
        if bad:
            self.problem(
                path,
                "tools",
                f"not neutral tool names: {bad} (known: {', '.join(NEUTRAL_TOOLS)})",
                lines.get("tools"),
            )
            return None
        return Agent(
            path.stem,
            fields["description"],
            body,
            tools,
            fields.get("model"),
            tuple(fields.get("harnesses", ())),
        )

    def _command(self, path: Path, data: dict[str, Any], body: str, lines: dict[str, int]) -> Command | None:
        fields = self._fields(
            path, data, lines, {"description": "str", "harnesses": "list"}, ("description",)
        )
        if fields is None:
            return None
        return Command(path.stem, fields["description"], body, tuple(fields.get("harnesses", ())))

    def _same_name(self, path: Path, fields: dict[str, Any], expected: str, lines: dict[str, int]) -> bool:
        if fields["name"] == expected:
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
            allowed = {"name": "str", "description": "str", "harnesses": "list"}
            fields = self._fields(skill, data, lines, allowed, ("name", "description"))
            if fields is None or not self._same_name(skill, fields, skill_dir.name, lines):
                continue
            files = tuple(self._skill_files(skill_dir, skill_dir))
            yield Skill(
                skill_dir.name, fields["description"], body, files, tuple(fields.get("harnesses", ()))
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
        types: dict[str, type] = {
            "command": str,
            "args": list,
            "env": dict,
            "url": str,
            "headers": dict,
            "harnesses": list,
        }
        for name, data, line in self._toml(path, "servers"):
            where = f"servers.{name}"
            if not self._check_keys(path, where, data, types, line):
                continue
            if ("command" in data) == ("url" in data):
                self.problem(path, where, "set exactly one of command (stdio) or url", line(""))
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
        types: dict[str, type] = {
            "moment": str,
            "matcher": list,
            "command": str,
            "inject": str,
            "refuse": str,
            "harnesses": list,
        }
        for name, data, line in self._toml(path, "hooks"):
            where = f"hooks.{name}"
            if not self._check_keys(path, where, data, types, line):
                continue
            moment = data.get("moment")
            if moment not in MOMENTS:
                self.problem(
                    path,
                    f"{where}.moment",
                    f"unknown moment {moment!r}; moments: {', '.join(MOMENTS)}",
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
            bad = [t for t in data.get("matcher", ()) if t not in NEUTRAL_TOOLS]
            if bad:
                self.problem(path, f"{where}.matcher", f"not neutral tool names: {bad}", line("matcher"))
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
            )


_WORD = {"str": "a string", "list": "a list of strings", "dict": "a table of strings"}
_LINK = "a symbolic link: tackroom reads no link in a profile (it could point anywhere); copy the file in"
_INLINE_SECRET = (
    'inline secret ({what}): write a reference like "${{MY_TOKEN}}" and keep the value in the environment'
)


def _typed(value: Any, kind: type) -> bool:
    if not isinstance(value, kind):
        return False
    if isinstance(value, dict):
        return all(isinstance(v, str) for v in value.values())
    if isinstance(value, list):
        return all(isinstance(v, str) for v in value)
    return True
