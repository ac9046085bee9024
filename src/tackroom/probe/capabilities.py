"""Capability probes: render a profile carrying unique markers, run the real harness against the
mock, and prove from what the model was sent (and what happened on disk) that it was used.

Each probe answers one capability of one harness with a row: ``proven``, ``not supported``
(the adapter has no such capability: an absent key), or ``failed`` with what was missing.
A probe never infers: a capability counts as proven only when its marker was observed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.profile.model import Agent, Command, Hook, McpServer, Profile, Rule, Skill

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter
    from tackroom.mock import MockServer, Script
    from tackroom.run.result import Result

CAPABILITIES = ("rules", "skills", "mcp", "commands", "subagents", "hooks")
Status = Literal["proven", "not supported", "failed"]
MCP_SERVER = Path(__file__).with_name("mcp_server.py")
MARK = "TRPROBE"


@dataclass(frozen=True)
class Row:
    """One capability of one harness, as a probe against the real binary found it."""

    adapter: str
    capability: str
    status: Status
    version: str | None
    checks: Mapping[str, bool] = field(default_factory=dict)
    """Each observation the verdict rests on (e.g. ``offered``, ``called``)."""
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "capability": self.capability,
            "status": self.status,
            "version": self.version,
            "checks": dict(self.checks),
            "detail": self.detail,
        }


@dataclass
class Probe:
    """Where and how probes run: a scratch dir, the caller's environment, a timeout per run."""

    scratch: Path
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    timeout_s: float = 120.0

    def run(
        self, adapter: Adapter, profile: Profile, script: Script, prompt: str = "probe", **extra: Any
    ) -> tuple[Result, MockServer, Path]:
        from tackroom.mock import MockServer
        from tackroom.run.runner import run, vocabulary

        workdir = Path(tempfile.mkdtemp(prefix="work-", dir=self.scratch))
        with MockServer(script, tools=vocabulary(adapter)) as mock:
            result = run(
                adapter,
                prompt,
                workdir=workdir,
                mock=mock,
                profile=profile,
                timeout_s=self.timeout_s,
                runs_dir=self.scratch / "runs",
                environ={**self.environ, **extra.pop("env", {})},
                **extra,
            )
        return result, mock, workdir


def probe(adapter: Adapter, capability: str, probe: Probe) -> Row:
    """Prove one capability of one harness against its real binary."""
    if getattr(adapter.spec.capabilities, capability) is None:
        return Row(
            adapter.name, capability, "not supported", adapter.verified_with, detail="absent from the adapter"
        )
    checks, detail, version = _PROBES[capability](adapter, probe)
    status: Status = "proven" if checks and all(checks.values()) else "failed"
    return Row(adapter.name, capability, status, version, checks, detail)


def _auto(adapter: Adapter) -> dict[str, Any]:
    return {"auto_accept": True} if adapter.spec.options.auto_accept is not None else {}


def _text(reply: str) -> Script:
    from tackroom.mock import Script

    return Script.text(reply)


Found = tuple[dict[str, bool], str, str | None]


def _rules(adapter: Adapter, p: Probe) -> Found:
    marker = f"{MARK}_RULES_{adapter.name}"
    result, mock, _ = p.run(adapter, Profile(rules=(Rule("probe", f"Rule text {marker}\n"),)), _text("ok"))
    return {"reached the model": mock.saw(marker)}, _describe(result), result.harness_version


def _skills(adapter: Adapter, p: Probe) -> Found:
    marker = f"{MARK}_SKILL_{adapter.name}"
    skill = Skill("tr-probe-skill", f"{marker} explains the probe.", "Say PROBE_SKILL_BODY.\n")
    result, mock, _ = p.run(adapter, Profile(skills=(skill,)), _text("ok"))
    return {"listed to the model": mock.saw(marker)}, _describe(result), result.harness_version


def _subagents(adapter: Adapter, p: Probe) -> Found:
    marker = f"{MARK}_AGENT_{adapter.name}"
    agent = Agent("tr-probe-agent", f"{marker} reviews changes.", "You review changes.\n")
    result, mock, _ = p.run(adapter, Profile(agents=(agent,)), _text("ok"))
    return {"listed to the model": mock.saw(marker)}, _describe(result), result.harness_version


def _commands(adapter: Adapter, p: Probe) -> Found:
    marker = f"{MARK}_COMMAND_{adapter.name}"
    command = Command("tr-probe-cmd", "Probe command.", f"{marker} with $ARGUMENTS\n")
    capability = adapter.spec.capabilities.commands
    invoke = (capability.invoke if capability and capability.invoke else "/{name} {args}").format(
        name=command.name, args="probe-args"
    )
    # A harness that runs commands by flag gets the command option; the prompt is then its arguments.
    options = {"command": command.name} if "command" in adapter.effective.get("options", {}) else {}
    result, mock, _ = p.run(
        adapter, Profile(commands=(command,)), _text("ok"), prompt=invoke, options=options
    )
    return {"expanded": mock.saw(f"{marker} with probe-args")}, _describe(result), result.harness_version


def _mcp(adapter: Adapter, p: Probe) -> Found:
    from tackroom.mock import Script, Turn

    log = p.scratch / f"mcp-{adapter.name}.jsonl"
    server = McpServer(
        "trprobe", command=sys.executable, args=(str(MCP_SERVER),), env=(("TR_MCP_LOG", str(log)),)
    )
    tool = (adapter.spec.tools.mcp or "mcp__{server}__{tool}").format(server="trprobe", tool="tr_echo")
    script = Script([Turn.call("mcp:trprobe/tr_echo", {"text": "probe-ping"}), Turn.reply("done")])
    result, mock, _ = p.run(adapter, Profile(mcp=(server,)), script, options=_auto(adapter))
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    checks = {
        "offered to the model": tool in mock.offered_tools() or mock.saw("TACKROOM_MCP_MARKER"),
        "called": any(c.get("method") == "tools/call" for c in calls),
        "answer reached the model": mock.saw("TR_ECHO:probe-ping"),
    }
    return checks, _describe(result), result.harness_version


def _hooks(adapter: Adapter, p: Probe) -> Found:
    from tackroom.mock import Script, Turn

    capability = adapter.spec.capabilities.hooks
    assert capability is not None
    fired = p.scratch / f"hook-{adapter.name}.txt"
    inject = f"{MARK}_INJECT_{adapter.name}"
    hooks = [Hook("tr-fire", "session-start", "command", command=f"echo fired >> {fired}")]
    hooks += [Hook("tr-inject", "prompt-submit", "inject", text=inject)]
    hooks += [Hook("tr-refuse", "before-tool", "refuse", text=f"{MARK}_REFUSED", matcher=("shell",))]
    script = Script([Turn.call("shell", {"command": "echo no > refused.txt"}), Turn.reply("done")])
    result, mock, workdir = p.run(adapter, Profile(hooks=tuple(hooks)), script, options=_auto(adapter))
    dropped = " ".join(result.dropped)
    checks: dict[str, bool] = {}
    if "'tr-fire'" not in dropped:
        checks["command hook fired"] = fired.exists()
    if "'tr-inject'" not in dropped:
        checks["inject reached the model"] = mock.saw(inject)
    if "'tr-refuse'" not in dropped:
        checks["refuse blocked the tool"] = not (workdir / "refused.txt").exists() and mock.saw(
            f"{MARK}_REFUSED"
        )
    detail = _describe(result) + (f"; {dropped}" if dropped else "")
    return checks, detail, result.harness_version


def _describe(result: Result) -> str:
    state = "ok" if result.ok else f"run failed: {result.error}"
    return f"{state} (exit {result.exit_code}, {result.duration_s:.1f}s)"


_PROBES: dict[str, Callable[[Adapter, Probe], Found]] = {
    "rules": _rules,
    "skills": _skills,
    "mcp": _mcp,
    "commands": _commands,
    "subagents": _subagents,
    "hooks": _hooks,
}
