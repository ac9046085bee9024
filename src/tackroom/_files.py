"""Small file helpers shared by the caches: tolerant JSON reads, atomic writes, the cache dir."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

TYPE_CHECKING = False  # not typing's: the quickest commands import this module
if TYPE_CHECKING:
    from typing import Any


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/tackroom`` (default ``~/.cache/tackroom``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tackroom"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/tackroom`` (default ``~/.local/share/tackroom``)."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".local" / "share")
    return Path(base) / "tackroom"


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The operator configuration directory: ``$TACKROOM_CONFIG_DIR`` or ``$XDG_CONFIG_HOME/tackroom``."""
    env = os.environ if env is None else env
    if env.get("TACKROOM_CONFIG_DIR"):
        return Path(env["TACKROOM_CONFIG_DIR"]).expanduser()
    xdg = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(xdg) / "tackroom"


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``, or an empty dict when it is missing or unreadable (a cache miss)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: Any) -> None:
    """Write atomically; a cache that cannot be written is skipped, never an error."""
    write_text(path, json.dumps(data))


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` at once (a reader sees the old file or the new one); a cache
    that cannot be written is skipped, never an error."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
