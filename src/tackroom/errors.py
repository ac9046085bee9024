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
     │    ├── ResidentError          a resident tackroom that cannot start, or one that runs already
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

    >>> import tackroom, tempfile, pathlib
    >>> profile = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (profile / "style.md").write_text("Prefer small functions.")  # a rule belongs in rules/
    >>> try:
    ...     tackroom.load_profile([profile])
    ... except tackroom.ConfigError as exc:
    ...     print([(pathlib.Path(p.file).name, p.message[:21]) for p in exc.problems])
    [('style.md', 'unknown profile entry')]
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
    """A profile cannot be rendered or imported as asked (nothing was written).

    >>> import tackroom
    >>> exc = tackroom.ProfileError("nothing to render")
    >>> isinstance(exc, tackroom.CellError), isinstance(exc, tackroom.ConfigError)
    (True, False)
    """


class UnsafePathError(CellError):
    """A name or path would leave the directory it belongs in, or follow a link out of it.

    >>> import tackroom
    >>> try:
    ...     tackroom.run("codex", "hi", harness_version="../../bin")
    ... except tackroom.UnsafePathError as exc:
    ...     print(exc.adapter, "-", str(exc)[:49])
    codex - version '../../bin' cannot be used as a file name
    """


class TrustError(CellError):
    """``tackroom trust`` cannot do what was asked: nothing to trust there, or nothing to revoke.

    >>> import tackroom
    >>> issubclass(tackroom.UntrustedProjectError, tackroom.TrustError)
    True
    >>> exc = tackroom.TrustError("/src/app is not trusted (nor any directory above it); nothing to revoke")
    >>> isinstance(exc, tackroom.CellError), isinstance(exc, tackroom.HostError)
    (True, False)
    """


class UntrustedProjectError(TrustError):
    """A run refused: its harness loads the project's executable config on its own, and the user has
    not trusted the project (``tackroom trust``).

    >>> import tackroom, tempfile, pathlib
    >>> project = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (project / "opencode.json").write_text("{}")  # config opencode loads on its own
    >>> try:
    ...     tackroom.plan_run(tackroom.load_adapters()["opencode"], "hi", workdir=project)
    ... except tackroom.UntrustedProjectError as exc:
    ...     print(str(exc)[:45])
    opencode (adapter 'opencode') was not started
    """


class OptionError(CellError):
    """An option value that cannot be used with the selected adapter.

    >>> import tackroom
    >>> try:
    ...     tackroom.plan_run(tackroom.load_adapters()["goose"], "hi", options={"max_turns": "many"})
    ... except tackroom.OptionError as exc:
    ...     print(exc)
    option 'max_turns' takes a whole number of at least 1, not 'many'
    """


class UnsupportedOptionError(OptionError):
    """The adapter has no rendering for an option: fail closed, never drop it.

    >>> import tackroom
    >>> try:
    ...     tackroom.plan_run(tackroom.load_adapters()["antigravity"], "hi", options={"resume": "last"})
    ... except tackroom.UnsupportedOptionError as exc:
    ...     print(exc.adapter, exc.option, exc.supported)
    antigravity resume ('model',)
    """

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
    """A template could not be expanded with the values given.

    >>> import tackroom
    >>> exc = tackroom.TemplateError("no value for {{model}} in 'custom:{{model}}'")
    >>> isinstance(exc, tackroom.CellError), str(exc)
    (True, "no value for {{model}} in 'custom:{{model}}'")
    """


class UnknownAdapterError(CellError):
    """No built-in or operator table defines this adapter name.

    >>> import tackroom
    >>> try:
    ...     tackroom.load_adapters()["claude"]
    ... except tackroom.UnknownAdapterError as exc:
    ...     print(exc.name, "-", "claude-code" in exc.known)
    claude - True
    """

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = tuple(known)
        super().__init__(f"unknown adapter {name!r}; known adapters: {', '.join(self.known)}")


class FamilyError(HostError):
    """A family is missing from the registry or does not satisfy the interface.

    >>> import tackroom
    >>> exc = tackroom.FamilyError("no family 'my-agent' is registered (registered: aider, amp, ...)")
    >>> isinstance(exc, tackroom.HostError), isinstance(exc, tackroom.CellError)
    (True, False)
    """


class InstallError(HostError):
    """A harness could not be installed.

    >>> import tackroom
    >>> exc = tackroom.InstallError("installing 'codex' needs npm (Node.js), which is not on PATH")
    >>> isinstance(exc, tackroom.HostError), exc.adapter, exc.run_dir
    (True, None, None)
    """


class RegistryError(HostError):
    """A package registry could not say which release of a harness is newest.

    Unreachable, too slow, the package unknown to it, or an answer that is not
    a version: the message says which.

    >>> import tackroom
    >>> exc = tackroom.RegistryError("npm view @openai/codex did not answer within 20s: the registry is ...")
    >>> isinstance(exc, tackroom.HostError), str(exc).startswith("npm view")
    (True, True)
    """


class HarnessNotFoundError(HostError):
    """The harness executable is neither installed by tackroom nor on PATH.

    >>> import tackroom, tempfile
    >>> empty = tempfile.mkdtemp()  # no managed installs in this home, nothing on this PATH
    >>> try:
    ...     tackroom.run("aider", "hi", environ={"HOME": empty, "PATH": empty})
    ... except tackroom.HarnessNotFoundError as exc:
    ...     print(exc.adapter, "-", str(exc)[:54])
    aider - 'aider' (adapter 'aider') is not installed by tackroom
    """


class HarnessVersionError(HostError):
    """The harness is older than the oldest version its adapter works with (``min_version``).

    >>> import tackroom
    >>> exc = tackroom.HarnessVersionError("codex 0.1.0 (/usr/bin/codex) is older than 0.40.0, ...")
    >>> isinstance(exc, tackroom.HostError), isinstance(exc, tackroom.CellError)
    (True, False)
    """


class MockError(TackroomError):
    """The mock model server cannot start as asked: a bad or taken port, an address, a log file.

    >>> import tackroom
    >>> try:
    ...     tackroom.MockServer(port=70000)
    ... except tackroom.MockError as exc:
    ...     print(exc)
    port must be 0-65535 (0 picks a free one), got 70000
    """


class MockScriptError(MockError, CellError):
    """A mock model script is malformed.

    >>> import tackroom
    >>> try:
    ...     tackroom.Turn.error(200, "all fine")
    ... except tackroom.MockScriptError as exc:
    ...     print(isinstance(exc, tackroom.MockError), exc)
    True error: HTTP status must be 400-599, got 200
    """


class RunError(TackroomError):
    """A run could not be started or followed; :class:`RunSpecError` and :class:`LaunchError` say which
    group (catching ``RunError`` still catches both).

    >>> import tackroom
    >>> try:
    ...     tackroom.run("codex", "hi", timeout_s=0)
    ... except tackroom.RunError as exc:
    ...     print(type(exc).__name__, exc.adapter, isinstance(exc, tackroom.CellError))
    RunSpecError codex True
    """


class RunSpecError(RunError, CellError):
    """A run's values that cannot make a run (a :class:`~tackroom.run.spec.RunSpec`'s checks): a
    timeout that is no duration, two endpoints at once, a working directory that is none, an
    unknown field in a spec's JSON.

    >>> import tackroom
    >>> try:
    ...     tackroom.RunSpec(prompt="fix the bug", home="nowhere")
    ... except tackroom.RunSpecError as exc:
    ...     print(exc)
    home must be 'isolated' or 'real', got 'nowhere'
    """


class SandboxError(HostError):
    """A sandbox that cannot run here (not installed, no namespaces) or is registered badly.

    >>> import tackroom
    >>> exc = tackroom.SandboxError("sandbox 'bwrap' cannot run here: no bwrap on PATH: install bubblewrap")
    >>> isinstance(exc, tackroom.HostError), isinstance(exc, tackroom.RunSpecError)
    (True, False)
    """


class LaunchError(RunError, HostError):
    """This machine could not set the run up: no run directory can be made, a file cannot be staged.

    >>> import tackroom
    >>> exc = tackroom.LaunchError("cannot create a run directory in '/data/runs': No space left on device")
    >>> isinstance(exc, tackroom.RunError), isinstance(exc, tackroom.HostError)
    (True, True)
    """


class ProbeError(TackroomError):
    """A probe cannot be run as asked: an unknown capability, nothing to probe.

    >>> import tackroom
    >>> exc = tackroom.ProbeError("unknown capabilities telepathy; known: ...")
    >>> isinstance(exc, tackroom.TackroomError), isinstance(exc, (tackroom.CellError, tackroom.HostError))
    (True, False)
    """


class RowError(TackroomError, ValueError):
    """A capability row (or an external probe's output) that does not parse; the whole row is rejected.

    >>> import tackroom
    >>> exc = tackroom.RowError("probe output has no supports")
    >>> isinstance(exc, tackroom.TackroomError), isinstance(exc, ValueError)
    (True, True)
    """


class StateError(HostError):
    """The state database cannot be used: not a database, another program's, a newer tackroom's, read-only.

    >>> import tackroom
    >>> exc = tackroom.StateError("state.db: not a usable SQLite database (file is not a database)")
    >>> isinstance(exc, tackroom.HostError), str(exc).startswith("state.db")
    (True, True)
    """


class StreamLineError(TackroomError, ValueError):
    """A line of harness output that looks like its structure but cannot be used (e.g. nested too deep).

    Family code raises it (through ``json_line``); the run turns it into a
    non-fatal error event that keeps the line, so it never reaches a caller.

    >>> import tackroom
    >>> exc = tackroom.StreamLineError("JSON nested deeper than 200 levels")
    >>> isinstance(exc, tackroom.TackroomError), isinstance(exc, ValueError)
    (True, True)
    """


class TraceError(TackroomError):
    """A transcript, session or usage report that cannot be read or found as asked.

    >>> import tackroom
    >>> try:
    ...     tackroom.read_trace("no-such-session", harness="codex")
    ... except tackroom.TraceError as exc:
    ...     print(exc)
    no session 'no-such-session' in the logs tackroom can read: see `tackroom trace list`
    """


class GatewayError(HostError):
    """The gateway cannot start as asked (a taken port, a bad upstream URL) or lost captures.

    >>> import tackroom
    >>> try:
    ...     tackroom.Gateway("ftp://mirror.example")
    ... except tackroom.GatewayError as exc:
    ...     print(isinstance(exc, tackroom.HostError), str(exc)[:50])
    True upstream for anthropic must be an http(s) base URL
    """


class DetectionError(CellError):
    """No harness was named and none could be chosen: no markers matched, or several matched equally.

    The message lists the candidates (if any) and how to choose one; ambiguity is reported, never
    guessed. A path to look at that is not a directory is one too.

    >>> import tackroom, tempfile, pathlib
    >>> empty = pathlib.Path(tempfile.mkdtemp())  # no CLAUDE.md, no .codex, no other harness's markers
    >>> try:
    ...     tackroom.run(None, "hi", workdir=empty)  # no harness named
    ... except tackroom.DetectionError as exc:
    ...     print(str(exc)[:26])
    no adapter named: name one
    """


class ConformanceError(TackroomError, AssertionError):
    """An adapter failed the conformance kit; :attr:`findings` lists every failure, each with file and line.

    It is an :class:`AssertionError` too, so ``assert_adapter_conformance`` reads as a test failure.

    >>> import tackroom
    >>> from tackroom.conformance import assert_adapter_loads_hooks
    >>> try:
    ...     assert_adapter_loads_hooks(tackroom.load_adapters()["aider"])
    ... except tackroom.ConformanceError as exc:
    ...     print(exc.adapter, [f.message for f in exc.findings], isinstance(exc, AssertionError))
    aider ['declares no hooks capability: no hooks to load'] True
    """

    def __init__(self, adapter: str, findings: Sequence[object]) -> None:
        self.adapter = adapter
        self.findings = tuple(findings)
        lines = [f"adapter {adapter!r} fails {len(self.findings)} conformance check(s):"]
        lines.extend(f"  {finding}" for finding in self.findings)
        super().__init__("\n".join(lines))


class TaskError(ConfigError):
    """A task directory (Harbor's format) that cannot be run as it is: every problem, each at file:line.

    >>> import tackroom, tempfile, pathlib
    >>> task = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (task / "task.toml").write_text("")  # and nothing else
    >>> try:
    ...     tackroom.load_task(task)
    ... except tackroom.TaskError as exc:
    ...     print([pathlib.Path(p.file).name for p in exc.problems])
    ['instruction.md', 'test.sh']
    """


class MatrixError(ConfigError):
    """An evaluation's matrix file that cannot be run: every problem, each at file:line.

    >>> import tackroom, tempfile, pathlib
    >>> matrix = pathlib.Path(tempfile.mkdtemp()) / "matrix.toml"
    >>> _ = matrix.write_text("[matrix]\\n")
    >>> try:
    ...     tackroom.load_matrix(matrix)
    ... except tackroom.MatrixError as exc:
    ...     print([p.key for p in exc.problems])
    ['matrix.harnesses', 'matrix.tasks']
    """


class EvaluationExistsError(ConfigError):
    """A new evaluation asked for in a directory that holds one: resume it, or choose another.

    >>> import tackroom
    >>> from tackroom.errors import Problem
    >>> found = Problem("out", "", "holds an evaluation (4 cells stored): --resume it, or --out elsewhere")
    >>> exc = tackroom.EvaluationExistsError([found])
    >>> isinstance(exc, tackroom.ConfigError), str(exc)
    (True, 'out: holds an evaluation (4 cells stored): --resume it, or --out elsewhere')
    """


class RayUnavailableError(HostError):
    """The ray executor cannot run: Ray is not installed, or its cluster does not answer.

    >>> import tackroom
    >>> exc = tackroom.RayUnavailableError("the ray executor needs Ray: pip install 'tackroom[ray]'")
    >>> isinstance(exc, tackroom.HostError), isinstance(exc, ImportError)
    (True, False)
    """


class ResidentError(HostError):
    """The resident tackroom cannot be started here, or one is running already.

    >>> import tackroom
    >>> exc = tackroom.ResidentError("a resident tackroom is already running (pid 4242)")
    >>> isinstance(exc, tackroom.HostError)
    True
    """
