"""Typed values for figures that can be unknown: never a blank, never an invented 0.

A figure tackroom shows (a harness version, the age of a proof, a count) is
one of:

* :class:`Known` ``(value)``: observed, and current;
* :class:`Stale` ``(value, as_of)``: observed at ``as_of``, and something has
  changed since (a newer harness is installed, the adapter was edited);
* :class:`NotSupported`: this thing cannot report it at all;
* :class:`Unknown`: it could report it, but the figure was not observed
  (the harness is not installed, its version could not be read).

The four are never interchangeable, and each has its own mark for people
(:func:`show`) and its own JSON shape (:func:`to_json`), after Unrounded's
``{"kind": "known", "value": ...}``. Test a value with ``isinstance``, never
with truthiness: ``Known(0)`` is a real zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

T = TypeVar("T")

NOT_SUPPORTED_MARK = "n/s"
UNKNOWN_MARK = "unknown"


@dataclass(frozen=True)
class Known(Generic[T]):
    """A value that was observed and is current."""

    value: T


@dataclass(frozen=True)
class Stale(Generic[T]):
    """A value observed at ``as_of`` that something has overtaken since; ``why`` says what."""

    value: T
    as_of: datetime
    why: str = ""


@dataclass(frozen=True)
class NotSupported:
    """The figure cannot be reported by this thing at all."""

    why: str = ""


@dataclass(frozen=True)
class Unknown:
    """The figure exists but was not observed; ``why`` says what stood in the way."""

    why: str = ""


Value = Known[T] | Stale[T] | NotSupported | Unknown


def known(value: T) -> Known[T]:
    """An observed, current value."""
    return Known(value)


def stale(value: T, as_of: datetime, why: str = "") -> Stale[T]:
    """A value observed at ``as_of`` (timezone-aware) and overtaken since."""
    if as_of.tzinfo is None:
        raise ValueError("as_of must be timezone-aware")
    return Stale(value, as_of, why)


def not_supported(why: str = "") -> NotSupported:
    """A figure this thing cannot report."""
    return NotSupported(why)


def unknown(why: str = "") -> Unknown:
    """A figure that was not observed."""
    return Unknown(why)


def show(value: Value[Any], fmt: Callable[[Any], str] = str) -> str:
    """The value for people: ``fmt(value)``, ``fmt(value) (stale, as of DATE)``, ``n/s`` or ``unknown``.

    Never an empty string, and never a number that was not observed.
    """
    if isinstance(value, Known):
        return fmt(value.value) or repr(value.value)
    if isinstance(value, Stale):
        return f"{fmt(value.value) or repr(value.value)} (stale, as of {value.as_of:%Y-%m-%d})"
    if isinstance(value, NotSupported):
        return NOT_SUPPORTED_MARK
    return UNKNOWN_MARK


def to_json(value: Value[Any]) -> dict[str, Any]:
    """The value as JSON: ``{"kind": "known" | "stale" | "not_supported" | "unknown", ...}``."""
    if isinstance(value, Known):
        return {"kind": "known", "value": value.value}
    if isinstance(value, Stale):
        data: dict[str, Any] = {"kind": "stale", "value": value.value, "as_of": iso(value.as_of)}
        return data | ({"why": value.why} if value.why else {})
    kind = "not_supported" if isinstance(value, NotSupported) else "unknown"
    return {"kind": kind} | ({"why": value.why} if value.why else {})


def from_json(data: Any) -> Value[Any]:
    """The inverse of :func:`to_json`, strictly: any other shape is a :class:`ValueError`."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ValueError(f"not a typed value: {data!r}")
    kind, why = data["kind"], data.get("why", "")
    allowed = {
        "known": {"kind", "value"},
        "stale": {"kind", "value", "as_of", "why"},
        "not_supported": {"kind", "why"},
        "unknown": {"kind", "why"},
    }.get(kind)
    if allowed is None or not set(data) <= allowed or not isinstance(why, str):
        raise ValueError(f"not a typed value: {data!r}")
    if kind in ("known", "stale") and "value" not in data:
        raise ValueError(f"a {kind} value needs its value: {data!r}")
    if kind == "known":
        return Known(data["value"])
    if kind == "stale":
        return Stale(data["value"], parse_time(data.get("as_of")), why)
    return NotSupported(why) if kind == "not_supported" else Unknown(why)


def iso(moment: datetime) -> str:
    """A timezone-aware time as ISO 8601 UTC, always with microseconds and a ``Z``.

    One fixed width (``2026-11-30T12:00:00.000000Z``), so texts sort as the times do.
    """
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: Any) -> datetime:
    """An ISO 8601 time with its timezone (``Z`` or ``+HH:MM``), as UTC; anything else is a ValueError."""
    if not isinstance(text, str) or not 20 <= len(text) <= 40 or not text[:4].isdigit():
        raise ValueError(f"not an ISO 8601 time with a timezone: {text!r}")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError as exc:
        raise ValueError(f"not an ISO 8601 time with a timezone: {text!r}") from exc
    if moment.tzinfo is None or "T" not in text:
        raise ValueError(f"not an ISO 8601 time with a timezone: {text!r}")
    return moment.astimezone(UTC)


def age(since: datetime, now: datetime | None = None) -> str:
    """How long ago ``since`` was, for people: ``42s``, ``5m``, ``3h``, ``12d`` (``0s`` for the future)."""
    return duration(int(((now or datetime.now(UTC)) - since).total_seconds()))


def duration(seconds: float) -> str:
    """A span for people, in its largest whole unit: ``42s``, ``5m``, ``3h``, ``12d``."""
    whole = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"
