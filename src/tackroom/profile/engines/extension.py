"""Engines for pi-extension (hooks as a generated pi/omp extension): not implemented yet."""

from __future__ import annotations

from tackroom.profile.engines.base import Engine

ENGINES: list[Engine] = []
