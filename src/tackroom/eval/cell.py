"""One evaluation cell: a task, a harness, a model and a repeat, run and graded in one sandbox.

A cell is a value (:class:`Cell`) with an id that is the same on every machine: the task's digest,
the RunSpec it makes (less the machine's paths) and the repeat index. Running it
(:func:`run_cell`) lays out the cell's directory, approximates the task's image, runs the agent
(a harness through :func:`tackroom.run.runner.arun`, or ``oracle``: the task's own solution), then
the verifier in the same sandbox layout, and returns a :class:`CellResult` that says its outcome
class, its rewards (never invented), its usage and its time per phase.

Inside the sandbox the task's paths are where it expects them: its workdir (``/app``),
``/logs/agent`` and ``/logs/verifier``; ``/tests`` only for the verifier and ``/solution`` only for
the oracle, so the agent never sees either.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from tackroom._hash import sha256
from tackroom.errors import CellError, TackroomError
from tackroom.eval.environment import Image, Unsupported, approximate
from tackroom.eval.rewards import Reward, read_reward
from tackroom.eval.tasks import Healthcheck, Limits, Step, Task, narrowest, resolve_env
from tackroom.profile.model import Profile
from tackroom.run.sandbox import Network, Places, get_sandbox
from tackroom.run.spec import AuthMode

ORACLE = "oracle"
"""The harness name that runs the task's own ``solution/solve.sh`` as the agent."""
DEFAULT_AGENT_TIMEOUT_S = 600.0
PATH_INSIDE = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

Outcome = Literal[
    "ok", "agent_timeout", "harness_crash", "model_error", "verifier_timeout", "no_reward", "infra",
    "invalid", "unsupported", "worker_lost",
]  # fmt: skip


@dataclass(frozen=True)
class Policy:
    """What a failure class means for the score (as Harbor maps its exceptions)."""

    retry: bool
    """Another attempt may go otherwise (``--retry-failed`` redoes it)."""
    graded: bool
    """The verifier ran on what the agent left."""
    valid_reward: bool
    """Its reward counts in the score."""


POLICY: dict[str, Policy] = {
    "ok": Policy(False, True, True),
    "agent_timeout": Policy(False, True, True),
    "harness_crash": Policy(False, True, True),
    "model_error": Policy(True, True, False),
    "verifier_timeout": Policy(False, True, False),
    "no_reward": Policy(False, True, False),
    "infra": Policy(True, False, False),
    "invalid": Policy(False, False, False),
    "unsupported": Policy(False, False, False),
    "worker_lost": Policy(True, False, False),
}
"""Each outcome class's policy: an agent that timed out or crashed is still graded and its reward
counts; a sandbox or a worker that failed (``infra``, ``worker_lost``: another try may go
otherwise) and a cell that cannot run as asked (``invalid``: an option its adapter cannot render, a
task value that needs the user's word) are counted apart, never silently as a 0."""


@dataclass(frozen=True)
class Cell:
    """One cell of an evaluation: what runs, not where.

    A task, a harness (``oracle`` runs the task's own solution), a model and a repeat; its id,
    a content hash, is the same on any machine.

    >>> import tackroom, tempfile, pathlib
    >>> task = pathlib.Path(tempfile.mkdtemp())
    >>> (task / "tests").mkdir()
    >>> _ = (task / "task.toml").write_text('[task]\\nname = "me/hello"\\n')
    >>> _ = (task / "instruction.md").write_text("Write hello.txt saying hello.\\n")
    >>> _ = (task / "tests" / "test.sh").write_text("grep -q hello /app/hello.txt\\n")
    >>> cell = tackroom.Cell(task=tackroom.load_task(task), harness="oracle")
    >>> cell.harness, cell.repeat, len(cell.id)
    ('oracle', 0, 64)
    """

    task: Task
    harness: str
    model: str | None = None
    repeat: int = 0
    mock: Any = None
    """The mock model's :class:`~tackroom.mock.Script` (None: the provider, or ``base_url``)."""
    base_url: str | None = None
    gateway: str | None = None
    """Send the model calls through this running ``tackroom gateway`` (its own upstream), under the
    run's trace id: the cell's usage gets its third way from the gateway's record."""
    api_key_env: str | None = None
    """The variable holding the key for ``base_url`` or ``gateway``."""
    auth: AuthMode | None = None
    """How the harness signs in to its endpoint: ``api-key`` or ``oauth`` (None: chosen by itself)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    profile: Profile | None = None
    """The profile rendered into the harness's home (rules, skills, MCP servers, ...); None: none."""
    sandbox: str = "bwrap"
    agent_timeout_s: float | None = None
    """None: the task's ``[agent].timeout_sec``, else :data:`DEFAULT_AGENT_TIMEOUT_S`."""
    verifier_timeout_s: float | None = None
    """None: the task's ``[verifier].timeout_sec`` (600 s by default)."""
    allow_host_env: bool = False
    """Let the task's ``${VAR}`` values be taken from this machine's environment."""
    capture: bool = True
    """Run the harness through a gateway of its own, under the run's trace id: every model call it
    made is captured, and the cell's usage gets its third way (``gateway``). Off with ``gateway``
    (a running gateway captures the calls instead) and for the oracle (it makes none)."""

    @cached_property
    def id(self) -> str:
        """SHA-256 of what the cell is: the task (its name and digest), the run it makes, the repeat."""
        from tackroom.mock.script import script_data

        value = {
            "task": self.task.digest,
            "task_name": self.task.name,
            "harness": self.harness,
            "model": self.model,
            "options": {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(self.options.items())},
            "mock": None if self.mock is None else script_data(self.mock),
            "base_url": self.base_url,
            "gateway": self.gateway,
            "api_key_env": self.api_key_env,
            "profile": None if self.profile is None else profile_digest(self.profile),
            "sandbox": self.sandbox,
            "agent_timeout_s": self.agent_timeout_s,
            "verifier_timeout_s": self.verifier_timeout_s,
            "capture": self.capture,
            "repeat": self.repeat,
        }
        if self.auth is not None:  # only when chosen: the cells of matrices without it keep their ids
            value["auth"] = self.auth
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return sha256(text.encode("utf-8", "surrogateescape")).hexdigest()

    @property
    def agent_timeout(self) -> float:
        return self.agent_timeout_s or self.task.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT_S


def profile_digest(profile: Profile) -> str:
    """SHA-256 of what a profile holds (not where it was read from): the same items, the same cell."""
    import base64
    from dataclasses import asdict

    def plain(value: Any) -> Any:
        if isinstance(value, bytes):
            return {"b64": base64.b64encode(value).decode("ascii")}
        if isinstance(value, Mapping):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    held = asdict(replace(profile, sources=(), withheld=()))
    text = json.dumps(plain(held), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class CellResult:
    """What one cell did: outcome class, rewards, usage, time per phase, and where to look.

    Its outcome class says whether the verifier's reward counts (see ``POLICY``):

    >>> import dataclasses, tackroom
    >>> result = tackroom.CellResult(
    ...     cell_id="c1", task="me/hello", harness="codex", model=None, repeat=0, outcome="agent_timeout",
    ...     reason="timed out after 600s", rewards={"reward": 1.0}, reward_status="ok",
    ... )
    >>> result.passed, result.reward  # an agent that timed out is still graded, and its reward counts
    (True, 1.0)
    >>> dataclasses.replace(result, outcome="model_error").passed  # a failed model call's does not
    >>> tackroom.CellResult.from_json(result.to_json()) == result
    True
    """

    cell_id: str
    task: str
    harness: str
    model: str | None
    repeat: int
    outcome: Outcome
    reason: str | None
    rewards: Mapping[str, float] | None
    """The verifier's rewards; None when there is no valid one (``reward_status`` says why)."""
    reward_status: str | None
    """``ok``, ``missing``, ``empty``, ``unparsable``; None when the verifier did not run."""
    exit_code: int | None = None
    timed_out: bool = False
    usage: Mapping[str, Any] | None = None
    """``reported`` (the harness's stream), ``transcript`` (its own logs), ``gateway`` (captured),
    ``counted`` (each figure from the first way that knows it: the gateway, the report, the
    transcript; what the tokens and the cost count),
    each as tackroom's usage figures or None; ``disagree`` names figures that differ."""
    cost_usd: float | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    """Seconds per phase (``setup``, ``agent``, ``verifier``, ``total``), and within them the harness's
    own run (``harness``, its process from start to exit) and the verifier's script (``tests``)."""
    started_at: str = ""
    finished_at: str = ""
    cell_dir: str = ""
    run_dirs: tuple[str, ...] = ()
    approximated: bool = False
    """The task names an image; this host's system stood in for it."""
    notes: tuple[str, ...] = ()
    steps: tuple[Mapping[str, Any], ...] = ()
    attempt: int = 0

    @classmethod
    def of(
        cls, cell: Cell, cell_dir: Path, outcome: Outcome = "ok", reason: str | None = None, **more: Any
    ) -> CellResult:
        """A result of ``cell`` with nothing graded yet (what a cell starts from, or a lost one ends as)."""
        return cls(
            cell_id=cell.id,
            task=cell.task.name,
            harness=cell.harness,
            model=cell.model,
            repeat=cell.repeat,
            outcome=outcome,
            reason=reason,
            rewards=None,
            reward_status=None,
            cell_dir=str(cell_dir),
            **more,
        )

    @property
    def policy(self) -> Policy:
        return POLICY[self.outcome]

    @property
    def passed(self) -> bool | None:
        """Solved (``reward`` of 1 or more); None when there is no valid reward to say."""
        if self.rewards is None or not self.policy.valid_reward:
            return None
        value = self.rewards.get("reward")
        return None if value is None else value >= 1.0

    @property
    def reward(self) -> float | None:
        return None if self.rewards is None or not self.policy.valid_reward else self.rewards.get("reward")

    def to_json(self) -> dict[str, Any]:
        return {
            "cell_id": self.cell_id,
            "task": self.task,
            "harness": self.harness,
            "model": self.model,
            "repeat": self.repeat,
            "attempt": self.attempt,
            "outcome": self.outcome,
            "reason": self.reason,
            "passed": self.passed,
            "reward": self.reward,
            "rewards": None if self.rewards is None else dict(self.rewards),
            "reward_status": self.reward_status,
            "policy": {
                "retry": self.policy.retry,
                "graded": self.policy.graded,
                "valid_reward": self.policy.valid_reward,
            },
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "usage": None if self.usage is None else dict(self.usage),
            "cost_usd": self.cost_usd,
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "cell_dir": self.cell_dir,
            "run_dirs": list(self.run_dirs),
            "approximated": self.approximated,
            "notes": list(self.notes),
            "steps": [dict(step) for step in self.steps],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellResult:
        """The result ``to_json`` wrote (a stored cell); a KeyError or TypeError when it is not one."""
        return cls(
            cell_id=str(data["cell_id"]),
            task=str(data["task"]),
            harness=str(data["harness"]),
            model=data["model"],
            repeat=int(data["repeat"]),
            outcome=data["outcome"] if data["outcome"] in POLICY else _bad(data["outcome"]),
            reason=data["reason"],
            rewards=data["rewards"],
            reward_status=data["reward_status"],
            exit_code=data["exit_code"],
            timed_out=bool(data["timed_out"]),
            usage=data["usage"],
            cost_usd=data["cost_usd"],
            timings=dict(data["timings"]),
            started_at=str(data["started_at"]),
            finished_at=str(data["finished_at"]),
            cell_dir=str(data["cell_dir"]),
            run_dirs=tuple(data["run_dirs"]),
            approximated=bool(data["approximated"]),
            notes=tuple(data["notes"]),
            steps=tuple(data["steps"]),
            attempt=int(data["attempt"]),
        )

    def harbor_json(self, agent_version: str | None = None) -> dict[str, Any]:
        """The trial's ``result.json`` with Harbor's field names where they overlap, tackroom's beside."""
        usage = self.usage or {}
        counted = usage.get("counted") or usage.get("reported") or {}
        counts = {k: v for k, v in counted.items() if isinstance(v, int)}
        cached = counts.get("cache_read", 0) + counts.get("cache_write", 0)
        exception = None
        if self.outcome != "ok":
            exception = {
                "exception_type": self.outcome,
                "exception_message": self.reason or self.outcome,
                "occurred_at": self.finished_at,
            }
        return {
            "task_name": self.task,
            "trial_name": f"{self.task.rsplit('/', 1)[-1]}__{self.cell_id[:12]}",
            "agent_info": {
                "name": self.harness,
                "version": agent_version,
                "model_info": None if self.model is None else {"name": self.model, "provider": None},
            },
            "agent_result": {
                "n_input_tokens": counts["input"] + cached if "input" in counts else None,
                "n_cache_tokens": cached if "cache_read" in counts else None,
                "n_output_tokens": counts.get("output"),
                "cost_usd": self.cost_usd,
            },
            "verifier_result": None if self.reward_status is None else {"rewards": self.rewards},
            "exception_info": exception,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "agent_execution": {"seconds": self.timings.get("agent")},
            "verifier": {"seconds": self.timings.get("verifier")},
            "reward_valid": self.policy.valid_reward and self.rewards is not None,
            "tackroom": self.to_json(),
        }


def _bad(outcome: Any) -> Outcome:
    raise ValueError(f"not an outcome class: {outcome!r}")


@dataclass
class _Layout:
    """The cell's directory: the fresh root's own directories and the agent's runs."""

    cell_dir: Path
    workdir: str

    @property
    def root(self) -> Path:
        return self.cell_dir / "root"

    def host(self, inside: str) -> Path:
        """The host directory that is ``inside`` (an absolute path) in the sandbox."""
        return self.root / PurePosixPath(inside).relative_to("/")

    @property
    def app(self) -> Path:
        return self.host(self.workdir)

    def binds(self, *extra: str) -> dict[str, Path]:
        """What the sandbox shows: the workdir and /logs always, and ``extra`` (``/tests``, ``/solution``)."""
        shown = {self.workdir: self.app, "/logs": self.host("/logs")}
        for inside in extra:
            shown[inside] = self.host(inside)
        return shown


async def run_cell(
    cell: Cell,
    cell_dir: Path,
    *,
    environ: Mapping[str, str] | None = None,
    adapters: Any = None,
    capture_db: Path | str | None = None,
) -> CellResult:
    """Run ``cell`` in ``cell_dir`` (made fresh) and grade it; a failure is a result, never a raise: a
    cell that cannot run as asked (a :class:`~tackroom.errors.CellError`) is ``invalid``, one this
    machine could not run ``infra``. A captured cell's calls go to ``capture_db`` (a SQLite file or
    a ``postgresql://`` URL; default: the state database)."""
    environ = os.environ if environ is None else environ
    started, clock = _now(), time.monotonic()
    image = approximate(cell.task)
    base = CellResult.of(cell, cell_dir, started_at=started)
    if isinstance(image, Unsupported):
        return _finish(replace(base, outcome="unsupported", reason=str(image)), clock)
    layout = _Layout(cell_dir, image.workdir)
    runner = _CellRun(cell, layout, image, environ, adapters, capture_db)
    try:
        result = await runner.run(base)
    except CellError as exc:  # the cell as asked cannot run: the same cell fails the same way
        result = replace(base, outcome="invalid", reason=str(exc))
    except TackroomError as exc:  # this machine could not run it
        result = replace(base, outcome="infra", reason=str(exc))
    except OSError as exc:  # a disk that fills, a directory that cannot be made
        result = replace(base, outcome="infra", reason=f"the cell's files: {exc.strerror or exc}")
    full = _disk_full(cell_dir)
    if full is not None and not (result.outcome == "ok" and result.reward_status == "ok"):
        # Whatever failed in a cell whose disk filled failed for want of space: this machine's fault,
        # not the harness's (another try, with room, may go otherwise).
        said = f"{full}: free some space, then --resume --retry-failed"
        result = replace(
            result, outcome="infra", reason=f"{said} ({result.reason})" if result.reason else said
        )
    notes = (*image.notes, *_network_notes(cell), *result.notes)
    return _finish(replace(result, approximated=image.approximated, notes=notes), clock)


def _network_notes(cell: Cell) -> tuple[str, ...]:
    task, environment = cell.task, cell.task.environment
    phases = [
        task.agent,
        task.verifier,
        *(limits for step in task.steps for limits in (step.agent, step.verifier)),
    ]
    if "allowlist" not in (environment.network_mode, *(limits.network_mode for limits in phases)):
        return ()
    hosts = ", ".join(environment.allowed_hosts or ()) or "none named"
    return (f"network allowlist ({hosts}) cannot be enforced host by host here: the cell had no network",)


DISK_FULL_BYTES = 256 * 1024
"""A cell's filesystem with less free than this (256 KiB) after the cell has filled up."""


def _disk_full(cell_dir: Path) -> str | None:
    """What to say when the filesystem of ``cell_dir`` is full (None: it is not)."""
    for where in (cell_dir, *cell_dir.parents):
        try:
            found = os.statvfs(where)
        except OSError:
            continue
        free = found.f_bavail * found.f_frsize
        if free >= DISK_FULL_BYTES:
            return None
        return f"the disk is full (No space left on device: {free} bytes free under {where})"
    return None


def _finish(result: CellResult, clock: float) -> CellResult:
    timings = {**result.timings, "total": time.monotonic() - clock}
    return replace(result, finished_at=_now(), timings=timings)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _CellRun:
    """The phases of one cell: setup, then per step the agent and the verifier."""

    def __init__(
        self,
        cell: Cell,
        layout: _Layout,
        image: Image,
        environ: Mapping[str, str],
        adapters: Any,
        capture_db: Path | str | None = None,
    ) -> None:
        self.cell, self.layout, self.image, self.environ, self.adapters = (
            cell,
            layout,
            image,
            environ,
            adapters,
        )
        self.capture_db = capture_db
        self.agent_limits: Limits = cell.task.agent
        """The running step's ``[agent]`` (the task's when it has no steps): its network, its timeout."""
        self.timings: dict[str, float] = {
            "setup": 0.0,
            "agent": 0.0,
            "verifier": 0.0,
            "harness": 0.0,
            "tests": 0.0,
        }
        """Seconds per phase, and of them the harness's own run and the verifier's script (the rest of a
        cell's time is tackroom's: the benchmark's overhead per cell)."""
        self.run_dirs: list[str] = []
        self.usage: list[Mapping[str, Any]] = []
        self.cost: list[float | None] = []

    def _cost(self) -> float | None:
        """What the model calls cost: 0 for the oracle (it makes none), None when any is unknown."""
        if self.cell.harness == ORACLE:
            return 0.0
        if not self.cost or None in self.cost:
            return None
        return sum(c for c in self.cost if c is not None)

    def network(self, limits: Limits | None = None) -> Network:
        """``none`` for a task that says ``no-network`` (in ``[environment]``, or in the phase's own
        ``limits``): what runs reaches nothing else. ``allowlist`` gets none too: no sandbox here lets
        some hosts through and not others, so it lets through none (narrower, never wider; the cell's
        notes say so)."""
        modes = (self.cell.task.environment.network_mode, limits.network_mode if limits else None)
        return "host" if narrowest(*modes) == "public" else "none"

    async def run(self, base: CellResult) -> CellResult:
        task = self.cell.task
        if self.cell.sandbox == "none":
            raise CellError(
                f"task {task.name} runs in its own paths ({self.layout.workdir}, /tests, /logs): "
                "choose a sandbox that shows them (bwrap, docker, podman), not none"
            )
        clock = time.monotonic()
        unsupported = await self._setup()
        self.timings["setup"] = time.monotonic() - clock
        if unsupported is not None:
            return replace(base, outcome="unsupported", reason=str(unsupported))
        steps = task.steps or (None,)
        results: list[dict[str, Any]] = []
        last: CellResult | None = None
        for step in steps:
            last = await self._step(base, step)
            if step is not None:
                results.append({"step": step.name, **last.to_json()})
                if not _gate(step, last):
                    break
            if not last.policy.graded:
                break
        assert last is not None
        rewards = last.rewards if not task.steps else _combine(task, results)
        return replace(
            last,
            rewards=rewards,
            usage=_sum_usage(self.usage),
            cost_usd=self._cost(),
            timings=self.timings,
            run_dirs=tuple(self.run_dirs),
            steps=tuple(results),
        )

    async def _setup(self) -> Unsupported | None:
        """The cell's fresh root: the task's workdir and logs, its copies, and its RUN steps run."""
        layout, task = self.layout, self.cell.task
        if layout.cell_dir.exists():
            shutil.rmtree(layout.cell_dir)
        for inside in (layout.workdir, "/logs/agent", "/logs/verifier"):
            layout.host(inside).mkdir(parents=True, exist_ok=True)
        # what the agent was asked, beside its results (the report shows it)
        asked = task.instruction or "\n\n".join(f"## {s.name}\n\n{s.instruction}" for s in task.steps)
        (layout.cell_dir / "instruction.md").write_text(asked, encoding="utf-8")
        context = task.path / "environment"
        for copy in self.image.copies:
            for source in copy.sources:
                problem = _copy_in(context, source, layout.host(copy.destination.rstrip("/") or "/"), copy)
                if problem is not None:
                    return problem
        for line, directory, command in self.image.setup:
            script = f"mkdir -p {_quote(directory)} && cd {_quote(directory)} && {command}"
            done = await self._spawn(["sh", "-c", script], self.image.env, 300.0, layout.binds())
            if done.exit_code != 0:
                said = done.stderr_tail.decode("utf-8", "replace").strip()[-300:]
                where = f"{task.path / 'environment' / 'Dockerfile'}:{line}"
                return Unsupported("needs image build", f"{where}: RUN failed on this host's system ({said})")
        return None

    async def _step(self, base: CellResult, step: Step | None) -> CellResult:
        task, layout = self.cell.task, self.layout
        if step is not None:
            uploaded = step.directory / "workdir"
            if uploaded.is_dir():
                _copy_tree(uploaded, layout.app)
                if (layout.app / "setup.sh").is_file():
                    done = await self._spawn(["bash", "setup.sh"], self.image.env, 300.0, layout.binds())
                    if done.exit_code != 0:
                        return replace(
                            base,
                            outcome="infra",
                            reason=f"step {step.name}: setup.sh exited {done.exit_code}",
                        )
        check = step.healthcheck if step is not None and step.healthcheck is not None else None
        check = check or (task.environment.healthcheck if step is None or step is task.steps[0] else None)
        if check is not None:
            unhealthy = await self._healthcheck(check)
            if unhealthy is not None:
                return replace(base, outcome="infra", reason=unhealthy)
        instruction = step.instruction if step is not None else task.instruction
        self.agent_limits = step.agent if step is not None else task.agent
        clock = time.monotonic()
        agent = await (self._oracle(step) if self.cell.harness == ORACLE else self._harness(instruction))
        self.timings["agent"] += time.monotonic() - clock
        outcome, reason, exit_code, timed_out = agent
        base = replace(base, outcome=outcome, reason=reason, exit_code=exit_code, timed_out=timed_out)
        if not POLICY[outcome].graded:
            return base
        clock = time.monotonic()
        verified = await self._verify(step)
        self.timings["verifier"] += time.monotonic() - clock
        if isinstance(verified, str):  # the verifier timed out
            return replace(base, outcome="verifier_timeout", reason=verified)
        if verified.status != "ok":
            said = verified.detail if reason is None else f"{reason}; {verified.detail}"
            return replace(
                base,
                outcome="no_reward" if outcome == "ok" else outcome,
                reason=said,
                reward_status=verified.status,
            )
        return replace(base, rewards=verified.rewards, reward_status="ok")

    async def _healthcheck(self, check: Healthcheck) -> str | None:
        """Run the task's healthcheck until it passes (as Docker's: a start period with its own interval,
        then ``retries`` more tries); None when it passed, else why the cell cannot go on."""
        started = time.monotonic()
        failures = 0
        said = ""
        while True:
            done = await self._spawn(
                ["sh", "-c", check.command], self.image.env, check.timeout_sec, self.layout.binds()
            )
            if done.exit_code == 0 and not done.timed_out:
                return None
            said = "timed out" if done.timed_out else f"exited {done.exit_code}"
            starting = time.monotonic() - started < check.start_period_sec
            if not starting:
                failures += 1
                if failures > check.retries:
                    return f"the task's healthcheck failed {failures} times (last: {said}): {check.command}"
            await asyncio.sleep(check.start_interval_sec if starting else check.interval_sec)

    async def _harness(self, instruction: str) -> tuple[Outcome, str | None, int | None, bool]:
        from tackroom.run.runner import arun
        from tackroom.run.spec import RunSpec

        cell, layout = self.cell, self.layout
        options = dict(cell.options)
        if cell.model is not None:
            options.setdefault("model", cell.model)
        if self.adapters is None:
            from tackroom.adapters.resolve import load_adapters

            self.adapters = load_adapters(env=self.environ)
        if "auto_accept" in (self.adapters[cell.harness].effective.get("options") or {}):
            # Inside the cell's sandbox nobody is there to approve: the harness acts, as Harbor's agents do.
            options.setdefault("auto_accept", True)
        spec = RunSpec(
            prompt=instruction,
            adapter=cell.harness,
            options=options,
            workdir=layout.app,
            mock=cell.mock,
            base_url=cell.base_url,
            gateway=cell.gateway,
            api_key_env=cell.api_key_env,
            auth=cell.auth,
            timeout_s=cell.agent_timeout,
            profile="none" if cell.profile is None else "given",
            capture=cell.capture and cell.gateway is None,
            env={
                **self.image.env,
                **resolve_env(
                    cell.task.environment.env,
                    self.environ,
                    allowed=cell.allow_host_env,
                    where="[environment].env",
                ),
            },
            sandbox=cell.sandbox,
            network=self.network(self.agent_limits),
        )
        result = await arun(
            spec,
            adapters=self.adapters,
            runs_dir=layout.cell_dir / "runs",
            environ=self.environ,
            binds=layout.binds(),
            capture_db=self.capture_db,
            profile="default" if cell.profile is None else cell.profile,  # "default": the spec's own
        )
        data = result.to_json()
        self.timings["harness"] += result.duration_s
        self.run_dirs.append(data["run_dir"])
        ways = {
            "reported": data["usage"],
            "transcript": _transcript_usage(data),
            "gateway": _gateway_usage(data),
        }
        self.usage.append(ways)
        self.cost.append(_cost(cell.model, counted_usage(ways)))
        if result.timed_out:
            return "agent_timeout", data["error"], result.exit_code, True
        if result.model_failed:
            return "model_error", data["error"], result.exit_code, False
        if data["error"] and "sandbox" in data["error"] and "died" in data["error"]:
            return "infra", data["error"], result.exit_code, False
        if result.exit_code != 0 and not result.released:
            return (
                "harness_crash",
                data["error"] or f"the harness exited {result.exit_code}",
                result.exit_code,
                False,
            )
        return "ok", None, result.exit_code, False

    async def _oracle(self, step: Step | None) -> tuple[Outcome, str | None, int | None, bool]:
        """The task's own solution as the agent: ``/solution/solve.sh`` in the workdir (Harbor's oracle)."""
        task, layout = self.cell.task, self.layout
        solution = (
            step.directory / "solution"
            if step is not None and (step.directory / "solution").is_dir()
            else task.solution_dir
        )
        if not (solution / "solve.sh").is_file():
            return "infra", f"oracle: {solution / 'solve.sh'} is missing", None, False
        target = layout.host("/solution")
        _copy_tree(solution, target)
        env = {
            "DEBIAN_FRONTEND": "noninteractive",
            **self.image.env,
            **task.environment.env,
            **resolve_env(
                task.solution_env, self.environ, allowed=self.cell.allow_host_env, where="[solution].env"
            ),
        }
        script = f"cd {_quote(layout.workdir)} && bash /solution/solve.sh > /logs/agent/oracle.txt 2>&1"
        clock = time.monotonic()
        done = await self._spawn(
            ["bash", "-c", script], env, self.cell.agent_timeout, layout.binds("/solution"), self.agent_limits
        )
        self.timings["harness"] += time.monotonic() - clock
        shutil.rmtree(target, ignore_errors=True)
        if done.timed_out:
            return (
                "agent_timeout",
                f"oracle: timed out after {self.cell.agent_timeout:g}s",
                done.exit_code,
                True,
            )
        if done.sandbox_failure is not None:
            return "infra", done.sandbox_failure, done.exit_code, False
        if done.exit_code != 0:
            return "harness_crash", f"oracle: solve.sh exited {done.exit_code}", done.exit_code, False
        return "ok", None, 0, False

    async def _verify(self, step: Step | None) -> Reward | str:
        """The verifier's contract: stale rewards gone, ``tests/`` at ``/tests``, ``test.sh`` run with its
        output in ``/logs/verifier/test-stdout.txt`` and its exit code ignored, the reward read."""
        task, layout = self.cell.task, self.layout
        verifier_dir = layout.host("/logs/verifier")
        verifier_dir.mkdir(parents=True, exist_ok=True)
        for name in ("reward.json", "reward.txt"):
            (verifier_dir / name).unlink(missing_ok=True)
        tests = layout.host("/tests")
        shutil.rmtree(tests, ignore_errors=True)
        tests.mkdir(parents=True)
        if task.tests_dir.is_dir():
            _copy_tree(task.tests_dir, tests)
        if step is not None and (step.directory / "tests").is_dir():
            _copy_tree(step.directory / "tests", tests)
        limits = step.verifier if step is not None else task.verifier
        allowed = self.cell.allow_host_env
        env = {  # what the task's container would hold, then the verifier's own
            **self.image.env,
            **resolve_env(task.environment.env, self.environ, allowed=allowed, where="[environment].env"),
            **resolve_env(limits.env, self.environ, allowed=allowed, where="[verifier].env"),
        }
        timeout = self.cell.verifier_timeout_s or limits.timeout_sec or 600.0
        script = f"cd {_quote(layout.workdir)} && bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1"
        clock = time.monotonic()
        done = await self._spawn(["bash", "-c", script], env, timeout, layout.binds("/tests"), limits)
        self.timings["tests"] += time.monotonic() - clock
        shutil.rmtree(tests, ignore_errors=True)
        if done.timed_out:
            return f"the verifier timed out after {timeout:g}s"
        return read_reward(verifier_dir)

    async def _spawn(
        self,
        argv: list[str],
        env: Mapping[str, str],
        timeout_s: float,
        binds: Mapping[str, Path],
        limits: Limits | None = None,
    ) -> Any:
        """``argv`` in the cell's sandbox layout (not a harness: the task's own scripts), in the network
        of the phase ``limits`` are for (None: the environment's: set-up and health checks)."""
        layout = self.layout
        real_home = self.environ.get("HOME")
        places = Places(
            run_dir=layout.host("/logs"),
            workdir=layout.app,
            home=None,
            real_home=Path(real_home) if real_home else None,
            binds=tuple(sorted(binds.items())),
        )
        sandbox = get_sandbox(self.cell.sandbox)(places, self.network(limits))
        full_env = {"PATH": PATH_INSIDE, "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp", **env}
        try:
            return await sandbox.spawn(
                argv,
                env=full_env,
                cwd=layout.app,
                timeout_s=timeout_s,
                stdin=None,
                on_stdout_line=None,
                escape_marker=None,
            )
        finally:
            sandbox.stop()


def _gate(step: Step, result: CellResult) -> bool:
    """Whether the next step runs: this step's rewards reach its ``min_reward`` (a missing key is -inf)."""
    if step.min_reward is None:
        return True
    gates = step.min_reward if isinstance(step.min_reward, Mapping) else {"reward": step.min_reward}
    rewards = result.rewards or {}
    return all(rewards.get(key, float("-inf")) >= value for key, value in gates.items())


def _combine(task: Task, steps: list[dict[str, Any]]) -> dict[str, float] | None:
    """A task of steps' reward: the last step's (``final``) or each key's mean over the graded steps."""
    graded = [s["rewards"] for s in steps if s["rewards"] is not None]
    if task.reward_strategy == "final":
        return steps[-1]["rewards"] if steps else None
    if not graded:
        return None
    keys = sorted({key for rewards in graded for key in rewards})
    return {key: sum(r.get(key, 0.0) for r in graded) / len(graded) for key in keys}


def _transcript_usage(data: Mapping[str, Any]) -> dict[str, Any] | None:
    trace = data.get("trace") or {}
    sessions = trace.get("sessions") or []
    if not sessions:
        return None
    return _add([s.get("usage") or {} for s in sessions])


_WIRE_FIGURES = {
    "input": "input_uncached",
    "output": "output",
    "cache_read": "cache_read",
    "cache_write": "cache_write",
}


def _gateway_usage(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the run's gateway captured, as tackroom's usage figures: the model calls' (a request the
    gateway could not place on a model API, such as a harness's probe of the base URL, is none);
    a figure some model call did not report is ``not_reported``, never a partial sum."""
    capture = data.get("capture") or {}
    calls = capture.get("calls")
    if isinstance(calls, list):
        model_calls = [c for c in calls if isinstance(c, Mapping) and c.get("wire_api") is not None]
        found: dict[str, Any] = {}
        for name, key in _WIRE_FIGURES.items():
            values = [(c.get("usage") or {}).get(key) for c in model_calls]
            known = bool(values) and all(isinstance(v, int) for v in values)
            found[name] = sum(values) if known else "not_reported"
        return found
    summary = capture.get("usage")
    if not isinstance(summary, Mapping) or not isinstance(summary.get("usage"), Mapping):
        return None
    figures, missing = summary["usage"], summary.get("not_reported") or {}
    found = {}
    for name, key in _WIRE_FIGURES.items():
        value = figures.get(key)
        found[name] = value if isinstance(value, int) and not missing.get(key) else "not_reported"
    return found


FIGURES = ("input", "output", "cache_read", "cache_write")


def _add(reports: list[Mapping[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for name in FIGURES:
        values = [r.get(name) for r in reports]
        total[name] = sum(values) if all(isinstance(v, int) for v in values) else "not_reported"
    return total


COUNTED_FROM = ("gateway", "reported", "transcript")
"""Where a counted figure comes from, first known first: the wire (what the gateway captured), then
what the harness reported, then its transcript."""


def counted_usage(ways: Mapping[str, Any]) -> dict[str, Any]:
    """The figures a cell's tokens and cost count: each from the first way that knows it
    (:data:`COUNTED_FROM`), else ``not_reported``; never a figure invented."""
    counted: dict[str, Any] = {}
    for name in FIGURES:
        known = [way.get(name) for key in COUNTED_FROM if isinstance(way := ways.get(key), Mapping)]
        counted[name] = next((v for v in known if isinstance(v, int)), "not_reported")
    return counted


def _sum_usage(usages: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    if not usages:
        return None
    summed: dict[str, Any] = {"counted": _add([counted_usage(u) for u in usages])}
    for way in ("reported", "transcript", "gateway"):
        reports = [u[way] for u in usages]
        summed[way] = None if any(r is None for r in reports) else _add(reports)
    known = [summed[w] for w in ("reported", "transcript", "gateway") if summed[w] is not None]
    summed["disagree"] = sorted(
        {
            name
            for name in FIGURES
            for a in known
            for b in known
            if isinstance(a[name], int) and isinstance(b[name], int) and a[name] != b[name]
        }
    )
    return summed


def _cost(model: str | None, usage: Mapping[str, Any]) -> float | None:
    """The price table's cost of ``usage`` on ``model``; None when either is unknown (never 0)."""
    if model is None or not all(isinstance(usage.get(name), int) for name in FIGURES):
        return None
    from tackroom.prices import PriceBook

    book = PriceBook.default()
    prices = book.lookup(model)
    book.save()
    if prices is None:
        return None
    whole = usage["input"] + usage["cache_read"] + usage["cache_write"]
    rates = prices.rates[prices.price_class(whole)]
    return float(rates.cost(usage["input"], usage["output"], usage["cache_read"], usage["cache_write"]))


def look_up_prices(cells: list[Cell]) -> None:
    """Look the models' prices up once, before any cell starts (the price table takes half a second to
    load, which would otherwise fall in the first cell of each model); a cache, so a failure is none."""
    models = sorted({c.model for c in cells if c.model is not None and c.harness != ORACLE})
    if not models:
        return
    from tackroom.prices import PriceBook

    book = PriceBook.default()
    book.prefetch(models)
    book.save()


def _copy_in(context: Path, source: str, destination: Path, copy: Any) -> Unsupported | None:
    """Copy ``source`` (in the build context, no escape) to ``destination`` as ``COPY`` would."""
    resolved = (context / source).resolve()
    if not (resolved == context.resolve() or context.resolve() in resolved.parents):
        return Unsupported("needs image build", f"COPY {source} (line {copy.line}) leaves the build context")
    if resolved.is_dir():
        _copy_tree(resolved, destination)
    elif resolved.is_file():
        target = (
            destination / resolved.name
            if copy.destination.endswith("/") or destination.is_dir()
            else destination
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(resolved, target)
    else:
        return Unsupported(
            "needs image build", f"COPY {source} (line {copy.line}): no such file in environment/"
        )
    return None


def _copy_tree(source: Path, target: Path) -> None:
    """``source``'s files into ``target`` (links kept as links, never followed out)."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)
