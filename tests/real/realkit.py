"""What the real-harness tests share besides fixtures."""

from __future__ import annotations

from collections.abc import Callable

from prockit import processes_in as processes_in
from tackroom.adapters.resolve import resolve_builtins
from tackroom.run.result import Result

#: The harnesses that install and run here: every built-in verified on a real binary with an
#: install recipe. The others (crush, cursor, kiro, goose, antigravity, amp, auggie) are data, unverified.
REAL = sorted(name for name, a in resolve_builtins().items() if a.spec.verified_with and a.spec.install)

#: ``name@version`` for each of those at every version it is proven on: ``verified_with``, then
#: each ``previously_verified`` (the ``harness`` fixture installs and runs that version).
AT_VERSIONS = [f"{name}@{version}" for name in REAL for version in resolve_builtins()[name].verified_versions]


RunFn = Callable[..., Result]
Recorder = Callable[..., None]
"""``record(result, case, options=None)``: the run's options go into the golden case's meta.json."""
