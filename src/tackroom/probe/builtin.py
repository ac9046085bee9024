"""tackroom's own probe: a few real runs of the harness against the mock, many observations each.

Every observation rests on something seen, never on what the adapter claims:
a unique marker reaching the model, a file a hook wrote, a process table, a
transcript on disk. Four runs cover every capability (CI probes nine
harnesses, several at two versions, on two cores):

* **profile**: rules, a skill, a subagent and a command carrying markers, the
  command as the prompt, a model asked for by name and distinctive usage
  figures: ``rules.read``, ``skills.visible``, ``agents.visible``,
  ``commands.expand``, ``usage.exact``, ``endpoint.model``,
  ``transcripts.written``;
* **tools**: an MCP server and a hook at every moment; the model reads a
  file, runs a shell command a refuse hook must block, then calls the MCP
  tool (last: a harness that does not offer it ends the conversation there):
  ``mcp.offered|called|answered``, ``hooks.<moment>.fire``, ``hooks.inject``,
  ``hooks.refuse``;
* **error**: the model answers HTTP 400: ``error.detected``;
* **timeout**: the model never answers and the run times out with the MCP
  server running: ``process.tree_killed``.

A capability the adapter does not declare is not tested (absent, with a note). One the harness
reads only from a project (Cursor's rules, kimi's AGENTS.md) is rendered into the run's own scratch
working directory, as ``tackroom profile render --project`` writes it; a run never writes into a
user's project, so there it is dropped by name.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.errors import TackroomError
from tackroom.paths import glob_regex as glob_regex
from tackroom.probe import procs
from tackroom.probe.findings import Findings, Observations, Trouble
from tackroom.probe.rows import NOT_OBSERVED, Support
from tackroom.profile.model import Agent, Command, Hook, McpServer, Profile, Rule, Skill
from tackroom.vocabulary import MOMENTS

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.harnesses import Located
    from tackroom.mock import MockServer, Script
    from tackroom.profile.engines.base import Kind
    from tackroom.run.result import Result
    from tackroom.run.sandbox import Network

MARK = "TRPROBE"
MCP_SERVER = Path(__file__).with_name("mcp_server.py")
PROBE_MODEL = "tackroom-probe-model"
"""The model a probe asks for where any name routes: no harness uses it by default, so seeing it
proves the asking. An adapter whose endpoint needs a model it knows (``model_endpoint.model``) is
asked for that one."""
ERROR_RUN_TIMEOUT_S = 90.0
"""An injected error must end the run well within this; a harness still waiting has hung on it."""
TIMEOUT_RUN_DEFAULT_S = 30.0
"""The timeout run's timeout when no earlier run showed how long the harness takes to ask the model."""
TIMEOUT_RUN_MIN_S = 3.0
"""The shortest timeout run: time to start, reach the model and be kept waiting there."""
_WALK_LIMIT = 20_000
PROJECT_KINDS: tuple[Kind, ...] = ("rules", "skills", "subagents", "commands", "hooks", "mcp")
"""The capabilities a probe gives items of, and so may render into its working directory."""
"""The most entries a transcript search looks at: a run's home is small, a hostile one is not."""


@dataclass(frozen=True)
class Harness:
    """What a probe runs: an adapter, and the install of its harness to run it with."""

    adapter: Adapter
    located: Located
    version: str | None


@dataclass
class Attempt:
    """One probe run: its result, the mock it talked to, and where it ran."""

    name: str
    result: Result
    mock: MockServer
    """The mock the run talked to (stopped: what it recorded stays readable)."""
    base_url: str
    workdir: Path
    started: float
    """Wall-clock time (``time.time()``) just before the run."""

    def trouble(self) -> Trouble | None:
        """Why this run, which had to succeed, did not (None when it did)."""
        if self.result.timed_out:
            return Trouble("timeout", f"the {self.name} run timed out ({self.result.error})")
        if not self.result.ok:
            return Trouble("failed", f"the {self.name} run failed: {self.result.error}")
        return None

    def first_request_s(self) -> float | None:
        """Seconds from the start of the run to the harness's first request to the model."""
        times = [r.received_at for r in self.mock.requests if r.wire is not None]
        return min(times) - self.started if times else None


@dataclass
class Context:
    """Where and how the probe's runs happen, and what they found so far."""

    harness: Harness
    wanted: frozenset[str]
    scratch: Path
    environ: Mapping[str, str]
    timeout_s: float
    findings: Findings = field(default_factory=Findings)
    first_request_s: float | None = None
    sandbox: str = "none"
    """Where each probe run's harness runs (``tackroom probe NAME --sandbox bwrap``)."""
    network: Network = "host"

    @property
    def adapter(self) -> Adapter:
        return self.harness.adapter

    def wants(self, capability: str, declared: bool, why: str) -> bool:
        """Whether to test ``capability``: asked for, and declared (else noted as untested, why)."""
        if capability not in self.wanted:
            return False
        if not declared:
            self.findings.untested(capability, why)
        return declared

    async def run(
        self,
        name: str,
        profile: Profile,
        script: Script,
        *,
        prompt: str = "Reply with ok.",
        options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
    ) -> Attempt | None:
        """One run of the harness against a fresh mock; None (and a trouble) if it could not start."""
        from tackroom.mock import MockServer
        from tackroom.run.runner import arun, vocabulary

        workdir = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.scratch))
        profile = self.into_project(profile, workdir)
        started = time.time()
        try:
            with MockServer(script, tools=vocabulary(self.adapter)) as mock:
                base_url = mock.base_url
                result = await arun(
                    self.adapter,
                    prompt,
                    workdir=workdir,
                    mock=mock,
                    profile=profile,
                    options=options,
                    timeout_s=timeout_s or self.timeout_s,
                    runs_dir=self.scratch / "runs",
                    environ=self.environ,
                    executable=self.harness.located,
                    sandbox=self.sandbox,
                    network=self.network,
                    writable=(self.scratch,),  # where the probe's hooks and MCP server report
                )
        except TackroomError as exc:
            self.findings.troubles.append(Trouble("failed", f"the {name} run could not start: {exc}"))
            return None
        attempt = Attempt(name, result, mock, base_url, workdir, started)
        if self.first_request_s is None:
            self.first_request_s = attempt.first_request_s()
        return attempt

    def into_project(self, profile: Profile, workdir: Path) -> Profile:
        """``profile`` less what the harness reads only from a project (a capability with a
        ``project`` place and no home one), which is rendered into ``workdir``, the probe's own."""
        from tackroom.profile.render import KINDS, kind_items, plan_render, write

        caps = self.adapter.spec.capabilities
        fields = {
            KINDS[kind]
            for kind in PROJECT_KINDS
            if kind_items(profile, kind)
            and (capability := getattr(caps, kind)) is not None
            and not capability.path
            and capability.project
        }
        if not fields:
            return profile
        part = Profile(**{name: getattr(profile, name) for name in fields})
        write(plan_render(part, self.adapter, root=workdir, scope="project", workdir=workdir))
        emptied: dict[str, Any] = dict.fromkeys(fields, ())
        return replace(profile, **emptied)


async def observe(context: Context) -> Findings:
    """Run every session some wanted capability needs; return what they found."""
    if context.adapter.spec.model_endpoint is None:
        why = "the adapter has no [model_endpoint]: it cannot be pointed at the mock"
        for capability in sorted(context.wanted):
            context.findings.untested(capability, why)
        context.findings.troubles.append(
            Trouble("failed", "the adapter has no [model_endpoint], so no probe run can reach the mock")
        )
        return context.findings
    for session in SESSIONS:
        await session(context)
    return context.findings


# --- profile: rules, skills, subagents, commands, usage, model, transcripts -----------------


FIGURES = {"input": 321, "output": 54, "cache_read": 21, "cache_write": 5, "reasoning": 3}
"""The usage the mock reports in the profile run: figures no harness would make up."""


async def _profile_session(ctx: Context) -> None:
    items = _profile_items(ctx)
    usage = "usage.exact" in ctx.wanted
    model = ctx.wants(
        "endpoint.model", ctx.adapter.spec.options.model is not None, "the adapter has no model option"
    )
    found = ctx.adapter.spec.transcripts
    transcripts = ctx.wants(
        "transcripts.written",
        found is not None and found.runs,
        "the adapter declares no transcript roots"
        if found is None
        else "the adapter says its runs leave no session there (transcripts.runs = false)",
    )
    if not (items or usage or model or transcripts):
        return
    from tackroom.mock import Script, Turn, Usage

    options: dict[str, Any] = {"model": probe_model(ctx.adapter)} if model else {}
    prompt = "Reply with ok."
    if "commands.expand" in items:
        prompt, extra = _invocation(ctx.adapter)
        options |= extra
    profile = Profile(**{kind: (item,) for _capability, (kind, item, _marker) in items.items()})  # type: ignore[arg-type]
    script = Script([Turn.reply("ok", usage=Usage(**FIGURES))])
    attempt = await ctx.run("profile", profile, script, prompt=prompt, options=options)
    if attempt is None:
        return
    seen: Observations = {
        capability: _saw(attempt.mock, marker, attempt.result) for capability, (_, _, marker) in items.items()
    }
    if usage:
        seen["usage.exact"] = _usage(ctx.adapter, attempt.result)
    if model:
        seen["endpoint.model"] = _model(attempt.mock, probe_model(ctx.adapter))
    if transcripts:
        seen["transcripts.written"] = _transcripts(ctx, attempt)
    ctx.findings.add(seen, attempt.trouble())


def _profile_items(ctx: Context) -> dict[str, tuple[str, Any, str]]:
    """Capability -> (profile field, the item carrying a marker, the text that proves it was used)."""
    caps = ctx.adapter.spec.capabilities
    found: dict[str, tuple[str, Any, str]] = {}
    if ctx.wants("rules.read", caps.rules is not None, "the adapter declares no rules capability"):
        marker = _mark(ctx, "RULES")
        found["rules.read"] = ("rules", Rule("probe", f"Rule text {marker}\n"), marker)
    if ctx.wants("skills.visible", caps.skills is not None, "the adapter declares no skills capability"):
        marker = _mark(ctx, "SKILL")
        skill = Skill("tr-probe-skill", f"{marker} explains the probe.", "Say PROBE_SKILL_BODY.\n")
        found["skills.visible"] = ("skills", skill, marker)
    if ctx.wants(
        "agents.visible", caps.subagents is not None, "the adapter declares no subagents capability"
    ):
        marker = _mark(ctx, "AGENT")
        # A real-looking prompt: a harness may skip a subagent whose prompt is a single word.
        found["agents.visible"] = (
            "agents",
            Agent("tr-probe-agent", f"{marker} reviews changes.", "You review changes.\n"),
            marker,
        )
    if ctx.wants("commands.expand", caps.commands is not None, "the adapter declares no commands capability"):
        marker = _mark(ctx, "COMMAND")
        command = Command("tr-probe-cmd", "Probe command.", f"{marker} with $ARGUMENTS\n")
        # Proven only by the expansion: the body with the prompt's arguments in it.
        found["commands.expand"] = ("commands", command, f"{marker} with probe-args")
    return found


def _mark(ctx: Context, what: str) -> str:
    return f"{MARK}_{what}_{ctx.adapter.name}"


def _invocation(adapter: Adapter) -> tuple[str, dict[str, Any]]:
    """The prompt that runs the probe command, and the option a harness that runs one by flag needs."""
    capability = adapter.spec.capabilities.commands
    invoke = capability.invoke if capability and capability.invoke else "/{name} {args}"
    options = {"command": "tr-probe-cmd"} if adapter.spec.options.command is not None else {}
    return invoke.format(name="tr-probe-cmd", args="probe-args"), options


def _saw(mock: MockServer, marker: str, result: Result) -> tuple[Support, str]:
    if mock.saw(marker):
        return True, ""
    dropped = "; ".join(result.dropped)
    return False, f"the marker never reached the model{f' (dropped: {dropped})' if dropped else ''}"


def _usage(adapter: Adapter, result: Result) -> tuple[Support, str]:
    """The figures the mock sent, in tackroom's convention (input excludes cache reads), come back."""
    from tackroom.families import get_family

    wire = adapter.spec.model_endpoint.wire_api if adapter.spec.model_endpoint else None
    # The mock puts `input` in the wire's own field: Anthropic's excludes cache reads, the
    # others' include them.
    fresh = FIGURES["input"] if wire == "anthropic-messages" else FIGURES["input"] - FIGURES["cache_read"]
    expected = {**FIGURES, "input": fresh}
    reported = {k: v for k, v in result.usage.to_json().items() if v != "not_reported"}
    if not reported:
        return NOT_OBSERVED, "the harness reported no usage at all"
    declared = get_family(adapter.family).reports_usage
    wrong = {k: v for k, v in reported.items() if v != expected[k]}
    missing = sorted(set(declared) - set(reported))
    if wrong or missing:
        said = [f"{k} {v} (sent {expected[k]})" for k, v in wrong.items()]
        said += [f"{k} not reported (the family says it is)" for k in missing]
        return False, "; ".join(said)
    return True, ""


def probe_model(adapter: Adapter) -> str:
    """The model the probe asks for: one the harness can route (see :data:`PROBE_MODEL`)."""
    endpoint = adapter.spec.model_endpoint
    return endpoint.model if endpoint is not None and endpoint.model else PROBE_MODEL


def _model(mock: MockServer, asked: str) -> tuple[Support, str]:
    """The model asked for is the model that reached the endpoint."""
    from tackroom.mock.wires import route
    from tackroom.mock.wires.base import Exchange

    models: list[str] = []
    for request in mock.requests:
        found = route(request.method, request.path)
        if found is None or found.wire is None or not isinstance(request.body, dict):
            continue
        named = found.wire.model(Exchange(request.path, request.body))
        if named not in models:
            models.append(named)
    if not models:
        return NOT_OBSERVED, "no request reached the model endpoint"
    if asked in models:
        others = [m for m in models if m != asked]
        return True, f"asked for {asked}" + (f"; side requests named {', '.join(others)}" if others else "")
    return False, f"asked for {asked}; the endpoint saw {', '.join(models)}"


def _transcripts(ctx: Context, attempt: Attempt) -> tuple[Support, str]:
    """A session file appeared under the adapter's declared transcript roots."""
    roots = transcript_roots(ctx.adapter, attempt, ctx.environ)
    spec = ctx.adapter.spec.transcripts
    assert spec is not None
    # The run's home and workdir are the harness's to write: a root it turned into a link out of
    # the run proves nothing about where sessions go, and is not followed.
    scratch = ctx.scratch.resolve()
    inside = [r for r in roots if r.resolve() == scratch or scratch in r.resolve().parents]
    for root in inside:
        if _find(root, spec.glob):
            return True, ""
    shown = ", ".join(str(r) for r in roots)
    linked = "; ".join(f"{r} is a link out of the run" for r in roots if r not in inside)
    return False, f"no file matching {spec.glob} under {shown}" + (f" ({linked})" if linked else "")


def transcript_roots(adapter: Adapter, attempt: Attempt, environ: Mapping[str, str]) -> list[Path]:
    """The adapter's transcript roots as the run resolved them (its home, its environment)."""
    from tackroom.adapters.plan import Endpoint, plan_run
    from tackroom.adapters.templates import expand_path

    spec = adapter.spec.transcripts
    if spec is None:
        return []
    home = attempt.result.run_dir / "home"
    endpoint = Endpoint.for_mock(attempt.base_url)
    plan = plan_run(adapter, "probe", workdir=attempt.workdir, home=home, endpoint=endpoint, environ=environ)
    env = plan.environ()
    return [expand_path(root, env=env, home=str(home), workdir=str(attempt.workdir)) for root in spec.roots]


def _find(root: Path, glob: str) -> bool:
    """Whether a file under ``root`` matches ``glob`` (pathlib's: ``**`` is any number of
    directories); links are not followed, and the walk is bounded."""
    pattern, seen = glob_regex(glob), 0
    for directory, dirs, files in os.walk(root, followlinks=False):
        for name in files:
            if pattern.fullmatch(Path(directory, name).relative_to(root).as_posix()):
                return True
        seen += len(files) + len(dirs)
        if seen > _WALK_LIMIT:
            return False
    return False


# --- tools: MCP round trip, hooks at every moment, inject, refuse ------------------------


async def _tools_session(ctx: Context) -> None:
    plan = _ToolsPlan.make(ctx)
    if plan is None:
        return
    attempt = await ctx.run(
        "tools", plan.profile, plan.script(), options=_auto(ctx.adapter), prompt="Use the tools as asked."
    )
    if attempt is None:
        return
    seen: Observations = {}
    if plan.mcp:
        seen |= _mcp(ctx, attempt, plan.mcp_log)
    fired = _lines(plan.fired)
    called = any(r.answer.get("kind") == "tool" for r in attempt.mock.requests)
    for moment in plan.moments:
        if moment in fired:
            seen[f"hooks.{moment}.fire"] = (True, "")
        elif moment in ("before-tool", "after-tool") and not called:
            seen[f"hooks.{moment}.fire"] = (NOT_OBSERVED, "no tool call reached the harness")
        else:
            seen[f"hooks.{moment}.fire"] = (False, "the hook's command did not run")
    if plan.inject is not None:
        seen["hooks.inject"] = _saw(attempt.mock, _mark(ctx, "INJECT"), attempt.result)
    if plan.refuse:
        seen["hooks.refuse"] = _refused(ctx, attempt)
    ctx.findings.add(seen, attempt.trouble())


@dataclass
class _ToolsPlan:
    """What the tools run renders and asks the model to do."""

    ctx: Context
    mcp: bool
    moments: list[str]
    inject: str | None
    refuse: bool
    after: str | None
    """A tool the model calls that completes (the refuse hook leaves it alone), for the tool moments."""

    @property
    def fired(self) -> Path:
        return self.ctx.scratch / "hooks-fired.txt"

    @property
    def mcp_log(self) -> Path:
        return self.ctx.scratch / "mcp.jsonl"

    @classmethod
    def make(cls, ctx: Context) -> _ToolsPlan | None:
        spec = ctx.adapter.spec
        # Every MCP capability is looked at (so each untested one gets its note), then any of them.
        declared = spec.capabilities.mcp is not None
        mcp = any([ctx.wants(c, declared, "the adapter declares no mcp capability") for c in MCP_CAPS])  # noqa: C419
        hooks = spec.capabilities.hooks
        events: dict[str, str] = {str(k): v for k, v in hooks.events.items()} if hooks is not None else {}
        why = (
            "the adapter declares no hooks capability"
            if hooks is None
            else "the adapter's hooks map has no {m}"
        )
        moments = [m for m in MOMENTS if ctx.wants(f"hooks.{m}.fire", m in events, why.format(m=m))]
        inject = _inject_moment(ctx, events)
        refuse = _can_refuse(ctx, events)
        after = _completing_tool(ctx, refuse) if {"before-tool", "after-tool"} & set(moments) else None
        if after is None and not mcp and "after-tool" in moments:
            moments.remove("after-tool")
            ctx.findings.untested("hooks.after-tool.fire", "the adapter names no tool the probe can call")
        if not (mcp or moments or inject or refuse):
            return None
        return cls(ctx, mcp, moments, inject, refuse, after)

    @property
    def profile(self) -> Profile:
        hooks = [
            Hook(f"tr-fire-{m}", m, "command", command=f"echo {m} >> {shlex.quote(str(self.fired))}")
            for m in self.moments
        ]
        if self.inject is not None:
            hooks.append(Hook("tr-inject", self.inject, "inject", text=_mark(self.ctx, "INJECT")))
        if self.refuse:
            hooks.append(
                Hook(
                    "tr-refuse", "before-tool", "refuse", text=_mark(self.ctx, "REFUSED"), matcher=("shell",)
                )
            )
        servers: tuple[McpServer, ...] = ()
        if self.mcp:
            servers = (_mcp_server(self.mcp_log),)
        return Profile(mcp=servers, hooks=tuple(hooks))

    def script(self) -> Script:
        from tackroom.mock import Script, Turn

        # The MCP call goes last: a tool the harness does not offer is answered with text, which
        # ends the conversation, and must not cost the hook observations before it.
        turns = []
        if self.after is not None:
            turns.append(_completing_call(self.after, self.ctx.scratch))
        if self.refuse:
            turns.append(Turn.call("shell", {"command": "echo refused > refused.txt"}))
        if self.mcp:
            load = _mcp_load(self.ctx.adapter, "trprobe", "tr_echo")
            if load is not None:  # a harness that defers MCP tools offers one once it is loaded
                turns.append(load)
            turns.append(Turn.call("mcp:trprobe/tr_echo", {"text": "probe-ping"}))
        return Script([*turns, Turn.reply("done")])


MCP_CAPS = ("mcp.offered", "mcp.called", "mcp.answered")


def _mcp_load(adapter: Adapter, server: str, tool: str) -> Any:
    """The call that loads a deferred MCP tool (``tools.mcp_load``), or None where tools are offered."""
    from tackroom.mock import Turn

    load = adapter.spec.tools.mcp_load
    if load is None:
        return None
    name = (adapter.spec.tools.mcp or "mcp__{server}__{tool}").format(server=server, tool=tool)
    fill = {"{name}": name, "{server}": server, "{tool}": tool}
    args = {key: _fill(value, fill) for key, value in load.args.items()}
    return Turn.call(f"raw:{load.tool}", args)


def _fill(text: str, values: Mapping[str, str]) -> str:
    for field_, value in values.items():
        text = text.replace(field_, value)
    return text


def _inject_moment(ctx: Context, events: Mapping[str, str]) -> str | None:
    hooks = ctx.adapter.spec.capabilities.hooks
    channel = hooks.inject if hooks is not None else None
    listed: list[str] = list(channel.moments or events) if channel is not None else []
    moments = [m for m in listed if m in events]
    preferred = [m for m in ("prompt-submit", "session-start", "after-tool") if m in moments]
    if hooks is None:
        why = "the adapter declares no hooks capability"
    elif channel is None:
        why = "the adapter has no hooks inject template"
    else:
        why = "no moment the probe uses takes an inject"
    if not ctx.wants("hooks.inject", bool(preferred), why):
        return None
    return preferred[0]


def _can_refuse(ctx: Context, events: Mapping[str, str]) -> bool:
    spec = ctx.adapter.spec
    hooks = spec.capabilities.hooks
    channel = hooks.refuse if hooks is not None else None
    usable = (
        channel is not None
        and "before-tool" in events
        and (channel.moments is None or "before-tool" in channel.moments)
        and spec.tools.shell is not None
    )
    if hooks is None:
        why = "the adapter declares no hooks capability"
    elif channel is None:
        why = "the adapter has no hooks refuse template"
    else:
        why = "the refuse template does not serve before-tool, or the adapter names no shell tool"
    return ctx.wants("hooks.refuse", usable, why)


def _completing_tool(ctx: Context, refuse: bool) -> str | None:
    """A tool the model can call that the refuse hook leaves alone (it blocks shell)."""
    tools = ctx.adapter.spec.tools
    if tools.read_file is not None:
        return "read_file"
    return "shell" if tools.shell is not None and not refuse else None


def _completing_call(tool: str, scratch: Path) -> Any:
    from tackroom.mock import Turn

    if tool == "read_file":
        target = scratch / "probe-read.txt"
        target.write_text("probe\n", encoding="utf-8")
        return Turn.call("read_file", {"file_path": str(target)})
    return Turn.call("shell", {"command": "echo ok > allowed.txt"})


def _mcp_server(log: Path) -> McpServer:
    return McpServer(
        "trprobe", command=sys.executable, args=(str(MCP_SERVER),), env=(("TR_MCP_LOG", str(log)),)
    )


def _mcp(ctx: Context, attempt: Attempt, log: Path) -> Observations:
    from tackroom.mock.vocabulary import named

    tools = ctx.adapter.spec.tools
    pattern = tools.mcp_offered or tools.mcp or "mcp__{server}__{tool}"
    tool = pattern.format(server="trprobe", tool="tr_echo")
    calls = [m for m in _messages(log) if m.get("method") == "tools/call"]
    offered = any(named(name, tool) for name in attempt.mock.offered_tools()) or attempt.mock.saw(
        "TACKROOM_MCP_MARKER"
    )
    seen: Observations = {}
    if "mcp.offered" in ctx.wanted:
        seen["mcp.offered"] = (True, "") if offered else (False, f"{tool} was never offered to the model")
    if "mcp.called" in ctx.wanted:
        seen["mcp.called"] = (True, "") if calls else (False, "the MCP server never received tools/call")
    if "mcp.answered" in ctx.wanted:
        if attempt.mock.saw("TR_ECHO:probe-ping"):
            seen["mcp.answered"] = (True, "")
        elif calls:
            seen["mcp.answered"] = (False, "the server answered; the answer never reached the model")
        else:
            seen["mcp.answered"] = (
                NOT_OBSERVED,
                "the tool was never called, so there was no answer to pass on",
            )
    return seen


def _refused(ctx: Context, attempt: Attempt) -> tuple[Support, str]:
    if (attempt.workdir / "refused.txt").exists():
        return False, "the shell command ran despite the refuse hook"
    if attempt.mock.saw(_mark(ctx, "REFUSED")):
        return True, ""
    from tackroom.run.runner import vocabulary

    shell = vocabulary(ctx.adapter).translate("shell").name
    asked = any(
        r.answer.get("kind") == "tool" and r.answer.get("name") == shell for r in attempt.mock.requests
    )
    if not asked:
        return NOT_OBSERVED, "the model's shell call was never made, so there was nothing to refuse"
    return False, "the command did not run, but the refusal's reason never reached the model"


def _auto(adapter: Adapter) -> dict[str, Any]:
    return {"auto_accept": True} if adapter.spec.options.auto_accept is not None else {}


def _lines(path: Path) -> set[str]:
    try:
        return {line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()}
    except OSError:
        return set()


def _messages(log: Path) -> list[dict[str, Any]]:
    """The MCP server's log: one JSON object per line (it is our own server, read defensively)."""
    found = []
    for line in _read(log).splitlines()[:1000]:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(message, dict):
            found.append(message)
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:1_000_000]
    except OSError:
        return ""


# --- error: an injected model error is a failure, whatever the exit code --------------------


async def _error_session(ctx: Context) -> None:
    if "error.detected" not in ctx.wanted:
        return
    from tackroom.mock import Script, Turn

    script = Script([Turn.error(400, f"{MARK}_ERROR injected by the probe")])
    attempt = await ctx.run("error", Profile(), script, timeout_s=min(ctx.timeout_s, ERROR_RUN_TIMEOUT_S))
    if attempt is None:
        return
    result = attempt.result
    answered = any(r.answer.get("kind") == "error" for r in attempt.mock.requests)
    if not answered:
        ctx.findings.add(
            {}, Trouble("failed", f"the error run never reached the mock: {result.error or 'no error'}")
        )
        ctx.findings.untested("error.detected", "the harness never asked the model, so no error was injected")
        return
    if result.timed_out:
        value: tuple[Support, str] = (False, "the harness hung on the injected error until the timeout")
    elif result.ok:
        value = (False, f"the run looked successful (exit {result.exit_code}, no error reported)")
    else:
        value = (True, f"exit {result.exit_code}: {result.error}")
    ctx.findings.add({"error.detected": value}, None)


# --- timeout: a timeout leaves nothing running -------------------------------------------------


async def _timeout_session(ctx: Context) -> None:
    if "process.tree_killed" not in ctx.wanted:
        return
    from tackroom.mock import Script, Turn

    mcp = ctx.adapter.spec.capabilities.mcp is not None
    log = ctx.scratch / "mcp-timeout.jsonl"
    # A child to kill: the MCP server, where the harness starts one.
    profile = Profile(mcp=(_mcp_server(log),)) if mcp else Profile()
    script = Script([Turn.reply("too late", delay_s=3600)])
    attempt = await ctx.run("timeout", profile, script, timeout_s=_timeout_for(ctx))
    if attempt is None:
        return
    if not attempt.result.timed_out:
        why = f"the harness ended by itself before the timeout ({attempt.result.error or 'exit 0'})"
        ctx.findings.add({"process.tree_killed": (NOT_OBSERVED, why)}, None)
        return
    pids = [m.get("pid") for m in _messages(log)]
    left = procs.leftovers(attempt.result.run_dir, attempt.workdir, pids, command=str(MCP_SERVER))
    procs.stop(left)
    waiting = any(r.wire is not None for r in attempt.mock.requests)
    context = "while the model kept it waiting" if waiting else "before it reached the model"
    if left:
        shown = "; ".join(f"{pid} {cmd}" for pid, cmd in sorted(left.items()))
        ctx.findings.add(
            {"process.tree_killed": (False, f"still running after the timeout ({context}): {shown}")}, None
        )
        return
    escaped = len(attempt.result.escaped)
    note = f"timed out {context}" + (
        f"; {escaped} process(es) had left the group and were stopped" if escaped else ""
    )
    ctx.findings.add({"process.tree_killed": (True, note)}, None)


def _timeout_for(ctx: Context) -> float:
    """Long enough for the harness to start and ask the model (seen in an earlier run), then some."""
    if ctx.first_request_s is None:
        return min(ctx.timeout_s, TIMEOUT_RUN_DEFAULT_S)
    return min(ctx.timeout_s, max(TIMEOUT_RUN_MIN_S, ctx.first_request_s * 2 + 2))


Session = Callable[[Context], Awaitable[None]]
SESSIONS: Sequence[Session] = (_profile_session, _tools_session, _error_session, _timeout_session)
