"""Capability rows in the state database: every probe's row, with its history.

Rows are appended, never updated: the history of a harness's capabilities is
the table. Each row is written in one statement inside one transaction, and
re-parsed by the strict row parser when read, so a row edited behind
tackroom's back is refused (with its id and file), never trusted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from tackroom.errors import RowError, StateError
from tackroom.probe.rows import Row, loads_strict, row_from_json
from tackroom.state.db import StateDB
from tackroom.values import iso

_COLUMNS = "id, adapter, adapter_hash, harness_version, probed_at, outcome, supports, notes"


class CapabilityRows:
    """The ``capability_rows`` table of one state database."""

    def __init__(self, db: StateDB) -> None:
        self.db = db

    def add(self, row: Row) -> int:
        """Store ``row`` (whole, or not at all); return its id."""
        data = row.to_json()
        with self.db.transaction() as db:
            cursor = db.execute(
                "INSERT INTO capability_rows (adapter, adapter_hash, harness_version, probed_at, outcome, "
                "supports, notes) VALUES (?, ?, ?, ?, ?, json(?), json(?))",
                (
                    row.adapter,
                    row.adapter_hash,
                    row.harness_version,
                    iso(row.probed_at),
                    row.outcome,
                    _json(data["supports"]),
                    _json(data["notes"]),
                ),
            )
            return int(cursor.lastrowid or 0)

    def history(self, adapter: str | None = None, harness_version: str | None = None) -> list[Row]:
        """Every row (of ``adapter``, at ``harness_version``), oldest first."""
        where, args = _filters(adapter, harness_version)
        return self._select(f"SELECT {_COLUMNS} FROM capability_rows {where} ORDER BY probed_at, id", args)

    def latest(self, adapter: str, harness_version: str | None = None) -> Row | None:
        """The newest row of ``adapter`` (at ``harness_version``), or None if it was never probed."""
        where, args = _filters(adapter, harness_version)
        rows = self._select(
            f"SELECT {_COLUMNS} FROM capability_rows {where} ORDER BY probed_at DESC, id DESC LIMIT 1", args
        )
        return rows[0] if rows else None

    def latest_by_adapter(self) -> dict[str, Row]:
        """Each adapter's newest row, by adapter name."""
        query = (
            f"SELECT {_COLUMNS} FROM capability_rows AS r WHERE id = (SELECT id FROM capability_rows "
            "WHERE adapter = r.adapter ORDER BY probed_at DESC, id DESC LIMIT 1) ORDER BY adapter"
        )
        return {row.adapter: row for row in self._select(query, ())}

    def latest_by_version(self, adapter: str) -> dict[str | None, Row]:
        """``adapter``'s newest row at each harness version it was probed at, in the order first probed."""
        found: dict[str | None, Row] = {}
        for row in self.history(adapter):
            found[row.harness_version] = row
        return found

    def _select(self, query: str, args: Iterable[object]) -> list[Row]:
        with self.db.connect() as db:
            records = db.execute(query, tuple(args)).fetchall()
        return [self._row(record) for record in records]

    def _row(self, record: tuple[object, ...]) -> Row:
        row_id, adapter, adapter_hash, version, probed_at, outcome, supports, notes = record
        try:
            return row_from_json(
                {
                    "adapter": adapter,
                    "adapter_hash": adapter_hash,
                    "harness_version": version,
                    "probed_at": probed_at,
                    "outcome": outcome,
                    "supports": loads_strict(str(supports), "supports"),
                    "notes": loads_strict(str(notes), "notes"),
                }
            )
        except RowError as exc:
            raise StateError(
                f"{self.db.path}: capability row {row_id} is not a row tackroom wrote ({exc}): delete it "
                f"(sqlite3 {self.db.path} 'DELETE FROM capability_rows WHERE id = {row_id}') or move the "
                "file aside"
            ) from exc


def _filters(adapter: str | None, harness_version: str | None) -> tuple[str, list[object]]:
    clauses: list[str] = []
    args: list[object] = []
    if adapter is not None:
        clauses.append("adapter = ?")
        args.append(adapter)
    if harness_version is not None:
        clauses.append("harness_version = ?")
        args.append(harness_version)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), args


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"))
