"""A run's own home: relocation directories, the git identity, credentials, staged config files.

An isolated run gets a fresh HOME under its run directory; the harness's
config-relocation variables point into it. Nothing here writes outside the
run directory, except the merge of staged files into a real home when the
caller asked for ``--home real``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.adapters import templates
from tackroom.errors import RunError
from tackroom.plan import StagedFile

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
