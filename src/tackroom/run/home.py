"""A run's own home: relocation directories, the git identity, credentials, staged config files.

An isolated run gets a fresh HOME under its run directory; the harness's
config-relocation variables point into it. Nothing here writes outside the
run directory, except the merge of staged files into a real home when the
caller asked for ``--home real``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.adapters import templates
from tackroom.errors import RunError
from tackroom.plan import StagedFile

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter


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


def stage_files(files: tuple[StagedFile, ...]) -> None:
    for staged in files:
        staged.path.parent.mkdir(parents=True, exist_ok=True)
        content = staged.content
        if staged.path.exists():
            content = _merge_existing(staged, content)
        # YAML is a superset of JSON: a JSON document is a valid models.yml.
        if staged.format in ("json", "yaml"):
            staged.path.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
        else:
            raise RunError(f"cannot stage {staged.path}: writing {staged.format} is not supported yet")


def _merge_existing(staged: StagedFile, content: dict[str, Any]) -> dict[str, Any]:
    """Merge into a file that is already there, keeping every key tackroom does not set."""
    text = staged.path.read_text(encoding="utf-8")
    if not text.strip():
        return content
    try:
        existing = json.loads(text)
    except ValueError as exc:
        raise RunError(
            f"cannot merge into {staged.path}: it is not JSON ({staged.format}); move it aside or use an "
            "isolated home"
        ) from exc
    return _deep_merge(existing, content) if isinstance(existing, dict) else content


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out
