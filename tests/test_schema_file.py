"""The published JSON Schema matches the pydantic models, and the public API is what __all__ says."""

from __future__ import annotations

import json
from pathlib import Path

import tackroom
from tackroom.adapters.schema import json_schema

SCHEMA = Path(__file__).resolve().parent.parent / "schema" / "adapter.schema.json"


def test_schema_file_is_fresh(update_golden: bool) -> None:
    current = json_schema()
    if update_golden:
        SCHEMA.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == current, (
        "schema/adapter.schema.json is stale: python -m tackroom.adapters.schema > schema/adapter.schema.json"
    )


def test_schema_forbids_unknown_keys_everywhere() -> None:
    schema = json_schema()
    objects = [schema, *schema["$defs"].values()]
    for node in objects:
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False, node.get("title")


def test_public_api() -> None:
    assert tackroom.__all__ == [
        "Adapter",
        "AdapterSet",
        "ConfigError",
        "Endpoint",
        "OptionError",
        "Plan",
        "TackroomError",
        "UnknownAdapterError",
        "UnsupportedOptionError",
        "__version__",
        "load_adapters",
    ]
    for name in tackroom.__all__:
        assert getattr(tackroom, name) is not None


def test_vocabularies_have_one_source() -> None:
    from typing import get_args

    from tackroom.adapters.schema import Moment, Tools
    from tackroom.mock import NEUTRAL_TOOLS as MOCK_TOOLS
    from tackroom.vocabulary import MOMENTS, NEUTRAL_TOOLS

    assert set(Tools.model_fields) == {*NEUTRAL_TOOLS, "mcp", "mcp_call"}
    assert set(MOCK_TOOLS) == set(NEUTRAL_TOOLS)
    assert get_args(Moment) == MOMENTS
