"""A run's own home: relocation directories, the git identity, credentials, staged config files.

An isolated run gets a fresh HOME under its run directory; the harness's
config-relocation variables point into it. Nothing here writes outside the
run directory, except the merge of staged files into a real home when the
caller asked for ``--home real``.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.adapters import templates
from tackroom.adapters.plan import StagedFile
from tackroom.errors import RunError
from tackroom.paths import Transaction, inside, read_inside, write_atomic
from tackroom.profile import jsonc

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter


def prepare_home(
    adapter: Adapter,
    run_dir: Path,
    home: Path | None,
    credentials: bool,
    environ: Mapping[str, str],
    copied: list[Path],
) -> None:
    """Make the run's home: relocation directories, the git identity, and credentials if asked.

    Every credential file copied in is listed in ``copied`` *before* it is
    copied, so :func:`remove_copies` can take them all out again however the
    run ends, even half-way through a copy.
    """
    (run_dir / "tmp").mkdir(exist_ok=True)
    if home is None:
        return
    home.mkdir(exist_ok=True)
    _copy_git_identity(environ, home)
    relocations: Mapping[str, str] = adapter.effective.get("home", {})
    for default in relocations.values():
        # Some harnesses refuse a relocation variable naming a directory that does not exist.
        templates.expand_path(default, env={}, home=str(home), workdir=str(run_dir)).mkdir(
            parents=True, exist_ok=True
        )
    if not credentials:
        return
    real = environ.get("HOME", str(Path.home()))
    for default in relocations.values():
        if default.strip() in ("~", "~/"):
            continue  # never copy a whole home
        source = templates.expand_path(default, env={}, home=real, workdir=str(run_dir))
        target = templates.expand_path(default, env={}, home=str(home), workdir=str(run_dir))
        if source.is_dir():
            copied += [target / rel for rel in _tree(source)]
            # Whole directories, so token refresh and SQLite sidecars keep working.
            shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)


def _tree(root: Path) -> list[Path]:
    """Every entry under ``root`` (relative), parents before children, links not followed."""
    found: list[Path] = []
    for directory, dirs, files in os.walk(root):
        base = Path(directory).relative_to(root)
        found += [base / name for name in sorted(dirs) + sorted(files)]
    return found


#: Files a harness writes beside a copied database while it runs.
_SIDECARS = ("-wal", "-shm", "-journal")


def remove_copies(copied: list[Path]) -> None:
    """Take the copied credentials out of the run's home again (and what SQLite wrote beside them)."""
    for path in reversed(copied):
        for candidate in (path, *(path.with_name(path.name + s) for s in _SIDECARS)):
            try:
                if candidate.is_symlink() or candidate.is_file():
                    candidate.unlink()
                elif candidate.is_dir():
                    candidate.rmdir()  # only when empty: what the harness wrote there stays
            except OSError:
                continue


_IDENTITY = ("user.name", "user.email")


def _copy_git_identity(environ: Mapping[str, str], home: Path) -> None:
    """Give the isolated home the caller's git identity, and nothing else of their git config.

    Without an identity some harnesses write one into the repository's own
    .git/config (aider sets user.name "Your Name"). Only ``user.name`` and
    ``user.email`` are copied: the rest of a git config can hold tokens
    (``url.<base>.insteadOf`` with a token in it, ``http.extraHeader``,
    credential helpers) that have no business in a run directory.
    """
    identity = _git_identity(environ, home)
    target = home / ".gitconfig"
    if not identity or target.exists():
        return
    lines = ["[user]"] + [f"\t{key.split('.')[1]} = {_git_quote(value)}" for key, value in identity.items()]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _git_identity(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """``user.name`` and ``user.email`` of the caller's global git config, as git reads it (includes too).

    Run in ``cwd`` (the empty run home), never in the project: git then reads
    no repository's config, so a planted one cannot make it run anything.
    """
    home = environ.get("HOME")
    xdg = environ.get("XDG_CONFIG_HOME") or (home and str(Path(home) / ".config"))
    read = [Path(home) / ".gitconfig"] if home else []
    read += [Path(xdg) / "git" / "config"] if xdg else []
    if not any(path.is_file() for path in read):
        return {}  # the only files `git config --global` reads: no git to ask, a few ms a run
    git = shutil.which("git", path=environ.get("PATH"))
    if git is None:
        return {}
    env = {k: v for k, v in environ.items() if k in ("HOME", "XDG_CONFIG_HOME", "PATH", "LANG")}
    try:
        done = subprocess.run(
            [git, "config", "--global", "--includes", "--null", "--get-regexp", r"^user\.(name|email)$"],
            cwd=cwd,
            env={**env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CEILING_DIRECTORIES": str(cwd.parent)},
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    identity: dict[str, str] = {}
    for entry in done.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = entry.partition("\n")
        if key in _IDENTITY and "\n" not in value:
            identity[key] = value
    return identity


def _git_quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def stage_files(files: tuple[StagedFile, ...], root: Path | None = None) -> None:
    """Write the plan's config files, merged into any already there, all of them or none.

    With ``root`` (the run's isolated home) every path is proven inside it and
    no link in it is followed (a copied config dir may hold links into the real
    home). Without one (``--home real``) the user's own links are theirs, and a
    file is written where its link leads. An existing file is read as the
    harnesses read it (comments and trailing commas allowed) and keeps
    everything tackroom does not set, comments included.
    """
    prepared: list[tuple[Path, bytes]] = []
    for staged in files:
        if staged.format not in ("json", "yaml", "toml"):
            raise RunError(f"cannot stage {staged.path}: writing {staged.format} is not supported yet")
        path = inside(root, staged.path) if root is not None else staged.path.resolve()
        existing = read_inside(root, path) if root is not None else _read_real(path)
        merge = _merged_toml if staged.format == "toml" else _merged
        prepared.append((path, merge(path, existing, staged.content)))
    if root is None:
        for path, data in prepared:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data, stat.S_IMODE(path.stat().st_mode) if path.exists() else None)
        return
    transaction = Transaction(root, durable=False)  # the run's own home, gone with its run
    for path, data in prepared:
        transaction.put(path, data)
    try:
        transaction.commit()
    except OSError as exc:
        raise RunError(f"cannot stage {exc.filename}: {exc.strerror or exc}") from exc


def _read_real(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError as exc:
        raise RunError(f"cannot read {path} to merge into it: {exc.strerror or exc}") from exc


def _merged(path: Path, raw: bytes | None, content: dict[str, Any]) -> bytes:
    """The file's new bytes: ``content`` merged into what is there, keeping every key and comment."""
    if raw is None or not raw.strip():
        return (jsonc.dumps(content) + "\n").encode("utf-8")
    fix = "fix it or move it aside, or use an isolated home (the default)"
    try:
        text = raw.decode("utf-8")
        existing = jsonc.loads(text)
    except UnicodeDecodeError as exc:
        raise RunError(f"cannot merge into {path}: it is not UTF-8; {fix}") from exc
    except jsonc.JsoncError as exc:
        raise RunError(f"cannot merge into {path}:{exc.line}: not JSON ({exc.message}); {fix}") from exc
    if not isinstance(existing, dict):
        raise RunError(f"cannot merge into {path}: it holds no JSON object; {fix}")
    merged = _deep_merge(existing, content)
    if not jsonc.has_comments(text):
        return (jsonc.dumps(merged) + "\n").encode("utf-8")
    try:
        for key_path in _leaves(existing, content):
            text = jsonc.set_member(text, key_path, _at(merged, key_path))
    except (jsonc.CommentLost, jsonc.JsoncError) as exc:
        raise RunError(f"cannot merge into {path} without losing a comment ({exc}); {fix}") from exc
    return text.encode("utf-8")


def _merged_toml(path: Path, raw: bytes | None, content: dict[str, Any]) -> bytes:
    """A TOML file's new bytes: ``content`` merged into its tables, comments and layout kept."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    fix = "fix it or move it aside, or use an isolated home (the default)"
    try:
        document = tomlkit.parse(raw.decode("utf-8") if raw else "")
        _merge_tables(document, content)
        return tomlkit.dumps(document).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunError(f"cannot merge into {path}: it is not UTF-8; {fix}") from exc
    except (TOMLKitError, RecursionError, ValueError, TypeError) as exc:
        raise RunError(f"cannot merge into {path}: not TOML tackroom can edit ({exc}); {fix}") from exc


def _merge_tables(table: Any, content: dict[str, Any]) -> None:
    for key, value in content.items():
        held = table.get(key)
        if isinstance(value, dict) and isinstance(held, dict):
            _merge_tables(held, value)
        else:
            table[key] = value


def _leaves(base: dict[str, Any], top: dict[str, Any], above: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The key paths :func:`_deep_merge` sets: where ``top`` has a value that is not merged further."""
    found = []
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            found += _leaves(base[key], value, (*above, key))
        else:
            found.append((*above, key))
    return found


def _at(data: dict[str, Any], key_path: tuple[str, ...]) -> Any:
    value: Any = data
    for key in key_path:
        value = value[key]
    return value


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out
