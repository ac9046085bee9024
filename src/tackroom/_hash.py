"""``sha256`` and ``blake2b`` without importing :mod:`hashlib`, which loads OpenSSL first: about 2.5 ms
of every command's start, for two hashes CPython also builds in. A test holds them to hashlib's."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12 and later
        except ImportError:
            from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:  # not CPython
        from hashlib import blake2b

__all__ = ["blake2b", "sha256"]
