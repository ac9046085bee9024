"""Usage reports over the trace index: by day, month, session or model, exact to the token, priced.

Each model call counts once: of the lines and files that share a call's key,
the best copy counts (not a side chain's copy, then the largest total: a
streamed message's usage only grows), the first in path order of equals; a
resumed session that copied its history into a new file, or a subagent's
messages copied into its parent's log, do not count twice. A figure no call
reported is ``not_reported``; one that only some calls of a row reported is
``unknown``: a sum of the rest would be a guess presented as a count.

The report adds up the folds the index keeps per file
(:mod:`tackroom.trace.summary`), less the calls a file holds only as a copy.

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
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from decimal import Decimal
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from tackroom._gc import paused
from tackroom.errors import TraceError
from tackroom.prices import ModelPrices, PriceBook, table_version
from tackroom.trace.events import FIGURES, NOT_REPORTED, UNKNOWN
from tackroom.trace.index import TraceIndex
from tackroom.trace.summary import (
    BOUNDS,
    C_ENTRY,
    C_FIELDS,
    C_PLACE,
    C_RANK,
    E_ALONE,
    E_BAND,
    E_CALLS,
    E_MODEL,
    E_REPORTED,
    E_SESSION,
    E_SLOT,
    E_SUMS,
    E_UNKNOWN,
    HOUR,
    QUARTER,
    fold,
    records,
    taken_out,
)

Group = Literal["daily", "monthly", "session", "model"]
GROUPS: tuple[Group, ...] = ("daily", "monthly", "session", "model")
NO_TIME = "unknown"
_N = len(FIGURES)
_PRICED = 0b1111
"""The unknown-figure bits of the figures a price applies to: input, output, cache read, cache write."""


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

    def __post_init__(self) -> None:
        groups = ("daily", "monthly", "session", "model")
        if self.group not in groups:
            raise TraceError(f"unknown grouping {str(self.group)[:40]!r}: give one of {', '.join(groups)}")
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is None:
                continue
            try:
                ok = isinstance(value, str) and len(value) == 10 and bool(datetime.fromisoformat(value))
            except ValueError:
                ok = False
            if not ok:
                raise TraceError(f"{name} {str(value)[:40]!r} is not a day: give YYYY-MM-DD")

    def cache_key(self) -> str:
        from tackroom.trace.shortcut import report_key

        # Without a zone, days are the local zone's: TZ is part of what the report is. So is the price
        # table costs come from: another genai-prices release is another report.
        zone = self.timezone if self.timezone is not None else f"local:{os.environ.get('TZ', '')}"
        prices = f"prices {table_version()}" if self.cost else False
        return report_key(self.group, self.harness, self.since, self.until, zone, prices)


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
    """Times to local days: a UTC hour or quarter hour (an entry's slot) or a time as written
    (``@``-prefixed), each found once."""

    def __init__(self, tz: tzinfo | None) -> None:
        self._tz = tz
        self.known: dict[str, str] = {}
        """The days found so far, by slot (what :meth:`of_slot` answers from without working it out)."""

    def of_slot(self, when: Any) -> str:
        """The day of an entry's slot: ``2026-11-01T10`` (a UTC hour), ``2026-11-01T10:45`` (a UTC
        quarter hour) or ``@`` and a time as written. Raises :class:`_SubHour` for an hour the zone
        splits between two days."""
        if not isinstance(when, str):
            return NO_TIME
        found = self.known.get(when)
        if found is None:
            if when.startswith("@"):
                found = self.day(when[1:])
            elif len(when) == HOUR:
                found = self._hour(when)
            else:
                found = self.day(f"{when}:00+00:00")
            self.known[when] = found
        return found

    def _hour(self, when: str) -> str:
        try:
            start = datetime.fromisoformat(f"{when}:00:00+00:00")
        except ValueError:
            return NO_TIME
        first, last = start.astimezone(self._tz), (start + _LAST).astimezone(self._tz)
        if first.utcoffset() != last.utcoffset() or (first.utcoffset() or _ZERO) % _ONE_HOUR:
            raise _SubHour(when)
        return first.date().isoformat()

    def day(self, ts: str) -> str:
        try:
            moment = datetime.fromisoformat(ts)
        except ValueError:
            return NO_TIME  # not a time (an invalid date such as Feb 30 included)
        if moment.tzinfo is None:
            return NO_TIME  # a time without a zone is not an instant: its day is not known
        return moment.astimezone(self._tz).date().isoformat()


_LAST = timedelta(minutes=59, seconds=59, microseconds=999_999)
_ONE_HOUR = timedelta(hours=1)
_ZERO = timedelta(0)


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
    with paused():
        report = _build(index, options, tz, prices)
    try:
        value = orjson.dumps(report)
    except TypeError:  # a sum past 64 bits (of billions of calls): printed, not cached
        return report
    with index.db.transaction() as db:
        db.execute(
            "INSERT OR REPLACE INTO trace_cache (name, generation, value) VALUES (?, ?, ?)",
            (key, generation, value),
        )
    return report


class _SubHour(Exception):
    """The report's zone splits an hour between two days: the hour folds cannot be used."""


class _Straddle(Exception):
    """A model's price threshold is not one of the bands' bounds: its calls must be priced one by one."""


def _build(
    index: TraceIndex, options: UsageOptions, tz: tzinfo | None, prices: PriceBook | None
) -> dict[str, Any]:
    width, alone = HOUR, False
    while True:
        try:
            return _build_at(index, options, tz, prices, width, alone)
        except _SubHour:
            width = QUARTER
        except _Straddle:
            alone = True


def _classes(found: ModelPrices) -> list[int]:
    """The price class of each band for ``found`` (see :mod:`tackroom.trace.summary`)."""
    if not set(found.thresholds) <= set(BOUNDS):
        raise _Straddle(found.model)
    return [sum(1 for t in found.thresholds if BOUNDS.index(t) < b) for b in range(len(BOUNDS) + 1)]


def _build_at(
    index: TraceIndex,
    options: UsageOptions,
    tz: tzinfo | None,
    prices: PriceBook | None,
    width: int,
    alone: bool,
) -> dict[str, Any]:
    """The report from the stored folds, or (for another ``width``, or ``alone``) from the rows."""
    days = _Days(tz)
    group = options.group
    since, until = options.since, options.until
    rows: dict[str, _Row] = {}
    book = prices if prices is not None else (PriceBook.default() if options.cost else None)
    model_prices: dict[str, tuple[ModelPrices, list[int]] | None] = {}
    harness_of_session: dict[str, str] = {}
    by_day = group in ("daily", "monthly") or since or until
    stored = width == HOUR and not alone

    merged: dict[tuple[Any, ...], tuple[str, str, list[Any]]] = {}
    day_of, known_days = days.of_slot, days.known
    per_session = group == "session"
    plus = operator.add

    def add(owner: str, file_id: int, entries: list[list[Any]]) -> None:
        # Entries that land in one row's day, model and price class are added up first, so each sum
        # is put in its row and priced once: a report of a year of hours counts a few hundred sums,
        # not ten thousand. A call kept alone stays alone (its class is its own).
        for entry in entries:
            if by_day:
                day = known_days.get(entry[E_SLOT])
                if day is None:
                    day = day_of(entry[E_SLOT])
            else:
                day = NO_TIME
            alone = entry[E_ALONE]
            key = (
                owner,
                day,
                entry[E_MODEL],
                entry[E_SESSION] if per_session else None,
                (file_id, alone) if alone else 0,
                entry[E_BAND],
            )
            known = merged.get(key)
            if known is None:
                merged[key] = (owner, day, entry)
                continue
            sums = known[2]
            sums[E_CALLS:E_UNKNOWN] = map(plus, sums[E_CALLS:E_UNKNOWN], entry[E_CALLS:E_UNKNOWN])
            sums[E_UNKNOWN] |= entry[E_UNKNOWN]

    def count(owner: str, day: str, entry: list[Any]) -> None:
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
        if entry[E_REPORTED] < calls or entry[E_REPORTED + 1] < calls or entry[E_UNKNOWN] & _PRICED:
            # An input or output figure missing, or a priced figure unknown: what they cost is not known.
            sums.unpriced += calls
            return
        if model not in model_prices:
            found = book.lookup(model)
            model_prices[model] = None if found is None else (found, _classes(found) if not alone else [])
        priced = model_prices[model]
        i, o, cr, cw = entry[E_SUMS : E_SUMS + 4]
        if priced is None:
            k = 0
        elif entry[E_ALONE]:
            k = priced[0].price_class(abs(i + cr + cw))  # one call (or one taken out): its own class
        else:
            k = priced[1][entry[E_BAND]]
        totals = sums.classes.get(k)
        if totals is None:
            totals = sums.classes[k] = [0, 0, 0, 0]
        totals[0] += i
        totals[1] += o
        totals[2] += cr
        totals[3] += cw

    where, args = ("WHERE harness = ? ", (options.harness,)) if options.harness is not None else ("", ())
    lost = _lost_copies(index, where, args)
    with index.db.connect() as db:
        for file_id, owner, summary in db.execute(
            f"SELECT id, harness, summary FROM trace_files {where}ORDER BY path", args
        ):
            taken = lost.get(file_id)
            if taken is None and stored:
                add(owner, file_id, orjson.loads(summary))
                continue
            entries = orjson.loads(summary) if stored else None
            out = None if entries is None else taken_out(entries, taken or [])
            if entries is None or out is None:
                # The file's calls folded again, less those counted from another file's copy.
                (blob,) = db.execute("SELECT usage FROM trace_files WHERE id = ?", (file_id,)).fetchone()
                gone = {copy[C_PLACE] for copy in taken or ()}
                calls = orjson.loads(blob)
                entries = fold([call for n, call in enumerate(calls) if n not in gone], width, alone)[2]
                out = []
            add(owner, file_id, entries)
            add(owner, file_id, out)
    if book is not None:
        book.prefetch(entry[E_MODEL] or "unknown" for _, _, entry in merged.values())
    for owner, day, entry in merged.values():
        count(owner, day, entry)
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
            if not found.sums.calls:
                continue  # every call here was taken out again: counted from a copy elsewhere
            row_sums.add(found.sums)
            priced = model_prices.get(model)
            cost = _cost(found, priced[0] if priced else None) if book is not None else None
            row_cost = None if cost is None or row_cost is None else row_cost + cost
            models.append({"model": model, **found.sums.to_json(), "cost_usd": _money(cost)})
        if not models:
            continue
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


def _lost_copies(index: TraceIndex, where: str, args: tuple[Any, ...]) -> dict[int, list[Sequence[int]]]:
    """Per file, the copy records (:mod:`~tackroom.trace.summary`) of its calls that are counted from a
    copy in another file.

    A call logged in several files (a resumed session's copied history, a subagent's messages copied
    into its parent's log) counts once: of its copies, the best by :func:`~tackroom.trace.summary.rank`,
    the first in path order of equals. Few calls have copies: the keys that do are found by set
    operations, and only their copies are compared.
    """
    # First the keys' hashes seen in more than one file (ints take a third of the memory of the keys);
    # a hash shared by two keys only makes them candidates: their copies are compared by key below.
    seen: dict[str, set[int]] = {}
    copied: dict[str, set[int]] = {}
    with index.db.connect() as db:
        for owner, blob in db.execute(f"SELECT harness, keys FROM trace_files {where}ORDER BY path", args):
            hashes = set(map(hash, orjson.loads(blob)))
            known = seen.setdefault(owner, set())
            if twice := known & hashes:
                copied.setdefault(owner, set()).update(twice)
            known |= hashes
        del seen
        # Per owner and key, the best copy so far: (its file's records, its place in them, its file).
        best: dict[str, dict[str, tuple[array[int], int, int]]] = {}
        lost: dict[int, list[Sequence[int]]] = {}  # each record a slice of its file's
        query = f"SELECT id, harness, path, keys, copies FROM trace_files {where}ORDER BY path"
        for file_id, owner, path, blob, packed in db.execute(query, args):
            mine = copied.get(owner)
            if not mine:
                continue
            keys = orjson.loads(blob)
            wanted = [n for n, key in enumerate(keys) if hash(key) in mine]
            if not wanted:
                continue
            found = records(packed, len(keys))
            if found is None:
                raise TraceError(
                    f"{index.db.path}: the trace index's copy records of {path} are damaged: clear the "
                    f"index (sqlite3 {index.db.path} 'DELETE FROM trace_sessions; DELETE FROM trace_files') "
                    "and the next report reads the logs again"
                )
            best_of = best.setdefault(owner, {})
            for n in wanted:
                at = n * C_FIELDS
                key = keys[n]
                held = best_of.get(key)
                if held is None:
                    best_of[key] = (found, at, file_id)
                    continue
                other, there, other_file = held
                # Ranks compare as the records' slices do (arrays compare item by item).
                if found[at + C_RANK : at + C_ENTRY] > other[there + C_RANK : there + C_ENTRY]:
                    best_of[key] = (found, at, file_id)
                    lost.setdefault(other_file, []).append(other[there : there + C_FIELDS])
                else:
                    lost.setdefault(file_id, []).append(found[at : at + C_FIELDS])
    return lost


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
