"""Capability rows: what one probe of one harness, at one version, observed.

A row (after Unrounded's adapter SDK)::

    {"adapter": "claude-code", "adapter_hash": "<sha256>", "harness_version": "2.1.197",
     "probed_at": "2026-11-30T12:00:00Z", "outcome": "ok",
     "supports": {"rules.read": true, "hooks.session-end.fire": "n/o"},
     "notes": {"hooks.session-end.fire": "the hook ran no command before the harness exited"}}

``supports`` maps a capability to ``true`` (tested, it can), ``false`` (tested,
it cannot) or the exact string ``"n/o"`` (tested, and the harness emitted
nothing that answers the question either way). An absent capability was not
tested. ``outcome`` is the runner's verdict on the probe run (``ok``,
``timeout``, ``failed``, ``not_installed``), never the probe's own; ``notes``
say why, per capability, and under the key ``outcome`` why the run ended as
it did.

The parser is strict, because a row is read from outside (an external
probe's stdout, a state database anyone can write, a JSON file): any other
key, a missing key, a capability that is not in :data:`CAPABILITIES`, a value
other than ``true``/``false``/``"n/o"`` (``1``, ``"true"``, ``"N/O"``), a
duplicate key or an oversized note rejects the whole row with
:class:`~tackroom.errors.RowError`. Never test a value for truthiness:
``"n/o"`` is a truthy string; use :func:`is_supported`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from tackroom.errors import RowError
from tackroom.values import iso, parse_time
from tackroom.vocabulary import CAPABILITIES as CAPABILITIES

Support = bool | Literal["n/o"]
Outcome = Literal["ok", "timeout", "failed", "not_installed"]

NOT_OBSERVED: Literal["n/o"] = "n/o"
OUTCOMES: tuple[Outcome, ...] = ("ok", "timeout", "failed", "not_installed")
OUTCOME_NOTE = "outcome"
"""The ``notes`` key of the runner's note on the run as a whole (why it failed or timed out)."""

ROW_KEYS = frozenset(
    {"adapter", "adapter_hash", "harness_version", "probed_at", "outcome", "supports", "notes"}
)
PROBE_KEYS = frozenset({"supports", "notes"})
MAX_NOTE = 2000
"""The longest note a row keeps (characters): a note explains, it does not carry a log."""
MAX_ROW_BYTES = 256 * 1024
"""The largest row text parsed at all: a valid row is a few kilobytes."""

_ADAPTER = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
_HASH = re.compile(r"^[0-9a-f]{64}$")
VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
"""What a row's ``harness_version`` may look like (it is outside input: what ``version_argv`` printed)."""
_NOTE_KEYS = frozenset({*CAPABILITIES, OUTCOME_NOTE})


def is_supported(value: Support | None) -> bool:
    """True only for ``True``: ``"n/o"`` and absent (untested) are not support."""
    return value is True


@dataclass(frozen=True)
class Row:
    """One probe of one harness at one version: what it observed, and how the run went."""

    adapter: str
    adapter_hash: str
    harness_version: str | None
    probed_at: datetime
    outcome: Outcome
    supports: Mapping[str, Support] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A row made in code passes the same checks as one read from outside.
        if not isinstance(self.probed_at, datetime) or self.probed_at.tzinfo is None:
            raise RowError(f"probed_at must be a timezone-aware datetime, got {self.probed_at!r}")
        check_row(self.to_json())

    def to_json(self) -> dict[str, Any]:
        """The row as JSON data, capabilities in :data:`CAPABILITIES` order."""
        order = {name: n for n, name in enumerate((*CAPABILITIES, OUTCOME_NOTE))}
        return {
            "adapter": self.adapter,
            "adapter_hash": self.adapter_hash,
            "harness_version": self.harness_version,
            "probed_at": iso(self.probed_at),
            "outcome": self.outcome,
            "supports": dict(sorted(self.supports.items(), key=lambda kv: order.get(kv[0], len(order)))),
            "notes": dict(sorted(self.notes.items(), key=lambda kv: order.get(kv[0], len(order)))),
        }

    def dumps(self) -> str:
        """The row as one line of ASCII JSON."""
        return json.dumps(self.to_json(), ensure_ascii=True, separators=(",", ":"))

    def with_outcome(self, outcome: Outcome, note: str | None = None) -> Row:
        """The same observations under the runner's verdict (and its note on the run)."""
        notes = dict(self.notes)
        if note:
            notes[OUTCOME_NOTE] = clip(note)
        return replace(self, outcome=outcome, notes=notes)


def clip(note: str) -> str:
    """A note a row can keep: lone surrogates replaced, cut to :data:`MAX_NOTE` characters, saying so."""
    if not _encodable(note):  # text from a harness may hold one
        note = note.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return note if len(note) <= MAX_NOTE else note[: MAX_NOTE - 14] + " [... cut off]"


def now() -> datetime:
    """The time a row is stamped with (UTC, whole microseconds)."""
    return datetime.now(UTC)


def parse_row(text: str | bytes) -> Row:
    """A row from its JSON text, strictly (see the module docstring); :class:`RowError` otherwise."""
    return row_from_json(loads_strict(text, "row"))


def row_from_json(data: Any) -> Row:
    """A row from parsed JSON data, strictly."""
    check_row(data)
    return Row(
        adapter=data["adapter"],
        adapter_hash=data["adapter_hash"],
        harness_version=data["harness_version"],
        probed_at=parse_time(data["probed_at"]),
        outcome=data["outcome"],
        supports=dict(data["supports"]),
        notes=dict(data["notes"]),
    )


def parse_probe_output(text: str | bytes) -> tuple[dict[str, Support], dict[str, str]]:
    """An external probe's stdout: one JSON object with only ``supports`` (and ``notes``).

    Anything else (another key, ``outcome`` included, a second object, a bad
    value) is a :class:`RowError`: a probe reports observations, never its own verdict.
    """
    data = loads_strict(text, "probe output")
    if not isinstance(data, dict):
        raise RowError(f"probe output must be one JSON object, got {type(data).__name__}")
    extra = sorted(set(data) - PROBE_KEYS)
    if extra:
        raise RowError(f"probe output may hold only supports and notes, not {', '.join(extra)}")
    if "supports" not in data:
        raise RowError("probe output has no supports")
    supports = _supports(data["supports"])
    notes = _notes(data.get("notes", {}), allow_outcome=False)
    return supports, notes


def loads_strict(text: str | bytes, what: str) -> Any:
    """JSON with no duplicate keys, no NaN or Infinity, no trailing data, within :data:`MAX_ROW_BYTES`."""
    if len(text) > MAX_ROW_BYTES:
        raise RowError(f"{what} is {len(text)} bytes, more than the {MAX_ROW_BYTES} a row may take")
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except RowError:
        raise
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise RowError(f"{what} is not one JSON value: {exc}") from exc


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise RowError(f"duplicate key {key!r}")
        data[key] = value
    return data


def _no_constant(name: str) -> Any:
    raise RowError(f"{name} is not a JSON number")


def check_row(data: Any) -> None:
    """Raise :class:`RowError` unless ``data`` is exactly a row's JSON shape."""
    if not isinstance(data, dict):
        raise RowError(f"a row must be a JSON object, got {type(data).__name__}")
    missing, extra = sorted(ROW_KEYS - set(data)), sorted(set(data) - ROW_KEYS)
    if missing or extra:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unknown key {', '.join(map(repr, extra))}"] if extra else []
        )
        raise RowError(f"not a capability row: {'; '.join(parts)}")
    _check_text(data["adapter"], _ADAPTER, "adapter")
    _check_text(data["adapter_hash"], _HASH, "adapter_hash")
    if data["harness_version"] is not None:
        _check_text(data["harness_version"], VERSION, "harness_version")
    try:
        parse_time(data["probed_at"])
    except ValueError as exc:
        raise RowError(f"probed_at: {exc}") from exc
    if not isinstance(data["outcome"], str) or data["outcome"] not in OUTCOMES:
        raise RowError(f"outcome must be one of {', '.join(OUTCOMES)}, got {data['outcome']!r}")
    supports = _supports(data["supports"])
    _notes(data["notes"], allow_outcome=True)
    if data["outcome"] == "not_installed" and supports:
        raise RowError("a not_installed row observed nothing: its supports must be empty")


def _check_text(value: Any, pattern: re.Pattern[str], key: str) -> None:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise RowError(f"{key}: {value!r} does not match {pattern.pattern}")


def _supports(value: Any) -> dict[str, Support]:
    if not isinstance(value, dict):
        raise RowError(f"supports must be an object, got {type(value).__name__}")
    for name, support in value.items():
        if name not in CAPABILITIES:
            raise RowError(f"supports: unknown capability {name!r}")
        # bool, not int: 1 and 0 are not observations; "n/o" is the one string.
        if not (type(support) is bool or (type(support) is str and support == NOT_OBSERVED)):
            raise RowError(f'supports.{name}: must be true, false or "n/o", got {support!r}')
    return dict(value)


def _notes(value: Any, *, allow_outcome: bool) -> dict[str, str]:
    if not isinstance(value, dict):
        raise RowError(f"notes must be an object, got {type(value).__name__}")
    keys = _NOTE_KEYS if allow_outcome else frozenset(CAPABILITIES)
    for name, note in value.items():
        if name not in keys:
            raise RowError(f"notes: unknown capability {name!r}")
        if not isinstance(note, str) or len(note) > MAX_NOTE or not _encodable(note):
            raise RowError(f"notes.{name}: must be UTF-8 text of at most {MAX_NOTE} characters")
    return dict(value)


def _encodable(text: str) -> bool:
    # A lone surrogate ("\\ud800" in JSON) decodes to a str no UTF-8 encoder or database takes.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
