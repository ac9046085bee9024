"""Usage reports over the trace index: by day, month, session or model, exact to the token, priced.

Each model call counts once. Within a file, of the lines that share a call's
key, the one with the largest total counts (a streamed message's usage only
grows); across files the first file, in path order, to hold a key keeps it (a
resumed session that copied its history into a new file does not count it
twice). A figure no call reported is
``not_reported``; one that only some calls of a row reported is ``unknown``:
a sum of the rest would be a guess presented as a count.

Days and months are in the report's time zone (the local one unless asked),
as the timestamps in the logs are instants. A call without a valid timestamp
(none, no zone, an invalid date) is counted in the session and model reports,
and in day reports under ``"unknown"``; a call without a model under the
model ``"unknown"``.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from decimal import Decimal
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from tackroom.errors import TraceError
from tackroom.prices import ModelPrices, PriceBook
from tackroom.trace.events import FIGURES, NOT_REPORTED, UNKNOWN
from tackroom.trace.index import TraceIndex
from tackroom.trace.index import rank as index_rank
from tackroom.trace.model import R_KEY
from tackroom.trace.summary import (
    BIG,
    E_ALONE,
    E_CALLS,
    E_MODEL,
    E_REPORTED,
    E_SESSION,
    E_SLOT,
    E_SUMS,
    E_UNKNOWN,
    fold,
    unfold,
)

Group = Literal["daily", "monthly", "session", "model"]
GROUPS: tuple[Group, ...] = ("daily", "monthly", "session", "model")
NO_TIME = "unknown"
_N = len(FIGURES)


@dataclass
class Sums:
    """Running sums of the five figures over some calls, and how many calls reported each."""

    calls: int = 0
    values: list[int] = field(default_factory=lambda: [0] * _N)
    reported: list[int] = field(default_factory=lambda: [0] * _N)
    unknown: int = 0
    """Bit mask of figures some call reported in part (unknown whatever the others say)."""

    def add_entry(self, entry: list[Any]) -> None:
        """Add a fold of calls (:mod:`tackroom.trace.summary`)."""
        self.calls += entry[E_CALLS]
        self.values[:] = map(operator.add, self.values, entry[E_SUMS : E_SUMS + _N])
        self.reported[:] = map(operator.add, self.reported, entry[E_REPORTED : E_REPORTED + _N])
        self.unknown |= entry[E_UNKNOWN]

    def add(self, other: Sums) -> None:
        self.calls += other.calls
        for n in range(_N):
            self.values[n] += other.values[n]
            self.reported[n] += other.reported[n]
        self.unknown |= other.unknown

    def figure(self, n: int) -> int | str:
        if self.unknown & (1 << n):
            return UNKNOWN
        if self.reported[n] == 0:
            return NOT_REPORTED
        if self.reported[n] < self.calls:
            return UNKNOWN
        return self.values[n]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: self.figure(n) for n, name in enumerate(FIGURES)}
        parts = [data[name] for name in ("input", "output", "cache_read", "cache_write")]
        data["total"] = UNKNOWN if UNKNOWN in parts else sum(p for p in parts if isinstance(p, int))
        data["calls"] = self.calls
        return data


@dataclass
class ModelSums:
    """One model's calls in one row: their sums, and per price class the sums a cost needs."""

    sums: Sums = field(default_factory=Sums)
    classes: dict[int, list[int]] = field(default_factory=dict)
    unpriced: int = 0
    """Calls whose input figures were not all reported: their cost cannot be known."""


class _Row:
    __slots__ = ("models",)

    def __init__(self) -> None:
        self.models: dict[str, ModelSums] = {}


@dataclass(frozen=True)
class UsageOptions:
    group: Group = "daily"
    harness: str | None = None
    since: str | None = None
    """First day (``YYYY-MM-DD``) counted, in the report's zone."""
    until: str | None = None
    """Last day counted (inclusive)."""
    timezone: str | None = None
    """An IANA zone name; None is the local zone."""
    cost: bool = True

    def cache_key(self) -> str:
        from tackroom.trace.shortcut import report_key

        # Without a zone, days are the local zone's: TZ is part of what the report is.
        zone = self.timezone if self.timezone is not None else f"local:{os.environ.get('TZ', '')}"
        return report_key(self.group, self.harness, self.since, self.until, zone, self.cost)


def zone(name: str | None) -> tzinfo | None:
    """The zone ``name`` (None: local), or a TraceError naming it."""
    if name is None:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise TraceError(
            f"unknown time zone {name!r}: give an IANA name such as UTC or Europe/Berlin"
        ) from exc


class _Days:
    """Times to local days: a UTC quarter hour (an entry's slot) or a time as written, each found once."""

    def __init__(self, tz: tzinfo | None) -> None:
        self._tz = tz
        self._cache: dict[str, str] = {}

    def of_slot(self, when: Any) -> str:
        """The day of an entry's slot: ``2026-11-01T10:45`` (a UTC quarter hour) or a time as written."""
        if not isinstance(when, str):
            return NO_TIME
        found = self._cache.get(when)
        if found is None:
            text = f"{when}:00+00:00" if len(when) == 16 and when[10] == "T" else when
            found = self._cache[when] = self.day(text)
        return found

    def day(self, ts: str) -> str:
        try:
            moment = datetime.fromisoformat(ts)
        except ValueError:
            return NO_TIME  # not a time (an invalid date such as Feb 30 included)
        if moment.tzinfo is None:
            return NO_TIME  # a time without a zone is not an instant: its day is not known
        return moment.astimezone(self._tz).date().isoformat()


def usage_report(index: TraceIndex, options: UsageOptions, prices: PriceBook | None = None) -> dict[str, Any]:
    """The report ``options`` ask for, from what the index holds (scan first to bring it up to date).

    A report is cached in the index until the next change to it, so asking
    again for the same report costs one query.
    """
    tz = zone(options.timezone)
    key = options.cache_key()
    generation = index.generation()
    with index.db.connect() as db:
        cached = db.execute("SELECT generation, value FROM trace_cache WHERE name = ?", (key,)).fetchone()
    if cached is not None and cached[0] == generation:
        report: dict[str, Any] = orjson.loads(cached[1])
        return report
    report = _build(index, options, tz, prices)
    with index.db.transaction() as db:
        db.execute(
            "INSERT OR REPLACE INTO trace_cache (name, generation, value) VALUES (?, ?, ?)",
            (key, generation, orjson.dumps(report)),
        )
    return report


def _rows(index: TraceIndex, harness: str | None) -> Iterator[tuple[str, list[list[Any]]]]:
    query = "SELECT harness, usage FROM trace_files"
    args: tuple[Any, ...] = ()
    if harness is not None:
        query += " WHERE harness = ?"
        args = (harness,)
    with index.db.connect() as db:
        for owner, blob in db.execute(query + " ORDER BY path", args):
            yield owner, orjson.loads(blob)


def _build(
    index: TraceIndex, options: UsageOptions, tz: tzinfo | None, prices: PriceBook | None
) -> dict[str, Any]:
    days = _Days(tz)
    group = options.group
    since, until = options.since, options.until
    rows: dict[str, _Row] = {}
    book = prices if prices is not None else (PriceBook.default() if options.cost else None)
    model_prices: dict[str, ModelPrices | None] = {}
    harness_of_session: dict[str, str] = {}
    by_day = group in ("daily", "monthly") or since or until

    def add(owner: str, entry: list[Any]) -> None:
        day = days.of_slot(entry[E_SLOT]) if by_day else NO_TIME
        if (since and (day == NO_TIME or day < since)) or (until and (day == NO_TIME or day > until)):
            return
        model = entry[E_MODEL] or "unknown"
        if group == "daily":
            bucket = day
        elif group == "monthly":
            bucket = day[:7] if day != NO_TIME else NO_TIME
        elif group == "session":
            bucket = entry[E_SESSION] or "unknown"
            harness_of_session.setdefault(bucket, owner)
        else:
            bucket = model
        row = rows.get(bucket)
        if row is None:
            row = rows[bucket] = _Row()
        sums = row.models.get(model)
        if sums is None:
            sums = row.models[model] = ModelSums()
        calls = entry[E_CALLS]
        sums.sums.add_entry(entry)
        if book is None:
            return
        if entry[E_REPORTED] < calls or entry[E_REPORTED + 1] < calls:
            sums.unpriced += calls  # an input or output figure missing: what they cost is not known
            return
        if model not in model_prices:
            model_prices[model] = book.lookup(model)
        found = model_prices[model]
        i, o, cr, cw = entry[E_SUMS : E_SUMS + 4]
        if found is None:
            k = 0
        elif entry[E_ALONE]:
            k = found.price_class(i + cr + cw)  # one call: its own tier
        elif found.thresholds and found.thresholds[0] < BIG:
            sums.unpriced += calls  # a tier below what folds keep apart: these calls cannot be priced
            return
        else:
            k = 0
        totals = sums.classes.get(k)
        if totals is None:
            totals = sums.classes[k] = [0, 0, 0, 0]
        totals[0] += i
        totals[1] += o
        totals[2] += cr
        totals[3] += cw

    # A call logged in several files (a resumed session's copied history, a subagent's messages copied
    # into its parent's log) counts once: of its copies, the one that was not a side chain's, then the
    # one with the largest total. Such files are added up from their rows; the rest from their folds.
    several = _keys_in_several_files(index, options.harness)
    best: dict[tuple[str, str], tuple[tuple[int, ...], list[Any]]] = {}
    query = "SELECT harness, summary, keys, usage FROM trace_files"
    args: tuple[Any, ...] = ()
    if options.harness is not None:
        query += " WHERE harness = ?"
        args = (options.harness,)
    with index.db.connect() as db:
        for owner, summary, keys, usage in db.execute(query + " ORDER BY path", args):
            mine = several.get(owner)
            entries = orjson.loads(summary)
            if mine and not mine.isdisjoint(orjson.loads(keys)):
                calls = orjson.loads(usage)
                contested = []
                for n, call in enumerate(calls):
                    key = call[R_KEY]
                    if key is not None and key in mine:
                        contested.append(n)
                        rank = index_rank(call)
                        known = best.get((owner, key))
                        if known is None or rank > known[0]:
                            best[(owner, key)] = (rank, call)
                # The file's fold less its contested calls (counted below, once, from the winning copy).
                entries = unfold(entries, calls, contested)
            for entry in entries:
                add(owner, entry)
    winners: dict[str, list[list[Any]]] = {}
    for (owner, _), (_, call) in best.items():
        winners.setdefault(owner, []).append(call)
    for owner, calls in winners.items():
        for entry in fold(calls)[1]:
            add(owner, entry)
    if book is not None:
        book.save()
    out_rows = []
    grand = Sums()
    grand_cost: Decimal | None = Decimal(0)
    for bucket in sorted(rows):
        row_sums = Sums()
        row_cost: Decimal | None = Decimal(0)
        models = []
        for model in sorted(rows[bucket].models):
            found = rows[bucket].models[model]
            row_sums.add(found.sums)
            cost = _cost(found, model_prices.get(model)) if book is not None else None
            row_cost = None if cost is None or row_cost is None else row_cost + cost
            models.append({"model": model, **found.sums.to_json(), "cost_usd": _money(cost)})
        grand.add(row_sums)
        grand_cost = None if row_cost is None or grand_cost is None else grand_cost + row_cost
        item: dict[str, Any] = {
            "key": bucket,
            **row_sums.to_json(),
            "cost_usd": _money(row_cost),
            "models": models,
        }
        if group == "session":
            item["harness"] = harness_of_session.get(bucket)
        out_rows.append(item)
    if group == "session":
        _add_sessions(index, out_rows)
    return {
        "group": group,
        "harness": options.harness,
        "timezone": options.timezone or _local_zone(),
        "since": since,
        "until": until,
        "rows": out_rows,
        "totals": {**grand.to_json(), "cost_usd": _money(grand_cost if book is not None else None)},
    }


def _keys_in_several_files(index: TraceIndex, harness: str | None) -> dict[str, set[str]]:
    """Per harness, the call keys more than one of its files holds: usually none or a few."""
    seen: dict[str, set[str]] = {}
    several: dict[str, set[str]] = {}
    query = "SELECT harness, keys FROM trace_files"
    args: tuple[Any, ...] = ()
    if harness is not None:
        query += " WHERE harness = ?"
        args = (harness,)
    with index.db.connect() as db:
        for owner, blob in db.execute(query, args):
            here = set(orjson.loads(blob))
            known = seen.setdefault(owner, set())
            twice = here & known
            if twice:
                several.setdefault(owner, set()).update(twice)
            known |= here
    return several


def _cost(entry: ModelSums, found: ModelPrices | None) -> Decimal | None:
    if found is None or entry.unpriced:
        return None
    return sum(
        (found.rates[k].cost(*totals) for k, totals in entry.classes.items()),
        Decimal(0),
    )


def _money(value: Decimal | None) -> str | None:
    """USD as an exact decimal string (JSON numbers would round it), or None when unknown."""
    if value is None:
        return None
    return format(value.normalize(), "f") if value else "0"


def _local_zone() -> str:
    return time.tzname[0] if time.tzname else "local"


def _add_sessions(index: TraceIndex, rows: list[dict[str, Any]]) -> None:
    wanted = {row["key"] for row in rows}
    found: dict[str, dict[str, Any]] = {}
    with index.db.connect() as db:
        for session, parent, cwd, started, ended, agent in db.execute(
            "SELECT session_id, parent_id, cwd, started, ended, agent FROM trace_sessions"
        ):
            if session in wanted and session not in found:
                found[session] = {
                    "parent_id": parent,
                    "cwd": cwd,
                    "started": started,
                    "ended": ended,
                    "agent": agent,
                }
    for row in rows:
        row.update(found.get(row["key"], {"parent_id": None, "cwd": None, "started": None, "ended": None}))
