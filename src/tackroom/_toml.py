"""The one TOML reader: tomli before Python 3.14 (its syntax errors carry a line number, which
3.11's tomllib lacks), the standard library's from then on. A process that reads an adapter, a
profile and a harness's config.toml loads one parser, not two."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 14):
    import tomllib
else:
    import tomli as tomllib

__all__ = ["tomllib"]
