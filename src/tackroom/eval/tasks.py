"""Tasks in Harbor's format, read as Harbor 0.26 reads them.

A task is a directory: ``task.toml``, ``instruction.md``, ``environment/``
(a Dockerfile), ``tests/test.sh``, optionally ``solution/solve.sh`` and, for a
task of several steps, ``steps/<name>/`` with each step's own instruction,
tests, solution and ``workdir/``. Harbor's own files run here unchanged.

Reading follows Harbor 0.26's ``TaskConfig``: an unknown key is kept and said,
never fatal (Harbor ignores it); the legacy spellings are accepted and
normalized (a top-level ``version`` is ``schema_version``; ``memory`` and
``storage`` strings such as ``"2G"`` are ``memory_mb`` and ``storage_mb``;
``allow_internet`` is ``network_mode``). A value of the wrong kind, a missing
file, a step without its instruction are problems, each named at file:line,
all of them at once (:func:`check_task`).
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tackroom._format import Key, Table
from tackroom._hash import sha256
from tackroom.adapters.tomlsource import KeyPath, TomlSource, load_toml
from tackroom.errors import ConfigError, Problem, TaskError

NetworkMode = Literal["public", "no-network", "allowlist"]
RewardStrategy = Literal["mean", "final"]

VERIFIER_TIMEOUT_S = 600.0
"""Harbor's default verifier timeout (a step's verifier without its own gets this, not the task's)."""
DEFAULT_WORKDIR = "/app"
"""Where a task's files are when neither ``[environment].workdir`` nor a Dockerfile ``WORKDIR`` says."""
INSTRUCTION_LIMIT = 1 << 20
"""An instruction longer than this (1 MiB) is refused: it is no instruction, and it would be a prompt."""

_CHECKED = " Checked, not used here."
_PHASE_NETWORK = (
    "`public`, `no-network` or `allowlist`, for {phase} alone: it narrows `[environment]`'s, never "
    "widens it (a step's own narrows the task's)."
)

TOP = Table(
    "task.toml",
    "The task's configuration. An unknown key at any level is kept and said, never fatal (Harbor "
    "ignores it too).",
    (
        Key("schema_version", "str", "The format's version (default `1.4`)."),
        Key("version", "str", "Legacy spelling of `schema_version`, read as it."),
        Key("task", "table", "The `[task]` table: the task's name and description."),
        Key("metadata", "table", "Anything the author keeps about the task (difficulty, tags): kept with the "
            "task, never acted on."),
        Key("source", "str", "Where the task came from." + _CHECKED),
        Key("multi_step_reward_strategy", "str", "A task of steps: its reward is the `mean` of its "
            "steps' (default) or the `final` step's."),
        Key("steps", "tables", "`[[steps]]`: a task of several steps, each in `steps/<name>/`."),
        Key("artifacts", "list", "Files to keep from the sandbox." + _CHECKED),
        Key("verifier", "table", "The `[verifier]` table: how `tests/test.sh` runs."),
        Key("agent", "table", "The `[agent]` table: how the harness runs."),
        Key("environment", "table", "The `[environment]` table: where the task runs and with what."),
        Key("solution", "table", "The `[solution]` table: how the oracle's `solution/solve.sh` runs."),
    ),
)  # fmt: skip
TASK = Table(
    "[task]",
    "Who the task is.",
    (
        Key("name", "str", "`org/name`: the task's name in results (default: its directory's name).",
            required=True),
        Key("version", "str", "The task's own version." + _CHECKED),
        Key("description", "str", "What the task asks." + _CHECKED),
        Key("authors", "list", "Who wrote it." + _CHECKED),
        Key("keywords", "list", "Words to find it by." + _CHECKED),
    ),
)  # fmt: skip
AGENT = Table(
    "[agent]",
    "How the harness runs (also a step's `[steps.agent]`).",
    (
        Key("timeout_sec", "seconds", "How long the harness may work (the matrix's `agent_timeout` "
            "overrides it; a step's own wins over the task's)."),
        Key("user", "str", "The user it runs as (a name or a number)." + _CHECKED),
        Key("network_mode", "str", _PHASE_NETWORK.format(phase="the harness (the oracle: its solution)")),
        Key("allowed_hosts", "list", "With `network_mode = 'allowlist'`: the hosts it may reach." + _CHECKED),
    ),
)  # fmt: skip
VERIFIER = Table(
    "[verifier]",
    "How `tests/test.sh` runs (also a step's `[steps.verifier]`).",
    (
        Key("timeout_sec", "seconds", "How long the verifier may run (default 600; a step's verifier "
            "without its own gets 600, not the task's, as in Harbor)."),
        Key("env", "table", "Variables for the verifier; a `${VAR}` or `${VAR:-default}` value is taken "
            "from this machine only with the user's word (`allow_host_env`)."),
        Key("user", "str", "The user it runs as." + _CHECKED),
        Key("environment_mode", "str", "Harbor's choice of environment for the verifier." + _CHECKED),
        Key("environment", "table", "Harbor's separate verifier environment." + _CHECKED),
        Key("collect", "list", "What Harbor collects after verifying." + _CHECKED),
        Key("network_mode", "str", _PHASE_NETWORK.format(phase="the verifier")),
        Key("allowed_hosts", "list", "With `network_mode = 'allowlist'`: the hosts it may reach." + _CHECKED),
    ),
)  # fmt: skip
ENVIRONMENT = Table(
    "[environment]",
    "Where the task runs. Its image (`environment/Dockerfile`, or `docker_image`) is approximated by "
    "this host's system in the bwrap sandbox, and said on the cell.",
    (
        Key("workdir", "str", "The agent's and verifier's working directory, absolute (default: the "
            "Dockerfile's `WORKDIR`, else `/app`)."),
        Key("network_mode", "str", "`public` (default), `no-network` (the agent and verifier reach "
            "nothing), or `allowlist` (with `allowed_hosts`): no sandbox here lets some hosts through "
            "and not others, so an allowlist task runs with no network, and its cell says so."),
        Key("allowed_hosts", "list", "With `network_mode = 'allowlist'`: the hosts the task may reach."),
        Key("cpus", "number", "CPUs the task asks for: a Ray cell's `num_cpus`."),
        Key("memory_mb", "int", "Memory the task asks for: a Ray cell's `memory`."),
        Key("storage_mb", "int", "Disk the task asks for." + _CHECKED),
        Key("gpus", "int", "GPUs the task asks for." + _CHECKED),
        Key("gpu_types", "list", "GPU kinds it accepts." + _CHECKED),
        Key("tpu", "table", "TPUs it asks for." + _CHECKED),
        Key("env", "table", "Variables for the agent; `${VAR}` values need the user's word, as the "
            "verifier's."),
        Key("build_timeout_sec", "seconds", "How long building the image may take (default 600)."),
        Key("docker_image", "str", "A prebuilt image in place of `environment/Dockerfile`."),
        Key("healthcheck", "table", "`[environment.healthcheck]`: a command that must succeed before "
            "the agent starts."),
        Key("os", "str", "`linux`: tackroom runs linux tasks; any other is a problem."),
        Key("mcp_servers", "list", "MCP servers for the agent." + _CHECKED),
        Key("skills_dir", "str", "Skills for the agent." + _CHECKED),
        Key("allow_internet", "bool", "Legacy: read as `network_mode` `public` or `no-network`."),
        Key("memory", "str", "Legacy: `\"2G\"` read as `memory_mb`."),
        Key("storage", "str", "Legacy: read as `storage_mb`."),
    ),
)  # fmt: skip
HEALTHCHECK = Table(
    "[environment.healthcheck]",
    "A command that must succeed before the agent starts (also a step's `[steps.healthcheck]`).",
    (
        Key("command", "str", "The shell command.", required=True),
        Key("interval_sec", "seconds", "Between tries (default 5)."),
        Key("timeout_sec", "seconds", "For one try (default 30)."),
        Key("start_period_sec", "seconds", "Failures in this first while do not count (default 0)."),
        Key("start_interval_sec", "seconds", "Between tries in the start period (default 5)."),
        Key("retries", "int", "Failures allowed before the cell fails (default 3)."),
    ),
)  # fmt: skip
STEP = Table(
    "[[steps]]",
    "One step of a task of several: `steps/<name>/` holds its `instruction.md`, its `tests/test.sh` "
    "(else the task's), its `solution/solve.sh` and its `workdir/` files.",
    (
        Key("name", "str", "The step's name: its directory's.", required=True),
        Key("agent", "table", "Its own `[agent]` (its timeout wins over the task's)."),
        Key("verifier", "table", "Its own `[verifier]` (its env over the task's)."),
        Key("min_reward", "number", "The gate: below this reward (or, as a table, below any named "
            "reward) the steps after it do not run."),
        Key("healthcheck", "table", "Its own healthcheck."),
        Key("artifacts", "list", "Files to keep from the sandbox." + _CHECKED),
    ),
)  # fmt: skip
SOLUTION = Table(
    "[solution]",
    "How the oracle runs `solution/solve.sh`.",
    (Key("env", "table", "Variables for it, as the verifier's."),),
)
TABLES = (TOP, TASK, AGENT, VERIFIER, ENVIRONMENT, HEALTHCHECK, STEP, SOLUTION)
"""Every table of ``task.toml``, in the order the reference page shows them."""
KINDS = {
    "str": "string", "int": "integer", "number": "number", "seconds": "number of seconds",
    "table": "table", "list": "list", "bool": "`true` \\| `false`", "tables": "array of tables",
}  # fmt: skip
"""How each kind of value reads on the reference page."""
_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")
_CANARY = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)
_STEP_NAME_BAD = re.compile(r'[<>:"/\\|?*\x00-\x1f]')
_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")


@dataclass(frozen=True)
class Healthcheck:
    """A command that must succeed before the agent starts (retried ``retries`` times)."""

    command: str
    interval_sec: float = 5.0
    timeout_sec: float = 30.0
    start_period_sec: float = 0.0
    start_interval_sec: float = 5.0
    retries: int = 3


@dataclass(frozen=True)
class Environment:
    """``[environment]``: where the task runs and with what."""

    workdir: str | None = None
    """The agent's and the verifier's working directory inside; None: the Dockerfile's, else /app."""
    network_mode: NetworkMode = "public"
    allowed_hosts: tuple[str, ...] | None = None
    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    gpus: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables for the agent; a ``${VAR}`` value is taken from the host only with the user's word."""
    build_timeout_sec: float = 600.0
    docker_image: str | None = None
    healthcheck: Healthcheck | None = None


@dataclass(frozen=True)
class Limits:
    """An ``[agent]`` or ``[verifier]`` table: its timeout and its environment."""

    timeout_sec: float | None
    env: Mapping[str, str] = field(default_factory=dict)
    network_mode: NetworkMode | None = None
    """Its own ``network_mode`` (None: not said): it narrows ``[environment]``'s, never widens it."""


@dataclass(frozen=True)
class Step:
    """One step of a task of several: its own instruction, tests and gate."""

    name: str
    directory: Path
    instruction: str
    agent: Limits
    verifier: Limits
    min_reward: float | Mapping[str, float] | None = None
    healthcheck: Healthcheck | None = None


@dataclass(frozen=True)
class Task:
    """A Harbor task directory, read and checked.

    >>> import tackroom, tempfile, pathlib
    >>> task = pathlib.Path(tempfile.mkdtemp())
    >>> (task / "tests").mkdir()
    >>> _ = (task / "task.toml").write_text('[task]\\nname = "me/hello"\\n')
    >>> _ = (task / "instruction.md").write_text("Write hello.txt saying hello.\\n")
    >>> _ = (task / "tests" / "test.sh").write_text("grep -q hello /app/hello.txt\\n")
    >>> loaded = tackroom.load_task(task)
    >>> loaded.name, loaded.instruction
    ('me/hello', 'Write hello.txt saying hello.\\n')
    """

    path: Path
    name: str
    schema_version: str
    instruction: str
    """The instruction with Harbor's leading canary lines taken out ("" for a task of steps)."""
    agent: Limits
    verifier: Limits
    environment: Environment
    solution_env: Mapping[str, str] = field(default_factory=dict)
    steps: tuple[Step, ...] = ()
    reward_strategy: RewardStrategy = "mean"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[Problem, ...] = ()
    """What was read but not used, and legacy spellings normalized: said, never fatal."""
    digest: str = ""
    """SHA-256 over every file of the directory (names and bytes): a changed task is another task."""

    @property
    def tests_dir(self) -> Path:
        return self.path / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.path / "solution"

    @property
    def has_solution(self) -> bool:
        return (self.solution_dir / "solve.sh").is_file() or any(
            (step.directory / "solution" / "solve.sh").is_file() for step in self.steps
        )


def load_task(path: Path) -> Task:
    """The task at ``path``, or a :class:`TaskError` with every problem found.

    >>> import tackroom, tempfile, pathlib
    >>> tackroom.load_task(pathlib.Path(tempfile.mkdtemp()))
    Traceback (most recent call last):
    ...
    tackroom.errors.TaskError: ...task.toml: a task directory needs its task.toml...
    """
    task, problems = _read(path)
    if problems or task is None:
        raise TaskError(problems)
    return task


def check_task(path: Path) -> tuple[Task | None, list[Problem], list[Problem]]:
    """The task at ``path`` (None when it cannot be read), its problems and its notes."""
    task, problems = _read(path)
    notes = list(task.notes) if task is not None else []
    return (task if not problems else None), problems, notes


def strip_canary(text: str) -> str:
    """``text`` without its leading canary comment lines and the blank lines after them (as Harbor)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and _CANARY.match(lines[i].strip()):
        i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    return "\n".join(lines[i:])


def resolve_env(
    env: Mapping[str, str], host: Mapping[str, str], *, allowed: bool, where: str
) -> dict[str, str]:
    """``env`` with its ``${VAR}`` and ``${VAR:-default}`` values taken from ``host`` (as Harbor: only a
    value that is wholly a template; ``prefix-${X}`` stays as written).

    Taking a value from this machine's environment needs the user's word (``allowed``): a task is a
    stranger's file, and its verifier could send what it reads anywhere.
    """
    resolved = {}
    for name, value in env.items():
        match = _TEMPLATE.fullmatch(value)
        if match is None:
            resolved[name] = value
            continue
        variable, default = match[1], match[2]
        if not allowed:
            raise TaskError(
                [
                    Problem(
                        where,
                        name,
                        f"takes ${{{variable}}} from this machine: pass --allow-host-env to let it",
                    )
                ]
            )
        if variable in host:
            resolved[name] = host[variable]
        elif default is not None:
            resolved[name] = default
        else:
            raise TaskError(
                [Problem(where, name, f"${{{variable}}} is not set on this machine and has no default")]
            )
    return resolved


def task_digest(path: Path) -> str:
    """SHA-256 over the names, kinds and bytes of every file under ``path`` (links by their target text)."""
    digest = sha256()
    for relative, full in _walk(path):
        if full.is_symlink():
            digest.update(f"L {relative}\0{full.readlink()}\0".encode("utf-8", "surrogateescape"))
            continue
        data = full.read_bytes()
        digest.update(f"F {relative}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        digest.update(data)
    return digest.hexdigest()


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        base = Path(directory)
        for name in sorted([*files, *(d for d in dirs if (base / d).is_symlink())]):
            full = base / name
            yield full.relative_to(root).as_posix(), full


def _read(path: Path) -> tuple[Task | None, list[Problem]]:
    reader = _Reader(path)
    try:
        return reader.task(), reader.problems
    except ConfigError as exc:
        return None, [*reader.problems, *exc.problems]


class _Reader:
    """Reads one task directory, collecting every problem and note."""

    def __init__(self, path: Path) -> None:
        self.root = path
        self.problems: list[Problem] = []
        self.notes: list[Problem] = []
        self.source: TomlSource | None = None
        self.shown = str(path / "task.toml")

    def task(self) -> Task | None:
        if not self.root.is_dir():
            self.problems.append(Problem(str(self.root), "", "no task directory here"))
            return None
        toml = self.root / "task.toml"
        if not toml.is_file():
            self.problems.append(Problem(self.shown, "", "a task directory needs its task.toml"))
            return None
        self.source = load_toml(toml, self.shown)
        data = dict(self.source.data)
        self._unknown(data, (), TOP)
        if "version" in data:
            legacy = data.pop("version")
            data.setdefault("schema_version", legacy)
            self._note(("version",), "legacy spelling of schema_version (read as schema_version)")
        schema = self._text(data, ("schema_version",), default="1.4") or "1.4"
        info = self._table(data, ("task",))
        name = self.root.resolve().name
        if info:
            self._unknown(info, ("task",), TASK)
            given = self._text(info, ("task", "name"))
            if given is None:
                self._problem(("task", "name"), "a [task] table needs its name (org/name)")
            elif not _NAME.match(given) or ".." in given:
                self._problem(("task", "name"), f"{given!r} is not org/name (letters, digits, . _ -)")
            else:
                name = given
        metadata = self._table(data, ("metadata",))
        self._text(data, ("source",))
        agent = self._limits(data, ("agent",), AGENT, default_timeout=None)
        verifier = self._limits(data, ("verifier",), VERIFIER, default_timeout=VERIFIER_TIMEOUT_S)
        environment = self._environment(self._table(data, ("environment",)), ("environment",))
        solution = self._table(data, ("solution",))
        self._unknown(solution, ("solution",), SOLUTION)
        solution_env = self._env(solution, ("solution", "env"))
        strategy = self._choice(data, ("multi_step_reward_strategy",), ("mean", "final"), "mean")
        steps = self._steps(data, agent, verifier)
        instruction = "" if steps else self._instruction(self.root / "instruction.md")
        if not steps:
            self._script(self.root / "tests" / "test.sh", "a task needs tests/test.sh (its verifier)")
        if environment.docker_image is None and not (self.root / "environment").is_dir():
            self._note((), "no environment/ directory and no docker_image: the host's system is the image")
        if self.problems:
            return None
        return Task(
            path=self.root.resolve(),
            name=name,
            schema_version=schema,
            instruction=instruction,
            agent=agent,
            verifier=verifier,
            environment=environment,
            solution_env=solution_env,
            steps=steps,
            reward_strategy=strategy,  # type: ignore[arg-type]
            metadata=metadata,
            notes=tuple(self.notes),
            digest=task_digest(self.root),
        )

    # -- the tables ------------------------------------------------------------------------------

    def _limits(
        self, data: dict[str, Any], key: KeyPath, known: Table, default_timeout: float | None
    ) -> Limits:
        table = self._table(data, key)
        self._unknown(table, key, known)
        timeout = self._number(table, (*key, "timeout_sec"), positive=True)
        self._text(table, (*key, "user"), integer=True)
        network = self._network(table, key) if "network_mode" in table else None
        return Limits(
            default_timeout if timeout is None else timeout, self._env(table, (*key, "env")), network
        )

    def _environment(self, table: dict[str, Any], key: KeyPath) -> Environment:
        self._unknown(table, key, ENVIRONMENT)
        memory_mb = self._legacy_size(table, key, "memory")
        storage_mb = self._legacy_size(table, key, "storage")
        network = self._network(table, key)
        allow = table.get("allow_internet")
        if allow is not None:
            if not isinstance(allow, bool):
                self._problem((*key, "allow_internet"), f"must be true or false, got {allow!r}")
            elif "network_mode" not in table and "allowed_hosts" not in table:
                network = "public" if allow else "no-network"
            self._note((*key, "allow_internet"), f"legacy spelling: read as network_mode = {network!r}")
        cpus = self._number(table, (*key, "cpus"), positive=True)
        workdir = self._text(table, (*key, "workdir"))
        if workdir is not None and not workdir.startswith("/"):
            self._problem((*key, "workdir"), f"must be an absolute path inside the sandbox, got {workdir!r}")
        hosts = self._list_of_text(table, (*key, "allowed_hosts"))
        if hosts is not None and network != "allowlist":
            self._problem((*key, "allowed_hosts"), "is only valid with network_mode = 'allowlist'")
        image = self._text(table, (*key, "docker_image"))
        os_name = self._text(table, (*key, "os"))
        if os_name is not None and os_name.lower() != "linux":
            self._problem((*key, "os"), f"{os_name!r} tasks cannot run here: tackroom runs linux tasks")
        return Environment(
            workdir=workdir,
            network_mode=network,
            allowed_hosts=hosts,
            cpus=cpus,
            memory_mb=self._integer(table, (*key, "memory_mb"), memory_mb),
            storage_mb=self._integer(table, (*key, "storage_mb"), storage_mb),
            gpus=self._integer(table, (*key, "gpus")),
            env=self._env(table, (*key, "env")),
            build_timeout_sec=self._number(table, (*key, "build_timeout_sec"), positive=True) or 600.0,
            docker_image=image,
            healthcheck=self._healthcheck(table, (*key, "healthcheck")),
        )

    def _healthcheck(self, data: dict[str, Any], key: KeyPath) -> Healthcheck | None:
        if key[-1] not in data:
            return None
        table = self._table(data, key)
        self._unknown(table, key, HEALTHCHECK)
        command = self._text(table, (*key, "command"))
        if command is None:
            self._problem(key, "a healthcheck needs its command")
            return None
        default = Healthcheck(command)

        def number(name: str, fallback: float) -> float:
            value = self._number(table, (*key, name))
            return fallback if value is None else value

        retries = self._integer(table, (*key, "retries"))
        return Healthcheck(
            command,
            number("interval_sec", default.interval_sec),
            number("timeout_sec", default.timeout_sec),
            number("start_period_sec", default.start_period_sec),
            number("start_interval_sec", default.start_interval_sec),
            default.retries if retries is None else retries,
        )

    def _steps(self, data: dict[str, Any], agent: Limits, verifier: Limits) -> tuple[Step, ...]:
        raw = data.get("steps")
        if raw is None:
            return ()
        if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
            self._problem(("steps",), "must be an array of tables ([[steps]])")
            return ()
        if not raw:
            self._problem(("steps",), "is empty: give at least one [[steps]] table, or none")
        steps, seen = [], set()
        for index, item in enumerate(raw):
            key = ("steps", str(index))
            self._unknown(item, key, STEP)
            name = self._text(item, (*key, "name"))
            if name is None:
                self._problem(key, "a step needs its name")
                continue
            folded = unicodedata.normalize("NFC", name).casefold()
            if folded in seen:
                self._problem((*key, "name"), f"step {name!r} is named twice")
            seen.add(folded)
            if not name or _STEP_NAME_BAD.search(name) or name in (".", "..") or name[-1] in ". ":
                self._problem((*key, "name"), f"{name!r} cannot name a directory (steps/<name>/)")
                continue
            directory = self.root / "steps" / name
            step_agent = self._limits(item, (*key, "agent"), AGENT, default_timeout=None)
            step_verifier = self._limits(
                item, (*key, "verifier"), VERIFIER, default_timeout=VERIFIER_TIMEOUT_S
            )
            instruction = self._instruction(directory / "instruction.md")
            if not (directory / "tests" / "test.sh").is_file():
                self._script(
                    self.root / "tests" / "test.sh",
                    f"step {name!r} needs steps/{name}/tests/test.sh or the task's tests/test.sh",
                )
            steps.append(
                Step(
                    name=name,
                    directory=directory,
                    instruction=instruction,
                    agent=Limits(
                        step_agent.timeout_sec if step_agent.timeout_sec is not None else agent.timeout_sec,
                        step_agent.env,
                        narrowest(agent.network_mode, step_agent.network_mode),
                    ),
                    # Harbor's quirk, kept: a step's verifier without its own timeout gets 600 s.
                    verifier=Limits(
                        step_verifier.timeout_sec,
                        {**verifier.env, **step_verifier.env},
                        narrowest(verifier.network_mode, step_verifier.network_mode),
                    ),
                    min_reward=self._min_reward(item, (*key, "min_reward")),
                    healthcheck=self._healthcheck(item, (*key, "healthcheck")),
                )
            )
        return tuple(steps)

    def _min_reward(self, table: dict[str, Any], key: KeyPath) -> float | dict[str, float] | None:
        value = table.get(key[-1])
        if value is None:
            return None
        if isinstance(value, dict):
            gates = {}
            for name, gate in value.items():
                if isinstance(gate, bool) or not isinstance(gate, int | float) or not math.isfinite(gate):
                    self._problem((*key, name), f"must be a finite number, got {gate!r}")
                else:
                    gates[name] = float(gate)
            return gates
        return self._number(table, key)

    # -- files -----------------------------------------------------------------------------------

    def _instruction(self, path: Path) -> str:
        shown = str(path)
        if not path.is_file():
            self.problems.append(
                Problem(shown, "", "missing: a task (and each step) needs its instruction.md")
            )
            return ""
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.problems.append(Problem(shown, "", f"cannot read: {exc.strerror or exc}"))
            return ""
        if len(data) > INSTRUCTION_LIMIT:
            self.problems.append(Problem(shown, "", f"{len(data)} bytes: an instruction is at most 1 MiB"))
            return ""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            self.problems.append(Problem(shown, "", "not UTF-8: save it as UTF-8", line))
            return ""
        instruction = strip_canary(text)
        if not instruction.strip():
            self.problems.append(Problem(shown, "", "is empty: say what the agent should do"))
        return instruction

    def _script(self, path: Path, missing: str) -> None:
        if not path.is_file():
            self.problems.append(Problem(str(path), "", missing))

    # -- values ----------------------------------------------------------------------------------

    def _table(self, data: dict[str, Any], key: KeyPath) -> dict[str, Any]:
        value = data.get(key[-1])
        if value is None:
            return {}
        if not isinstance(value, dict):
            self._problem(key, f"must be a table, got {_kind(value)}")
            return {}
        return value

    def _text(
        self, data: dict[str, Any], key: KeyPath, default: str | None = None, integer: bool = False
    ) -> str | None:
        value = data.get(key[-1])
        if value is None:
            return default
        if integer and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            self._problem(key, f"must be a string, got {_kind(value)}")
            return default
        return value

    def _number(self, data: dict[str, Any], key: KeyPath, positive: bool = False) -> float | None:
        value = data.get(key[-1])
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self._problem(key, f"must be a finite number, got {value!r}")
            return None
        if positive and value <= 0:
            self._problem(key, f"must be more than 0, got {value!r}")
            return None
        return float(value)

    def _integer(self, data: dict[str, Any], key: KeyPath, default: int | None = None) -> int | None:
        value = data.get(key[-1])
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self._problem(key, f"must be a whole number, 0 or more, got {value!r}")
            return default
        if default is not None and value != default:
            self._problem(key, f"{value} conflicts with the legacy size given beside it ({default})")
        return value

    def _legacy_size(self, table: dict[str, Any], key: KeyPath, name: str) -> int | None:
        if name not in table:
            return None
        value = table[name]
        if not isinstance(value, str):
            self._note((*key, name), "legacy size that is not a string: ignored, as Harbor does")
            return None
        text = value.strip().upper()
        scale = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}.get(text[-1:])
        try:
            if scale is None:
                raise ValueError
            size = int(float(text[:-1]) * scale)
        except ValueError:
            self._problem((*key, name), f"{value!r} is not a size like '2G' or '512M'")
            return None
        self._note((*key, name), f"legacy spelling: read as {name}_mb = {size}")
        return size

    def _network(self, table: dict[str, Any], key: KeyPath) -> NetworkMode:
        found = self._choice(table, (*key, "network_mode"), ("public", "no-network", "allowlist"), None)
        return found or "public"  # type: ignore[return-value]

    def _choice(
        self, data: dict[str, Any], key: KeyPath, choices: tuple[str, ...], default: str | None
    ) -> str | None:
        value = data.get(key[-1])
        if value is None:
            return default
        if value not in choices:
            self._problem(key, f"must be one of {', '.join(map(repr, choices))}, got {value!r}")
            return default
        return str(value)

    def _list_of_text(self, data: dict[str, Any], key: KeyPath) -> tuple[str, ...] | None:
        value = data.get(key[-1])
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self._problem(key, f"must be a list of strings, got {value!r}")
            return None
        return tuple(value)

    def _env(self, data: dict[str, Any], key: KeyPath) -> dict[str, str]:
        table = self._table(data, key)
        env = {}
        for name, value in table.items():
            if not isinstance(value, str):
                self._problem((*key, name), f"must be a string, got {_kind(value)}")
            elif "\0" in value or "\0" in name or "=" in name or not name:
                self._problem((*key, name), "is not a usable environment variable")
            else:
                env[name] = value
        return env

    def _unknown(self, table: Mapping[str, Any], key: KeyPath, known: Table) -> None:
        names = known.names()
        for name in table:
            if name not in names:
                self._note((*key, name), "unknown key, kept and not used (Harbor ignores it too)")

    def _problem(self, key: KeyPath, message: str) -> None:
        self.problems.append(Problem(self.shown, _dotted(key), message, self._line(key)))

    def _note(self, key: KeyPath, message: str) -> None:
        self.notes.append(Problem(self.shown, _dotted(key), message, self._line(key)))

    def _line(self, key: KeyPath) -> int | None:
        return self.source.line_of(key) if self.source is not None and key else None


def _dotted(key: KeyPath) -> str:
    return ".".join(f"[{part}]" if part.isdigit() else part for part in key).replace(".[", "[")


def _kind(value: Any) -> str:
    return {dict: "a table", list: "an array", str: "a string", bool: "true/false"}.get(
        type(value), repr(value)
    )


def narrowest(*modes: NetworkMode | None) -> NetworkMode | None:
    """Of network modes said at several levels, the one that lets the least through (None: none said)."""
    said = [mode for mode in modes if mode is not None]
    order: tuple[NetworkMode, ...] = ("no-network", "allowlist", "public")
    return next((mode for mode in order if mode in said), None)
