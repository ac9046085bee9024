"""Where the default profile layers live: the global one, then the project's.

Kept apart from the loader so a run can ask whether there is any profile to read without
importing what reads one.
"""

from __future__ import annotations

from pathlib import Path

from tackroom.errors import ConfigError, Problem, UnsafePathError
from tackroom.paths import inside

PROJECT_PROFILE = Path(".tackroom") / "profile"


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
