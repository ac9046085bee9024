"""The one exception tree of tackroom.

Every error the library raises on purpose is a :class:`TackroomError`; the CLI
catches that class once, prints the message to stderr and exits 1. Anything
else is a bug and gets a traceback.

Two groups say what a caller (an evaluation, a retry loop) should do next:
:class:`CellError`, the run as asked is wrong (a retry fails the same way: fix
it), and :class:`HostError`, this machine could not run it (a retry, an
install, or another host may help). A run's error says which ``adapter`` it
was for and, once its harness had started, its ``run_dir``.

::

    TackroomError
     ├── CellError              the run as asked is wrong: do not retry it, fix it
     │    ├── ConfigError            adapter / project / profile files: every problem, in one pass
     │    │    ├── TaskError              a Harbor task directory that cannot be run as it is
     │    │    ├── MatrixError            an evaluation's matrix file that cannot be run
     │    │    └── EvaluationExistsError  a new evaluation in a directory that holds one (resume it)
     │    ├── ProfileError           a profile that cannot be rendered or imported as asked (nothing written)
     │    ├── UnsafePathError        a name or path that would leave its root, or a link out of it
     │    ├── TrustError             a trust record that cannot be made or revoked as asked
     │    │    └── UntrustedProjectError  a run refused: its harness would run an untrusted project's config
     │    ├── OptionError            an option the selected adapter cannot render
     │    │    └── UnsupportedOptionError
     │    ├── TemplateError          a template that cannot be expanded with what was given
     │    ├── UnknownAdapterError    a name no built-in or operator table defines
     │    ├── DetectionError         no harness named, and the repository does not say which one
     │    ├── MockScriptError        a mock model script that does not parse (also a MockError)
     │    └── RunSpecError           a run's values that cannot make a run (also a RunError)
     ├── HostError              this machine could not run it: a retry, an install or another host may help
     │    ├── FamilyError            a family that is not registered, or registered badly
     │    ├── InstallError           a harness that could not be installed
     │    ├── RegistryError          a package registry that could not say which release is newest
     │    ├── HarnessNotFoundError   the executable is not installed and not on PATH
     │    ├── HarnessVersionError    the installed harness is older than the adapter's min_version
     │    ├── StateError             the state database cannot be used: corrupt, foreign, newer, unwritable
     │    ├── GatewayError           the gateway cannot start or store as asked (address, upstream URL, store)
     │    ├── SandboxError           a sandbox not installed here, without namespaces, or registered badly
     │    ├── RayUnavailableError    the ray executor without Ray installed, or a cluster that does not answer
     │    └── LaunchError            no run directory can be made, or a file staged into it (also a RunError)
     ├── MockError              the mock model server cannot start as asked (port, address, log file)
     ├── RunError               a run that could not be started or followed: RunSpecError or LaunchError
     ├── ProbeError             a probe that cannot be run as asked (an unknown capability, bad jobs)
     ├── RowError               a capability row or an external probe's output that does not parse
     ├── StreamLineError        a line of harness output a family cannot use (it becomes an error event)
     ├── TraceError             a transcript or session that cannot be read or found as asked
     └── ConformanceError       an adapter that fails the conformance kit (also an AssertionError, for tests)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

TYPE_CHECKING = False  # not typing's: the quickest commands import this module
if TYPE_CHECKING:
    from pathlib import Path


class TackroomError(Exception):
    """Base class of every error tackroom raises on purpose.

    >>> import tackroom
    >>> try:
    ...     tackroom.load_adapters()["no-such"]
    ... except tackroom.TackroomError as exc:
    ...     print(type(exc).__name__)
    UnknownAdapterError
    """

    adapter: str | None = None
    """The adapter of the run that raised it (None outside a run, or before one was chosen)."""
    run_dir: Path | None = None
    """The run's directory, kept, when the harness had started (a run that fails before leaves none)."""


class CellError(TackroomError):
    """The run as asked is wrong (its configuration, an option, the profile, a template, the
    project's trust, the adapter's name): the same run fails the same way until it is fixed.

    >>> import tackroom
    >>> try:
    ...     tackroom.plan_run(tackroom.load_adapters()["codex"], "hi", options={"no_such": 1})
    ... except tackroom.CellError as exc:
    ...     print(type(exc).__name__, "-", str(exc)[:33])
    OptionError - unknown option 'no_such'; options
    """


class HostError(TackroomError):
    """This machine could not run it (the harness not installed or too old, an install or a
    registry, the state database, the gateway): a retry, an install, or another host may help.

    >>> import tackroom
    >>> issubclass(tackroom.HarnessNotFoundError, tackroom.HostError)
    True
    >>> issubclass(tackroom.UnknownAdapterError, tackroom.HostError)  # a name no one defines: fix it
    False
    """


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a configuration file: where, which key, and what."""

    file: str
    key: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class ConfigError(CellError):
    """One or more problems found while loading configuration.

    All problems found in one load are reported together, sorted by file and
    line, so one fix-and-retry cycle can fix them all.
    """

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(
            sorted(problems, key=lambda p: (p.file, p.line or 0, p.key, p.message))
        )
        super().__init__(self._render())

    def _render(self) -> str:
        if len(self.problems) == 1:
            return str(self.problems[0])
        lines = [f"{len(self.problems)} configuration problems:"]
        lines.extend(f"  {p}" for p in self.problems)
        return "\n".join(lines)


class ProfileError(CellError):
    """A profile cannot be rendered or imported as asked (nothing was written)."""


class UnsafePathError(CellError):
    """A name or path would leave the directory it belongs in, or follow a link out of it."""


class TrustError(CellError):
    """``tackroom trust`` cannot do what was asked: nothing to trust there, or nothing to revoke."""


class UntrustedProjectError(TrustError):
    """A run refused: its harness loads the project's executable config on its own, and the user has
    not trusted the project (``tackroom trust``)."""


class OptionError(CellError):
    """An option value that cannot be used with the selected adapter."""


class UnsupportedOptionError(OptionError):
    """The adapter has no rendering for an option: fail closed, never drop it."""

    def __init__(self, *, harness: str, adapter: str, option: str, supported: Sequence[str]) -> None:
        self.harness = harness
        self.adapter = adapter
        self.option = option
        self.supported = tuple(supported)
        listed = ", ".join(self.supported) or "none"
        super().__init__(
            f"harness {harness!r} (adapter {adapter!r}) has no rendering for option "
            f"{option!r}; drop the option or select an adapter that supports it "
            f"(supported here: {listed})"
        )


class TemplateError(CellError):
    """A template could not be expanded with the values given."""


class UnknownAdapterError(CellError):
    """No built-in or operator table defines this adapter name."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = tuple(known)
        super().__init__(f"unknown adapter {name!r}; known adapters: {', '.join(self.known)}")


class FamilyError(HostError):
    """A family is missing from the registry or does not satisfy the interface."""


class InstallError(HostError):
    """A harness could not be installed."""


class RegistryError(HostError):
    """A package registry could not say which release of a harness is newest.

    Unreachable, too slow, the package unknown to it, or an answer that is not
    a version: the message says which.
    """


class HarnessNotFoundError(HostError):
    """The harness executable is neither installed by tackroom nor on PATH."""


class HarnessVersionError(HostError):
    """The harness is older than the oldest version its adapter works with (``min_version``)."""


class MockError(TackroomError):
    """The mock model server cannot start as asked: a bad or taken port, an address, a log file."""


class MockScriptError(MockError, CellError):
    """A mock model script is malformed."""


class RunError(TackroomError):
    """A run could not be started or followed; :class:`RunSpecError` and :class:`LaunchError` say which
    group (catching ``RunError`` still catches both)."""


class RunSpecError(RunError, CellError):
    """A run's values that cannot make a run (a :class:`~tackroom.run.spec.RunSpec`'s checks): a
    timeout that is no duration, two endpoints at once, a working directory that is none, an
    unknown field in a spec's JSON."""


class SandboxError(HostError):
    """A sandbox that cannot run here (not installed, no namespaces) or is registered badly."""


class LaunchError(RunError, HostError):
    """This machine could not set the run up: no run directory can be made, a file cannot be staged."""


class ProbeError(TackroomError):
    """A probe cannot be run as asked: an unknown capability, nothing to probe."""


class RowError(TackroomError, ValueError):
    """A capability row (or an external probe's output) that does not parse; the whole row is rejected."""


class StateError(HostError):
    """The state database cannot be used: not a database, another program's, a newer tackroom's, read-only."""


class StreamLineError(TackroomError, ValueError):
    """A line of harness output that looks like its structure but cannot be used (e.g. nested too deep).

    Family code raises it (through ``json_line``); the run turns it into a
    non-fatal error event that keeps the line, so it never reaches a caller.
    """


class TraceError(TackroomError):
    """A transcript, session or usage report that cannot be read or found as asked."""


class GatewayError(HostError):
    """The gateway cannot start as asked (a taken port, a bad upstream URL) or lost captures."""


class DetectionError(CellError):
    """No harness was named and none could be chosen: no markers matched, or several matched equally.

    The message lists the candidates (if any) and how to choose one; ambiguity is reported, never
    guessed. A path to look at that is not a directory is one too.
    """


class ConformanceError(TackroomError, AssertionError):
    """An adapter failed the conformance kit; :attr:`findings` lists every failure, each with file and line.

    It is an :class:`AssertionError` too, so ``assert_adapter_conformance`` reads as a test failure.
    """

    def __init__(self, adapter: str, findings: Sequence[object]) -> None:
        self.adapter = adapter
        self.findings = tuple(findings)
        lines = [f"adapter {adapter!r} fails {len(self.findings)} conformance check(s):"]
        lines.extend(f"  {finding}" for finding in self.findings)
        super().__init__("\n".join(lines))


class TaskError(ConfigError):
    """A task directory (Harbor's format) that cannot be run as it is: every problem, each at file:line."""


class MatrixError(ConfigError):
    """An evaluation's matrix file that cannot be run: every problem, each at file:line."""


class EvaluationExistsError(ConfigError):
    """A new evaluation asked for in a directory that holds one: resume it, or choose another."""


class RayUnavailableError(HostError):
    """The ray executor cannot run: Ray is not installed, or its cluster does not answer."""
