"""The published JSON Schema matches the pydantic models, and the public API is what __all__ says."""

from __future__ import annotations

import json
from pathlib import Path

import tackroom
from tackroom.adapters.schema import json_schema
from tackroom.profile.engines import engines

SCHEMA = Path(__file__).resolve().parent.parent / "schema" / "adapter.schema.json"


def test_schema_file_is_fresh(update_golden: bool) -> None:
    current = json_schema(engines())
    if update_golden:
        SCHEMA.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == current, (
        "schema/adapter.schema.json is stale: "
        ".venv/bin/python scripts/adapter-schema > schema/adapter.schema.json"
    )


def test_schema_forbids_unknown_keys_everywhere() -> None:
    schema = json_schema(engines())
    objects = [schema, *schema["$defs"].values()]
    for node in objects:
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False, node.get("title")


def test_public_api() -> None:
    assert tackroom.__all__ == sorted(tackroom.__all__)
    assert set(tackroom.__all__) == {
        *("Adapter", "AdapterSet", "load_adapters", "Endpoint", "Plan", "plan_run", "__version__"),
        *("run", "arun", "Result", "MockServer", "Script", "Turn", "Profile", "load_profile"),
        *("Event", "SessionStarted", "AssistantText", "ToolCall", "ToolResult", "UsageReport"),
        *("ErrorEvent", "Finished", "Usage"),
        *("TackroomError", "CellError", "HostError", "ConfigError", "ProfileError", "UnsafePathError"),
        *("OptionError", "UnsupportedOptionError", "TemplateError", "UnknownAdapterError"),
        *("FamilyError", "InstallError", "HarnessNotFoundError", "HarnessVersionError"),
        *("MockError", "MockScriptError", "RunError", "TrustError", "StreamLineError", "RegistryError"),
        *("RunSpec", "RunSpecError", "LaunchError", "SandboxError"),
        "UntrustedProjectError",
        *("DetectionError", "ConformanceError", "detect", "Detection"),
        *("ProbeError", "RowError", "StateError", "Gateway", "GatewayError"),
        *("UserText", "Record", "TraceError", "read_trace", "usage", "list_sessions", "scan_traces"),
        *("SessionInfo", "Trace", "TraceEvent", "SessionMeta", "TraceIssue"),
        *("TaskError", "MatrixError", "EvaluationExistsError", "RayUnavailableError", "ResidentError"),
        *("Task", "load_task", "Cell", "CellResult", "Matrix", "load_matrix", "evaluate"),
    }
    for name in tackroom.__all__:
        value = getattr(tackroom, name)
        assert value is not None
        if name != "__version__":
            doc = (value.__doc__ or "").strip()
            # A dataclass without a docstring gets its signature as one: that is not documentation.
            assert doc and not doc.startswith(f"{name}("), f"tackroom.{name} has no docstring"
    # Every error class of the one tree is public.
    import tackroom.errors as errors

    tree = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, Exception)}
    assert tree <= set(tackroom.__all__)


def test_public_names_are_what_they_say_on_every_access() -> None:
    """``tackroom.run`` and ``tackroom.detect`` share their names with submodules: loading those
    (in any order, before or after the first access) must not put a module where the function was."""
    import subprocess
    import sys

    script = """
import importlib, inspect, tackroom
first = {name: getattr(tackroom, name) for name in tackroom.__all__}
for module in ("tackroom.run", "tackroom.run.runner", "tackroom.detect", "tackroom.trace.api"):
    importlib.import_module(module)
for name in tackroom.__all__:
    again = getattr(tackroom, name)
    assert again is first[name] and not inspect.ismodule(again), name
assert callable(tackroom.run) and callable(tackroom.detect) and callable(tackroom.usage)
assert set(tackroom.__all__) <= set(dir(tackroom))
from tackroom.run import runner
assert runner.run is tackroom.run
"""
    early = "import tackroom.run.runner, tackroom.detect\n" + script  # submodules first, then the names
    for code in (script, early):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


def test_vocabularies_have_one_source() -> None:
    from typing import get_args

    from tackroom.adapters.schema import Moment, Tools
    from tackroom.mock import NEUTRAL_TOOLS as MOCK_TOOLS
    from tackroom.vocabulary import ALL_MOMENTS, NEUTRAL_TOOLS

    assert set(Tools.model_fields) == {
        *NEUTRAL_TOOLS,
        "mcp",
        "mcp_offered",
        "mcp_call",
        "mcp_load",
        "text_call",
    }
    assert set(MOCK_TOOLS) == set(NEUTRAL_TOOLS)
    assert get_args(Moment) == ALL_MOMENTS


def test_the_plain_spec_classes_are_fresh() -> None:
    from tackroom.adapters.specgen import TARGET, formatted

    assert TARGET.read_text(encoding="utf-8") == formatted(), (
        "src/tackroom/adapters/spec.py is stale: .venv/bin/python scripts/gen-spec"
    )


def _view(value: object) -> object:
    """A spec value as plain data, from a pydantic model or a plain spec class alike (class names kept)."""
    from pydantic import BaseModel

    from tackroom.adapters._spec import Spec

    if isinstance(value, BaseModel | Spec):
        return (type(value).__name__, {name: _view(item) for name, item in value})
    if isinstance(value, list):
        return [_view(item) for item in value]
    if isinstance(value, dict):
        return {key: _view(item) for key, item in value.items()}
    return value


def test_every_builtin_reads_the_same_through_the_plain_classes_as_through_the_schema() -> None:
    """The plain classes (what runs) hold what the schema's models (what validates) hold, field by
    field and class by class, for every built-in adapter at every version it covers."""
    from tackroom.adapters import schema, spec
    from tackroom.adapters.resolve import resolve_builtins

    checked = 0
    for adapter in resolve_builtins().values():
        for version in (None, *adapter.verified_versions):
            effective = adapter.at(version).effective
            assert _view(spec.AdapterSpec(effective)) == _view(schema.AdapterSpec.model_validate(effective))
            assert spec.AdapterSpec(effective).to_data() == effective  # and back, as the schema dumps it
            checked += 1
    assert checked > 30


def test_a_plain_spec_is_frozen_and_copies_like_a_model() -> None:
    from tackroom.adapters.spec import Capability, Env

    rules = Capability({"path": "~/.x/AGENTS.md", "render": "concat"})
    assert (rules.path, rules.render, rules.also, rules.keys) == ("~/.x/AGENTS.md", "concat", [], {})
    moved = rules.model_copy(update={"path": "~/.y/RULES.md"})
    assert (moved.path, rules.path, moved.render) == ("~/.y/RULES.md", "~/.x/AGENTS.md", "concat")
    try:
        rules.path = "elsewhere"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("a plain spec must be frozen")
    assert Env({"pass": ["OPENAI_API_KEY"]}).pass_ == ["OPENAI_API_KEY"]  # the table's spelling
