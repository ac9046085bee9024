"""The closed template grammar adapters are written in.

Placeholders are ``{{name}}``; which names a template may use depends on where
it sits (argv, option, endpoint, path). Anything else is a load error: a typo
must never render as literal text into a harness's argv.

- ``one_shot``: literals, ``{{prompt}}`` (exactly once unless the prompt goes
  on stdin), whole elements ``{{opt.<name>}}`` and at most one whole element
  ``{{endpoint}}``.
- option templates: ``{{value}}`` (value options) or nothing (flag options).
- endpoint templates: ``{{base_url}}``, ``{{api_key}}``, ``{{model}}``, paths.
- paths: ``{{workdir}}``, ``{{home}}``, ``${VAR:-default}`` and a leading ``~``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from tackroom.errors import TemplateError

PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}")
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
OPT_ELEMENT = re.compile(r"^\{\{opt\.([a-z_]+)\}\}$")

PATH_NAMES = frozenset({"workdir", "home"})
ENDPOINT_NAMES = frozenset({"base_url", "api_key", "model"}) | PATH_NAMES


def placeholders(text: str) -> list[str]:
    """Every ``{{...}}`` name in ``text``, in order."""
    return PLACEHOLDER.findall(text)


def stray_braces(text: str) -> bool:
    """True when ``text`` has ``{{`` or ``}}`` that is not part of a placeholder."""
    rest = PLACEHOLDER.sub("", text)
    return "{{" in rest or "}}" in rest


def check_names(text: str, allowed: frozenset[str], *, braces: bool = True) -> str | None:
    """Return a problem description if ``text`` uses a name outside ``allowed``.

    ``braces=False`` allows literal ``}}`` (hook templates that print JSON).
    """
    if braces and stray_braces(text):
        return f"unbalanced '{{{{' or '}}}}' in {text!r}"
    for name in placeholders(text):
        if name not in allowed:
            shown = ", ".join(f"{{{{{n}}}}}" for n in sorted(allowed)) or "none"
            return f"unknown placeholder {{{{{name}}}}} in {text!r} (allowed here: {shown})"
    return None


def substitute(text: str, values: Mapping[str, str]) -> str:
    """Replace every placeholder in ``text``; a name without a value is an error."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise TemplateError(f"no value for {{{{{name}}}}} in {text!r}")
        return values[name]

    return PLACEHOLDER.sub(one, text)


def expand_env(text: str, env: Mapping[str, str]) -> str:
    """Expand ``${VAR:-default}`` and ``${VAR}`` against ``env`` (empty counts as unset)."""

    def one(match: re.Match[str]) -> str:
        value = env.get(match.group(1))
        if value:
            return value
        return match.group(2) if match.group(2) is not None else ""

    return ENV_REF.sub(one, text)


def expand_path(text: str, *, env: Mapping[str, str], home: str, workdir: str) -> Path:
    """Expand a path template: placeholders, then ``${VAR:-default}``, then a leading ``~``.

    ``~`` means the harness's home (``home``), not the caller's, so an isolated
    run resolves every default inside its own directory.
    """
    text = expand_env(substitute(text, {"home": home, "workdir": workdir}), env)
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    return Path(text)
