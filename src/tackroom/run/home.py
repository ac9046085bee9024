"""A run's own home: relocation directories, the git identity, credentials, staged config files.

An isolated run gets a fresh HOME under its run directory; the harness's
config-relocation variables point into it. Nothing here writes outside the
run directory, except the merge of staged files into a real home when the
caller asked for ``--home real``.
"""

from __future__ import annotations

import shutil
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.adapters import templates
from tackroom.errors import RunError
from tackroom.paths import Transaction, inside, read_inside, write_atomic
from tackroom.plan import StagedFile
from tackroom.profile import jsonc

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter


def prepare_home(
    adapter: Adapter, run_dir: Path, home: Path | None, credentials: bool, environ: Mapping[str, str]
) -> None:
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
            # Whole directories, so token refresh and SQLite sidecars keep working.
            shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)


def _copy_git_identity(environ: Mapping[str, str], home: Path) -> None:
    """Copy the caller's git config into the isolated home.

    Without an identity some harnesses write one into the repository's own
    .git/config (aider sets user.name "Your Name"); a copy keeps the user's
    identity without letting the harness write to the real file.
    """
    real = Path(environ.get("HOME", str(Path.home())))
    for rel in (".gitconfig", ".config/git/config"):
        source = real / rel
        if source.is_file() and not (home / rel).exists():
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, home / rel)


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
        if staged.format not in ("json", "yaml"):
            raise RunError(f"cannot stage {staged.path}: writing {staged.format} is not supported yet")
        path = inside(root, staged.path) if root is not None else staged.path.resolve()
        existing = read_inside(root, path) if root is not None else _read_real(path)
        prepared.append((path, _merged(path, existing, staged.content)))
    if root is None:
        for path, data in prepared:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data, stat.S_IMODE(path.stat().st_mode) if path.exists() else None)
        return
    transaction = Transaction(root)
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
