"""Harness versions: the one way tackroom orders them.

A version here is what a harness prints or a registry answers: a dotted
release (``2.1.332``), maybe with a pre-release or build suffix
(``1.0.0-beta.2``, ``0.9.1+local``). Adapter data (``verified_with``,
``previously_verified``, a ``since`` entry's ``version``) must be written as
:data:`VERSION_PATTERN`; a version read from a harness is only ever compared.
"""

from __future__ import annotations

import re

VERSION_PATTERN = r"^[0-9]{1,9}(\.[0-9]{1,9}){0,3}([-+._]?[0-9A-Za-z]{1,20}([.+-][0-9A-Za-z]{1,20}){0,8})?$"
"""How a version is written in adapter data or accepted from a registry: up to four dotted numbers,
then an optional suffix (``-beta.2``, ``+local``, ``rc1``); never ``..``, so it is a safe file name."""

_RELEASE = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,9}){0,3})(-|[A-Za-z])?")

ReleaseKey = tuple[tuple[int, int, int, int], int]


def release_key(version: str) -> ReleaseKey | None:
    """A sort key for ``version``, or None when it does not start with a dotted release.

    Missing parts count as 0 (``2.1`` = ``2.1.0``), and a pre-release
    (``-beta``, or letters right after the numbers as in ``rc1``) sorts before
    its release (``2.1.300-beta`` < ``2.1.300``), as semver and PEP 440 order them.
    """
    match = _RELEASE.match(version.strip())
    if match is None:
        return None
    parts = [int(part) for part in match.group(1).split(".")]
    padded = (*parts, 0, 0, 0)[:4]
    release = (padded[0], padded[1], padded[2], padded[3])
    return release, 0 if match.group(2) else 1


def at_least(version: str, minimum: str) -> bool | None:
    """Whether ``version`` is ``minimum`` or newer; None when either cannot be read as a version."""
    have, need = release_key(version), release_key(minimum)
    if have is None or need is None:
        return None
    return have >= need


def sort_key(version: str) -> ReleaseKey:
    """:func:`release_key`, with text that is no version sorting before every version."""
    return release_key(version) or ((-1, -1, -1, -1), 0)
