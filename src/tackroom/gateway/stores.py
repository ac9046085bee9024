"""Which capture store a name means: a ``postgresql://`` URL, a SQLite file, or the state database.

Apart from :mod:`tackroom.gateway.store` because the Postgres store builds on that module's rows:
the factory sits above both, and loads the Postgres store only when a URL names one.
"""

from __future__ import annotations

from pathlib import Path

from tackroom.gateway.store import CaptureStore, SQLiteCaptureStore
from tackroom.state.db import StateDB


def open_store(db: Path | str | StateDB | CaptureStore | None = None) -> CaptureStore:
    """The store ``db`` names: a ``postgresql://`` URL, a SQLite file, the state database (None),
    or a store already made."""
    if db is None:
        return SQLiteCaptureStore(StateDB.default())
    if isinstance(db, StateDB):
        return SQLiteCaptureStore(db)
    if isinstance(db, (str, Path)):
        text = str(db)
        if text.startswith(("postgresql://", "postgres://")):
            from tackroom.gateway.pgstore import PostgresCaptureStore  # only for a Postgres URL

            return PostgresCaptureStore(text)
        return SQLiteCaptureStore(StateDB(Path(text)))
    return db
