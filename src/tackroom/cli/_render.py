"""What ``tackroom profile render`` does, without the CLI framework: the full command
(:mod:`tackroom.cli.profile`) and its quick form (:mod:`tackroom.cli.quick`) share it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tackroom.profile.model import Profile
    from tackroom.profile.render import Rendered


def load(dirs: list[Path]) -> Profile:
    """The profile from ``dirs`` (the user's word), or the default global + project layers.

    By default a project's hooks and MCP servers are used only once the user
    trusted the project (``tackroom trust``); ``Profile.withheld`` says what was
    left out.
    """
    from tackroom.adapters.resolve import resolve_builtins
    from tackroom.profile.load import load_profile

    if not dirs:
        from tackroom.trust import default_profile

        return default_profile(Path.cwd(), harnesses=resolve_builtins())
    return load_profile(dirs, harnesses=resolve_builtins())


def report(rendered: Rendered) -> dict[str, Any]:
    """One render as ``--json`` prints it."""
    return rendered.to_json() | {
        "written": [str(p) for p in rendered.written],
        "removed": [str(p) for p in rendered.removed],
        "kept": list(rendered.kept),
    }
