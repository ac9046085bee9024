"""Ask a package registry for the newest release of an adapter's harness.

The registry is asked through its own client, configured as the user has it
(``npm view PKG version --json``; ``pip index versions PKG`` with pip's
configured indexes), within a timeout. Its answer is outside input: only a
version that tackroom could install and name a directory after is accepted;
anything else, an unreachable registry, a timeout or an unknown package is a
:class:`RegistryError` that says which and how to fix it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tackroom.adapters.versions import VERSION_PATTERN
from tackroom.errors import RegistryError

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter

DEFAULT_TIMEOUT_S = 30.0
_VERSION = re.compile(VERSION_PATTERN)
_MAX_OUTPUT = 64 * 1024
"""More than any registry client prints for one version; a longer answer is not one."""

_UNREACHABLE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "Network is unreachable")
_UNKNOWN = ("E404", "404 Not Found", "No matching distribution")


def latest_version(
    adapter: Adapter,
    *,
    env: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    python: str | None = None,
) -> str:
    """The newest release of ``adapter``'s install package, as its registry answers.

    ``env`` is the environment the registry client runs in (its PATH finds
    ``npm``); ``python`` is the interpreter whose pip asks a PyPI index
    (default: the one running tackroom, which also makes the harness's venv).

    Raises:
        RegistryError: no install recipe, no client, the registry could not
            be reached in time, it does not know the package, or its answer
            is not a version.
    """
    recipe = adapter.spec.install
    if recipe is None or not (recipe.npm or recipe.pip):
        raise RegistryError(
            f"adapter {adapter.name!r} has no install recipe, so there is no package to ask a registry about"
        )
    env = os.environ if env is None else env
    if recipe.npm:
        return _npm(adapter.name, recipe.npm, env, timeout_s)
    assert recipe.pip is not None
    return _pip(adapter.name, recipe.pip, env, timeout_s, python or sys.executable)


def _npm(name: str, package: str, env: Mapping[str, str], timeout_s: float) -> str:
    npm = shutil.which("npm", path=env.get("PATH"))
    if npm is None:
        raise RegistryError(f"asking npm for the newest {package!r} (adapter {name!r}) needs npm on PATH")
    out = _ask([npm, "view", package, "version", "--json"], env, timeout_s, f"npm ({package})")
    try:
        answer = json.loads(out)
    except (ValueError, RecursionError):
        answer = None
    return _checked(answer, f"npm ({package})", out)


def _pip(name: str, package: str, env: Mapping[str, str], timeout_s: float, python: str) -> str:
    argv = [python, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"]
    out = _ask(argv, env, timeout_s, f"the PyPI index ({package})")
    # "<package> (<version>)" heads the answer: the newest version pip would install.
    head = re.search(r"^\S+ \(([^()\s]+)\)\s*$", out, re.MULTILINE)
    return _checked(head.group(1) if head else None, f"the PyPI index ({package})", out)


def _ask(argv: list[str], env: Mapping[str, str], timeout_s: float, what: str) -> str:
    """Run a registry client; its stdout, or a RegistryError saying why there is none."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout_s,
            env=dict(env),
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RegistryError(
            f"{what} did not answer within {timeout_s:g}s: the registry is unreachable or slow from here"
        ) from exc
    except OSError as exc:
        raise RegistryError(f"could not ask {what}: {exc.strerror or exc}") from exc
    out = done.stdout[:_MAX_OUTPUT].decode("utf-8", "replace")
    err = done.stderr[-_MAX_OUTPUT:].decode("utf-8", "replace")
    if done.returncode != 0 or any(code in out + err for code in _UNKNOWN):
        raise RegistryError(_refused(what, done.returncode, f"{out}\n{err}"))
    return out


def _refused(what: str, code: int, text: str) -> str:
    if any(marker in text for marker in _UNKNOWN):
        reason = "the registry does not know this package (check the adapter's install recipe)"
    elif any(marker in text for marker in _UNREACHABLE):
        reason = "the registry could not be reached (check the network, a proxy, the configured registry)"
    else:
        reason = f"its client failed (exit {code})"
    last = [line.strip() for line in text.splitlines() if line.strip()][-3:]
    shown = ": " + " | ".join(last)[:300] if last else ""
    return f"could not ask {what} for its newest release: {reason}{shown}"


def _checked(answer: object, what: str, raw: str) -> str:
    if isinstance(answer, str) and _VERSION.fullmatch(answer):
        return answer
    shown = raw.strip()[:120] or "nothing"
    raise RegistryError(f"{what} answered {shown!r}, which is not a version tackroom can install")
