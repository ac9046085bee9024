"""Build a value that satisfies a JSON schema (enough of one for the clients we serve).

Used for the Gemini router's structured-output call and to fill required tool
arguments a script did not give. Gemini's OpenAPI-style schemas spell types in
upper case (``STRING``); both spellings are accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PLACEHOLDER = "mock"
"""The string put in any string the script did not supply."""

_MAX_DEPTH = 8


def example(schema: Mapping[str, Any], depth: int = 0) -> Any:
    """A small value valid for ``schema``: enum/const first, then by type, strings as :data:`PLACEHOLDER`."""
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and isinstance(options[0], dict):
            return example(options[0], depth + 1)
    return _by_type(_type(schema), schema, depth)


def _type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: take the first non-null type
        kind = next((k for k in kind if isinstance(k, str) and k.lower() != "null"), "string")
    if isinstance(kind, str):
        return kind.lower()
    return "object" if "properties" in schema else "string"


def _by_type(kind: str, schema: Mapping[str, Any], depth: int) -> Any:
    if kind == "object":
        return _object(schema, depth)
    if kind == "array":
        items = schema.get("items")
        wanted = schema.get("minItems", 0)
        if isinstance(items, dict) and isinstance(wanted, int) and wanted > 0 and depth < _MAX_DEPTH:
            return [example(items, depth + 1) for _ in range(wanted)]
        return []
    if kind in ("integer", "number"):
        minimum = schema.get("minimum")
        return minimum if isinstance(minimum, int | float) and not isinstance(minimum, bool) else 1
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return PLACEHOLDER


def _object(schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict) or depth >= _MAX_DEPTH:
        return {}
    return {k: example(v, depth + 1) for k, v in properties.items() if isinstance(v, dict)}


def fill_required(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments plus an example for each required property still missing.

    Some harnesses reject a call without e.g. an intent (``i``) or ``description``
    argument (facts: OMP requires ``i`` on every tool, Copilot and Qwen a shell
    ``description``).
    """
    filled = dict(arguments)
    required = schema.get("required")
    properties = schema.get("properties")
    if not isinstance(required, list):
        return filled
    for name in required:
        if isinstance(name, str) and name not in filled:
            spec = properties.get(name) if isinstance(properties, dict) else None
            filled[name] = example(spec, 1) if isinstance(spec, dict) else PLACEHOLDER
    return filled
