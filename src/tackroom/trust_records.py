"""Trust records: the user's word about a directory, kept by content hash, and what it allows.

What a project can make run: the hooks and MCP servers of its
``.tackroom/profile``, and the project config a harness loads once its own
folder-trust check is turned off (each adapter's ``[trust] project`` paths,
such as ``.gemini`` or ``.codex``). A record keeps a hash of everything it
covers, and any change to it revokes the trust until the user looks again.

Records live in ``$XDG_DATA_HOME/tackroom/trust/``, one JSON file per
directory, written atomically. This module reads and writes them and answers
what a run may let its harness load (:func:`native_trust`); it needs no
adapter resolution and no profile, so planning a run can ask it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any, Literal, Protocol

from tackroom._files import data_dir
from tackroom._hash import sha256
from tackroom.errors import TrustError, UntrustedProjectError
from tackroom.repo import project_chain

PROFILE = ".tackroom/profile"
"""A project's profile, relative to the directory that holds it."""

State = Literal["trusted", "changed", "untrusted", "missing"]
_MAX_ENTRIES = 20_000
"""A project tree bigger than this is refused rather than hashed for minutes."""
_MAX_BYTES = 64 * 1024 * 1024
"""Nor is a file bigger than this (a link to /proc/kcore must not be read)."""
_MAX_KEYED_BYTES = 1024 * 1024
"""A ``project_keys`` file bigger than this counts without being parsed."""
_MAX_NAMED = 200
"""At most this many repository files named by hooks and servers are added to what trust covers."""
_SETTINGS = (".json", ".jsonc", ".toml", ".yaml", ".yml")
"""The files whose text names what runs (hooks, MCP servers); rules and prompts (``.md``) are read by
the model, not run, and name source files a user edits all day."""
_SCRIPTS = (".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1", ".exe")
_WORD = re.compile(r"[A-Za-z0-9_.${}/@+~-]+")
_VARIABLE = re.compile(r"^(?:\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)/")


class _Adapter(Protocol):
    """What trust reads of an adapter: its name, its harness and its ``[trust]`` table."""

    @property
    def name(self) -> str: ...

    @property
    def harness(self) -> str: ...

    @property
    def effective(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class TrustRecord:
    """The user's word about one directory: what it covered, and its hash then."""

    path: Path
    digest: str
    covers: tuple[str, ...]
    """Paths under ``path`` the hash covers (``.tackroom/profile`` and harness project config)."""
    trusted_at: float


@dataclass(frozen=True)
class TrustState:
    """Whether a directory is trusted now: never, yes, or once but it changed (or is gone) since."""

    path: Path
    state: State
    record: TrustRecord | None = None

    def covers(self, relative: str) -> bool:
        """Trusted now, and the trust covers ``relative``."""
        return self.state == "trusted" and self.record is not None and relative in self.record.covers

    def why_not(self) -> str:
        """Why this directory's parts are not used, and the fix, in words for the user."""
        fix = f"review it and run `tackroom trust {self.path}`"
        if self.state == "changed" and self.record is not None:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.record.trusted_at))
            return f"{self.path} changed since you trusted it ({when}); {fix}"
        if self.state == "trusted":
            return f"your trust of {self.path} does not cover this; {fix} again"
        return f"you have not trusted {self.path}; {fix}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict for ``tackroom trust --list --json``."""
        record = self.record
        return {
            "path": str(self.path),
            "state": self.state,
            "covers": list(record.covers) if record else [],
            "digest": record.digest if record else None,
            "trusted_at": record.trusted_at if record else None,
        }


def store_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where trust records are kept: ``$XDG_DATA_HOME/tackroom/trust``."""
    return data_dir(environ) / "trust"


def covered_paths(adapters: Iterable[_Adapter], profile: str = PROFILE) -> tuple[str, ...]:
    """The project's profile (``.tackroom/profile`` unless its project file names another) and every
    harness's project config that a trust flag would load."""
    native = {p for a in adapters for p in a.effective.get("trust", {}).get("project", ())}
    return (profile, *sorted(native - {profile}))


def revoke(path: Path, *, environ: Mapping[str, str] | None = None) -> Path:
    """Revoke the trust of ``path`` or the nearest parent that has one; return the directory.

    ``path`` need not exist any more: a deleted project's record can be revoked.
    """
    start = Path(os.path.realpath(path))
    for directory in (start, *start.parents):
        found = record_file(store_dir(environ), directory)
        if found.is_file() or found.is_symlink():
            found.unlink()
            return directory
    raise TrustError(f"{start} is not trusted (nor any directory above it); nothing to revoke")


def listing(environ: Mapping[str, str] | None = None) -> list[TrustState]:
    """Every trust record, each with its state now."""
    store = store_dir(environ)
    if not store.is_dir():
        return []
    states = [_state(record) for record in _records(store)]
    return sorted(states, key=lambda s: str(s.path))


def state_of(directory: Path, environ: Mapping[str, str] | None = None) -> TrustState:
    """Whether ``directory`` (exactly) is trusted now."""
    directory = Path(os.path.realpath(directory))
    record = _read(record_file(store_dir(environ), directory))
    if record is None or record.path != directory:
        return TrustState(directory, "untrusted")
    return _state(record)


def find_project(path: Path, covers: Sequence[str]) -> Path:
    """``path``, or the nearest parent up to the repository root, holding something trust covers."""
    start = directory_of(path)
    for directory in project_chain(start):
        if any(os.path.lexists(directory / rel) for rel in covers):
            return directory
    listed = ", ".join(covers)
    raise TrustError(f"nothing to trust in {start} or above it up to the repository root: no {listed}")


def digest(directory: Path, covers: Sequence[str]) -> str:
    """A hash of every entry under ``directory/<covered>``; a link counts as its target text, unfollowed."""
    sha = sha256()
    for relative, kind, data in _entries(directory, covers):
        sha.update(f"{len(relative)}:{relative}:{kind}:{len(data)}:".encode("utf-8", "surrogateescape"))
        sha.update(data)
    return sha.hexdigest()


def named_files(directory: Path, covers: Sequence[str]) -> tuple[str, ...]:
    """Files of the repository that the settings under ``covers`` name, outside ``covers``.

    A hook's ``./hook.sh`` or a server's ``node scripts/server.js`` is code the
    project runs as much as the setting that names it: trust must cover it, or
    editing the script after ``tackroom trust`` would run the edit unasked. Every
    word of a settings file (JSON, TOML, YAML) that reads as a relative path
    (``./x``, ``a/b``, ``$CLAUDE_PROJECT_DIR/x``, or a name ending like a
    script) is taken: a file there is hashed, and a script name with nothing
    there yet is covered as absent, so creating it revokes the trust too.
    """
    found: set[str] = set()
    for relative in sorted(set(covers)):
        for path in _walk(directory / relative):
            if path.suffix.lower() not in _SETTINGS or not path.is_file():
                continue
            try:
                if path.stat().st_size > _MAX_KEYED_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for word in _WORD.findall(text):
                named = _named(directory, covers, word)
                if named is not None:
                    found.add(named)
                    if len(found) >= _MAX_NAMED:
                        return tuple(sorted(found))
    return tuple(sorted(found))


def _named(directory: Path, covers: Sequence[str], word: str) -> str | None:
    """The repository path ``word`` names, when it is one trust must cover; else None."""
    word = _VARIABLE.sub("", word.rstrip(".,;:")).removeprefix("./")
    if not word or word.startswith(("/", "~", "$", "{", "-")) or "$" in word or "{" in word:
        return None
    parts = word.split("/")
    if ".." in parts or "" in parts or any(part.startswith("@") for part in parts):
        return None
    if any(word == cover or word.startswith(cover.rstrip("/") + "/") for cover in covers):
        return None  # covered already
    path = directory / word
    if path.is_file():
        return word
    return word if word.lower().endswith(_SCRIPTS) and not os.path.lexists(path) else None


# -- what a run uses --------------------------------------------------------------------------


@dataclass(frozen=True)
class NativeTrust:
    """What a run may let its harness load of the project: the adapter's ``[trust]`` table applied."""

    allowed: bool
    """No directory from the workdir up to the repository root holds project config the user has not
    trusted: the flags that let the harness load it (``argv``, ``env``) are given; otherwise those
    that keep it from it (``untrusted_argv``, ``untrusted_env``) are."""
    note: str | None = None
    """What was withheld or kept from the harness, and why, with the fix."""
    held: bool = False
    """Some directory holds project config (which, when ``allowed``, the user trusted)."""


def native_trust(adapter: _Adapter, workdir: Path, environ: Mapping[str, str]) -> NativeTrust:
    """Which of the adapter's trust flags a run in ``workdir`` gets, and what it says about them.

    A project's ``project`` paths (config the harness can run code from) are
    used only after ``tackroom trust``. A harness that loads them on its own
    and has no flag that keeps it from them is refused: an
    :class:`UntrustedProjectError` names the files and the fix.
    """
    table: Mapping[str, Any] = adapter.effective.get("trust", {})
    held = _project_config(table.get("project", ()), workdir, table.get("project_keys", {}))
    for directory, found in held:
        state = state_of(directory, environ)
        if not all(state.covers(rel) for rel in found):
            return _untrusted(adapter, table, directory, found, state)
    return NativeTrust(allowed=True, held=bool(held))


def _untrusted(
    adapter: _Adapter, table: Mapping[str, Any], directory: Path, found: Sequence[str], state: TrustState
) -> NativeTrust:
    opens = [*table.get("argv", ()), *(f"{k}={v}" for k, v in table.get("env", {}).items())]
    closes = any(table.get(key) for key in ("untrusted_argv", "untrusted_env", "untrusted_files"))
    holds = f"{directory} holds {', '.join(found)}, project config the harness"
    if not opens and not closes:
        raise UntrustedProjectError(
            f"{adapter.harness} (adapter {adapter.name!r}) was not started: {holds} loads and runs on its "
            f"own (hooks, MCP servers, plugins) with no flag to keep it from them, and {state.why_not()}"
        )
    said = [f"withheld {shlex.join(opens)}: {holds} would then load"] if opens else []
    if closes:
        said.append(
            f"kept from loading {', '.join(found)} of {directory}: what a project's config runs (hooks, "
            "MCP servers, plugins) is used only after you trust it"
        )
    note = f"{adapter.harness}: {'; '.join(said)}, and {state.why_not()}"
    return NativeTrust(allowed=False, note=note, held=True)


def _project_config(
    paths: Sequence[str], workdir: Path, keys: Mapping[str, Sequence[str]]
) -> list[tuple[Path, list[str]]]:
    """Each directory from ``workdir`` up to the repository root holding some of ``paths``, with them."""
    held = [(d, [rel for rel in paths if _holds(d / rel, keys.get(rel, ()))]) for d in project_chain(workdir)]
    return [(directory, found) for directory, found in held if found]


def _holds(path: Path, keys: Sequence[str]) -> bool:
    """Whether ``path`` is there and counts: with ``keys``, only a JSON object holding one of them
    (or a file that is not a plain, readable, small JSON object)."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if not keys:
        return True
    if not S_ISREG(info.st_mode) or info.st_size > _MAX_KEYED_BYTES:
        return True
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return True
    return not isinstance(data, dict) or any(key in data for key in keys)


# -- the store --------------------------------------------------------------------------------


def directory_of(path: Path) -> Path:
    """``path`` resolved, which must be a directory."""
    resolved = Path(os.path.realpath(path))
    if not resolved.is_dir():
        raise TrustError(f"{path} is not a directory")
    return resolved


def record_file(store: Path, directory: Path) -> Path:
    """The file in ``store`` that holds the record of ``directory``."""
    key = sha256(str(directory).encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return store / f"{key}.json"


def write_record(store: Path, record: TrustRecord) -> None:
    """Write ``record`` into ``store``, atomically."""
    store.mkdir(parents=True, exist_ok=True)
    target = record_file(store, record.path)
    data = {
        "path": str(record.path),
        "digest": record.digest,
        "covers": list(record.covers),
        "trusted_at": record.trusted_at,
    }
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(target)  # atomic: a reader sees the old record or the new, never half


def _read(path: Path) -> TrustRecord | None:
    """A record, or None for a missing or damaged file (a damaged record trusts nothing)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        record = TrustRecord(
            Path(data["path"]),
            str(data["digest"]),
            tuple(str(c) for c in data["covers"]),
            float(data["trusted_at"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(data["covers"], list) or not record.path.is_absolute():
        return None
    return record


def _records(store: Path) -> Iterator[TrustRecord]:
    for path in sorted(store.glob("*.json")):
        record = _read(path)
        if record is not None and path == record_file(store, record.path):
            yield record


def _state(record: TrustRecord) -> TrustState:
    if not record.path.is_dir():
        return TrustState(record.path, "missing", record)
    try:
        now = digest(record.path, record.covers)
    except TrustError:
        return TrustState(record.path, "changed", record)
    return TrustState(record.path, "trusted" if now == record.digest else "changed", record)


def _entries(directory: Path, covers: Sequence[str]) -> Iterator[tuple[str, str, bytes]]:
    count = 0
    for relative in sorted(set(covers)):
        for path in _walk(directory / relative):
            count += 1
            if count > _MAX_ENTRIES:
                raise TrustError(f"{directory} holds more than {_MAX_ENTRIES} files to trust; refusing")
            name = str(path.relative_to(directory))
            yield name, *_content(path)


def _walk(path: Path) -> Iterator[Path]:
    """``path`` and everything below it in name order, however deep.

    Links are followed (what a link points at is what the harness reads, so a
    change there must revoke the trust too), each real directory once, so a
    link cycle ends.
    """
    stack = [path] if os.path.lexists(path) else []
    seen: set[str] = set()
    while stack:
        current = stack.pop()
        yield current
        real = os.path.realpath(current)
        if real in seen or not current.is_dir():
            continue
        seen.add(real)
        try:
            children = sorted(current.iterdir(), reverse=True)
        except OSError:
            continue
        stack.extend(children)


def _content(path: Path) -> tuple[str, bytes]:
    """What an entry is and holds; a link is its target text and then what it points at."""
    try:
        if path.is_symlink():
            target = str(path.readlink()).encode("utf-8", "surrogateescape")
            kind, data = _content(Path(os.path.realpath(path))) if path.exists() else ("dangling", b"")
            return f"link:{kind}", target + b"\0" + data
        if path.is_dir():
            return "dir", b""
        if path.is_file():
            size = path.stat().st_size
            if size > _MAX_BYTES:
                raise TrustError(f"{path} is {size} bytes, too big to trust (at most {_MAX_BYTES})")
            return "file", path.read_bytes()
    except OSError as exc:
        return "unreadable", str(exc).encode("utf-8", "surrogateescape")
    return "other", b""
