"""The project file: ``tackroom.toml`` at a repository root.

A project file may *select* an adapter (``harness``), set option values
(``[options]``), name the project's profile directory (``profile``) and ask
for a sandbox (``sandbox``, ``network``: a project can only ask for more
isolation than the default, never less); it may
never define or change an adapter (a cloned repository must not change how a
harness is launched). Defining ``[adapter.*]`` is rejected by the resolver;
this module checks the rest of the file and turns it into a :class:`Project`.

What a run uses is decided in one order everywhere: a flag (or argument)
first, then the project file, then the default.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from tackroom.errors import ConfigError, OptionError, Problem, UnsafePathError
from tackroom.vocabulary import OPTION_KINDS

PROJECT_KEYS = ("harness", "options", "profile", "sandbox", "network")
DEFAULT_PROFILE = Path(".tackroom") / "profile"
"""Where a project's profile lives unless its project file says ``profile = "..."``."""


@dataclass(frozen=True)
class Project:
    """A repository's checked ``tackroom.toml``: what it selects, never what it defines."""

    file: Path
    """The project file."""
    harness: str | None = None
    """The adapter a run uses when none is named."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Option values (coerced), under any option given as a flag."""
    profile: Path | None = None
    """The project's profile directory when the file names one (inside :attr:`root`)."""
    sandbox: str | None = None
    """The sandbox a run uses when none is asked for (``bwrap``)."""
    network: str | None = None
    """The network a run gets when none is asked for (``none``: only its model endpoint)."""

    @property
    def root(self) -> Path:
        """The repository root: the directory holding the project file."""
        return self.file.parent

    @property
    def profile_dir(self) -> Path:
        """The project's profile directory: the one the file names, else ``.tackroom/profile``."""
        return self.profile if self.profile is not None else self.root / DEFAULT_PROFILE

    def options_with(self, flags: Mapping[str, Any] | None) -> dict[str, Any]:
        """This project's options with ``flags`` on top (a flag wins, per option)."""
        return {**self.options, **(flags or {})}


def load_project(start: Path) -> Project | None:
    """The project file of the repository holding ``start``, checked; None when it has none.

    Every problem (unknown key, bad option value, a profile outside the
    repository) is reported in one :class:`ConfigError` naming file, line and key.
    """
    from tackroom.repo import find_project_file

    path = find_project_file(start)
    if path is None:
        return None
    from tackroom.adapters.tomlsource import load_toml  # a TOML parser only for a file to parse

    source = load_toml(path)
    problems = [
        Problem(str(path), ".".join(key), message, source.line_of(key))
        for key, message in check_project_data(source.data, path.parent)
    ]
    if problems:
        raise ConfigError(problems)
    from tackroom.options import coerce_option
    from tackroom.paths import inside

    data = source.data
    profile = data.get("profile")
    return Project(
        file=path,
        harness=data.get("harness"),
        options={name: coerce_option(name, value) for name, value in data.get("options", {}).items()},
        profile=inside(path.parent, profile) if profile is not None else None,
        sandbox=data.get("sandbox"),
        network=data.get("network"),
    )


def check_project_data(
    data: dict[str, Any], root: Path | None = None
) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every problem of a project file's data, as (key path, message); ``adapter`` is checked elsewhere.

    With ``root`` (the repository root) the profile directory is checked on disk too.
    """
    for key, value in data.items():
        if key == "adapter":
            continue
        if key not in PROJECT_KEYS:
            yield (key,), f"unknown key; a project file may set {', '.join(PROJECT_KEYS)}"
        elif key == "harness" and (not isinstance(value, str) or not value):
            yield (key,), 'must be the name of an adapter, e.g. harness = "claude-code"'
        elif key == "profile":
            yield from _profile(value, root)
        elif key == "options":
            yield from _options(value)
        elif key == "sandbox":
            from tackroom._dists import entry_points

            names = sorted(entry_points("tackroom.sandboxes"))
            if value not in names:
                yield (key,), f"must name a sandbox: {', '.join(names)}"
        elif key == "network" and value not in ("host", "none"):
            yield (key,), 'must be "host" or "none" (nothing but the model endpoint; needs a sandbox)'


def _options(value: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    if not isinstance(value, dict):
        yield ("options",), "must be a table of option values"
        return
    from tackroom.options import coerce_option

    for name, item in value.items():
        if name not in OPTION_KINDS:
            yield ("options", name), f"unknown option; options are {', '.join(OPTION_KINDS)}"
            continue
        try:
            coerce_option(name, item)
        except OptionError as exc:
            yield ("options", name), str(exc)


def _profile(value: Any, root: Path | None) -> Iterator[tuple[tuple[str, ...], str]]:
    if not isinstance(value, str) or not value.strip():
        yield (
            ("profile",),
            'must be a directory relative to the project root, e.g. profile = ".tackroom/profile"',
        )
        return
    if PurePath(value).is_absolute() or "\0" in value:
        yield ("profile",), f"{value!r} must be relative to the project root (and stay inside it)"
        return
    if root is None:
        return
    from tackroom.paths import inside

    try:
        path = inside(root, value)
    except UnsafePathError as exc:
        yield ("profile",), f"must stay inside the project root {str(root)!r}: {exc}"
        return
    if not path.is_dir():
        yield ("profile",), f"{str(path)!r} is not a directory; create it or fix the path"
