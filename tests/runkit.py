"""Helpers for tests that drive the runner with the scripted fake harness (a real subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from tackroom.adapters.resolve import Adapter, load_adapters

FAKE = Path(__file__).parent / "fakes" / "fake_harness.py"
RECORDED = Path(__file__).parent / "golden" / "claude-code" / "claude-code-text" / "stream.jsonl"
RECORDED_TEXT = "TACKROOM-TEXT-claude-code"
SLOTS = (
    '"{{opt.auto_accept}}", "{{opt.model}}", "{{opt.max_turns}}", "{{opt.system_prompt_file}}", '
    '"{{opt.append_system_prompt}}", "{{opt.allowed_tools}}", "{{opt.disallowed_tools}}", '
    '"{{opt.reasoning_effort}}", "{{opt.resume}}", "{{trust}}"'
)


def fake_adapter(config_dir: Path, *args: str, name: str = "fake") -> Adapter:
    """An operator adapter extending claude-code whose executable is the fake, run with ``args``."""
    argv = ", ".join(json.dumps(a) for a in args)
    table = (
        f'[adapter.{name}]\nextends = "claude-code"\nexecutable = "{FAKE}"\n'
        f'one_shot = [{argv}{", " if argv else ""}"--prompt", "{{{{prompt}}}}", {SLOTS}]\n'
    )
    (config_dir / "adapters.d" / f"{name}.toml").write_text(table, encoding="utf-8")
    return load_adapters(config=config_dir)[name]


def script_adapter(config_dir: Path, name: str, script: Path, body: str) -> Adapter:
    """An operator adapter extending claude-code whose executable is a shell script of ``body``."""
    script.write_text(f"#!/bin/sh\n{body}", encoding="utf-8")
    script.chmod(0o755)
    slots = SLOTS.replace('"{{trust}}"', '"{{trust}}", "{{prompt}}"')
    (config_dir / "adapters.d" / f"{name}.toml").write_text(
        f'[adapter.{name}]\nextends = "claude-code"\nexecutable = "{script}"\none_shot = [{slots}]\n',
        encoding="utf-8",
    )
    return load_adapters(config=config_dir)[name]


def jsonl(data: object) -> str:
    """One JSON line that can sit in an adapter's argv: ``{{`` and ``}}`` would read as a template."""
    text = json.dumps(data)
    while "}}" in text or "{{" in text:
        text = text.replace("}}", "} }").replace("{{", "{ {")
    return text
