"""The base of the adapter spec's plain classes (:mod:`tackroom.adapters.spec`, generated).

A class lists its fields as data, ``(attribute, key, how, default)``: the key its table spells
(``pass`` for ``pass_``); how a value is made (kept as it is, or a class of the spec made from a
table, a list or a map of them, or either); and its default when the table leaves it out (``...``:
none, the key is required). Values
are frozen, as the schema's models are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

Field = tuple[str, str, Any, Any]


class Spec:
    """Fields made from validated adapter data; equal when every field is."""

    __slots__ = ()
    _FIELDS: ClassVar[tuple[Field, ...]] = ()
    model_fields: ClassVar[Mapping[str, None]] = {}

    def __init__(self, data: Mapping[str, Any] | None = None, /, **values: Any) -> None:
        given = {**(data or {}), **values}
        for attribute, key, how, default in self._FIELDS:
            if key in given:
                value = _make(how, given[key])
            elif attribute in given:
                value = _make(how, given[attribute])
            elif default is ...:
                raise TypeError(f"{type(self).__name__} needs {key!r}")
            elif isinstance(default, tuple):
                value = default[1]()  # ("new", list | dict | a class of the spec | a maker)
            else:
                value = default
            object.__setattr__(self, attribute, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Any:
        """A copy with ``update``'s fields changed (as pydantic's ``model_copy``)."""
        copy = object.__new__(type(self))
        for attribute, *_ in self._FIELDS:
            object.__setattr__(copy, attribute, getattr(self, attribute))
        for attribute, value in (update or {}).items():
            object.__setattr__(copy, attribute, value)
        return copy

    def to_data(self) -> dict[str, Any]:
        """The table this spec holds, as its file spells it (as the schema dumps it: no None)."""
        return {key: _data(getattr(self, a)) for a, key, *_ in self._FIELDS if getattr(self, a) is not None}

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        """Each field's name and value, as a pydantic model iterates."""
        for attribute, *_ in self._FIELDS:
            yield attribute, getattr(self, attribute)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a, *_ in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # its lists and maps are not hashable either

    def __repr__(self) -> str:
        shown = ", ".join(f"{a}={getattr(self, a)!r}" for a, *_ in self._FIELDS)
        return f"{type(self).__name__}({shown})"


def _make(how: Any, value: Any) -> Any:
    if value is None:
        return None
    if how is None:
        return list(value) if type(value) is list else dict(value) if type(value) is dict else value
    kind, cls = how
    if kind == "model":
        return value if isinstance(value, cls) else cls(value)
    if kind == "or":
        return cls(value) if isinstance(value, Mapping) else _make(None, value)
    if kind == "list":
        return [item if isinstance(item, cls) else cls(item) for item in value]
    return {key: item if isinstance(item, cls) else cls(item) for key, item in value.items()}


def _data(value: Any) -> Any:
    if isinstance(value, Spec):
        return value.to_data()
    if hasattr(value, "model_dump"):  # a schema model put into a spec by hand (tests do)
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [_data(item) for item in value]
    if isinstance(value, dict):
        return {key: _data(item) for key, item in value.items()}
    return value
