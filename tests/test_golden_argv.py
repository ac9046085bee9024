"""Golden argv: every built-in adapter rendered for a matrix of options, against recorded files.

Rewrite with ``pytest --update-golden`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.plan import Endpoint, plan_run
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.adapters.schema import OPTION_KINDS

GOLDEN = Path(__file__).parent / "golden" / "argv"
SAMPLES: dict[str, Any] = {
    "model": "model-x",
    "auto_accept": True,
    "max_turns": 3,
    "allowed_tools": ["ToolA", "ToolB"],
    "disallowed_tools": ["ToolC"],
    "system_prompt_file": "/etc/tackroom/system.md",
    "append_system_prompt": "be brief",
    "reasoning_effort": "high",
    "sandbox": "workspace-write",
    "output_format": "json",
    "resume": "session-123",
    "quiet": True,
    "command": "review",
}
ENVIRON = {"PATH": "/usr/bin:/bin", "HOME": "/home/user", "LANG": "C.UTF-8"}


def cases(adapter: Adapter) -> dict[str, dict[str, Any]]:
    supported = [name for name in OPTION_KINDS if getattr(adapter.spec.options, name) is not None]
    matrix: dict[str, dict[str, Any]] = {"bare": {}}
    matrix |= {f"only-{name}": {name: SAMPLES[name]} for name in supported}
    matrix["all"] = {name: SAMPLES[name] for name in supported}
    if "auto_accept" in supported:
        matrix["auto_accept-false"] = {"auto_accept": False}
    return matrix


def render(adapter: Adapter, options: dict[str, Any], endpoint: Endpoint | None) -> dict[str, Any]:
    plan = plan_run(
        adapter,
        "fix the bug",
        options=options,
        workdir=Path("/work/project"),
        home=Path("/run/1/home"),
        endpoint=endpoint,
        environ=ENVIRON,
    )
    data = plan.to_json()
    env = {k: v for k, v in data["env"].items() if data["env_sources"][k] != "allowlist"}
    return {"options": options, "argv": data["argv"], "env": env, "files": data["files"]}


def rendered(adapter: Adapter) -> dict[str, Any]:
    out = {name: render(adapter, options, None) for name, options in cases(adapter).items()}
    if adapter.spec.model_endpoint is not None:
        endpoint = Endpoint("http://127.0.0.1:8765", api_key="sk-golden-key")
        out["endpoint"] = render(adapter, {}, endpoint)
        if adapter.spec.options.model is not None:
            out["endpoint-model"] = render(adapter, {"model": "model-y"}, endpoint)
    return out


@pytest.mark.parametrize("name", sorted(resolve_builtins()))
def test_golden_argv(name: str, update_golden: bool) -> None:
    adapter = resolve_builtins()[name]
    actual = rendered(adapter)
    path = GOLDEN / f"{name}.json"
    if update_golden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert path.exists(), f"no golden file for {name}: run pytest --update-golden and review it"
    assert actual == json.loads(path.read_text(encoding="utf-8"))


def test_every_golden_file_has_an_adapter() -> None:
    assert {p.stem for p in GOLDEN.glob("*.json")} == set(resolve_builtins())
