"""Shared printing: JSON for machines, Rich for people (imported only when used)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def console(stderr: bool = False) -> Console:
    """A Rich console (stderr for progress and warnings)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)
