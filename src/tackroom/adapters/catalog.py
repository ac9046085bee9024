"""The adapter catalog (``adapters list``), cached so a listing does not pay for validation.

Resolving and validating every adapter needs pydantic and a TOML parser,
which cost more than the rest of a ``tackroom adapters list`` together. The
rows only change when an input file changes, so they are cached under
``$XDG_CACHE_HOME/tackroom/``, keyed on the size and modification time of
every file that can change them: the built-in tables, the adapter code, the
operator files and the project file. A load that fails is never cached, so
errors are reported on every run. ``TACKROOM_NO_CACHE=1`` skips the cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from tackroom._files import cache_dir, read_json, write_json
from tackroom.adapters.resolve import BUILTIN_DIR, config_dir, find_project_file, operator_files

CACHE_VERSION = "1"


def catalog(*, project: Path | None = None, config: Path | None = None) -> list[dict[str, Any]]:
    """One row per adapter: name, family, extends, source, executable, verified_with, hash."""
    directory = config if config is not None else config_dir()
    inputs = _inputs(directory, project)
    if os.environ.get("TACKROOM_NO_CACHE"):
        return _rows(directory, project)
    key = _key(inputs)
    path = cache_dir() / f"catalog-{hashlib.sha256(str(directory).encode()).hexdigest()[:16]}.json"
    cached = read_json(path)
    if cached.get("key") == key:
        rows: list[dict[str, Any]] = cached["rows"]
        return rows
    rows = _rows(directory, project)
    write_json(path, {"key": key, "rows": rows})
    return rows


def _rows(directory: Path, project: Path | None) -> list[dict[str, Any]]:
    from tackroom.adapters.resolve import load_adapters

    adapters = load_adapters(config=directory, project=project)
    return [
        {
            "name": a.name,
            "family": a.family,
            "extends": a.extends,
            "source": a.source,
            "executable": a.spec.executable,
            "verified_with": a.spec.verified_with,
            "hash": a.hash,
        }
        for a in adapters.values()
    ]


def _inputs(directory: Path, project: Path | None) -> list[Path]:
    code = Path(__file__).parent
    files = sorted(BUILTIN_DIR.glob("*.toml")) + sorted(code.glob("*.py"))
    files += operator_files(directory)
    project_file = find_project_file(project) if project is not None else None
    if project_file is not None:
        files.append(project_file)
    return files


def _key(files: list[Path]) -> str:
    parts = [CACHE_VERSION]
    for path in files:
        stat = path.stat()
        parts.append(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
