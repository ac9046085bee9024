"""Helpers for probe tests: adapters whose harness is the fake agent (a real subprocess, the real mock)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runkit import SLOTS
from tackroom.adapters.resolve import Adapter, load_adapters

AGENT = Path(__file__).parent / "fakes" / "fake_agent.py"

#: What the fake agent can show: everything but MCP and hooks (it runs no tools).
AGENT_CAPABILITIES = (
    "rules.read",
    "skills.visible",
    "agents.visible",
    "commands.expand",
    "usage.exact",
    "endpoint.model",
    "error.detected",
    "transcripts.written",
)


def agent_adapter(config_dir: Path, *flags: str, name: str = "fake", extra: str = "") -> Adapter:
    """An operator adapter extending claude-code whose executable is the fake agent, run with ``flags``."""
    argv = ", ".join(json.dumps(a) for a in ["-p", "{{prompt}}", *flags])
    table = (
        f'[adapter.{name}]\nextends = "claude-code"\nexecutable = {json.dumps(str(AGENT))}\n'
        f"one_shot = [{argv}, {SLOTS}]\n{extra}"
    )
    (config_dir / "adapters.d" / f"{name}.toml").write_text(table, encoding="utf-8")
    return load_adapters(config=config_dir)[name]


def script(path: Path, body: str) -> Path:
    """An executable Python script at ``path`` (an external probe)."""
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return path
