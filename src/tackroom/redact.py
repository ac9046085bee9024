"""Credentials in text: find them, and hide them before anything is shown, logged or saved.

One place knows what a credential looks like in a URL (``user:pass@``, a
``?key=`` query), in a header (``Authorization: Bearer ...``), in an
argument list (``--token VALUE``) and by its own shape (``ghp_...``,
``sk-...``, ``AIza...``, ``xox...``, a JWT), so a plan, a render, ``result.json``, the
mock's records and an error message all hide the same things the same way.
Nothing here imports the rest of tackroom: the mock and the CLI edge use it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = [
    "REDACTED",
    "SECRET_HEADERS",
    "inline_secret",
    "inline_secret_in_args",
    "is_secret_header",
    "is_secret_name",
    "key_shape",
    "redact_key_shapes",
    "redact_text",
]

REDACTED = "<redacted>"

#: Headers whose value is a credential whatever it looks like.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-api",
    }
)
_SECRET_HEADER_WORDS = ("key", "token", "secret", "auth", "cookie", "password", "credential")

# Whole name parts, so GOOSE_DISABLE_KEYRING is not a secret but OPENAI_API_KEY is.
_SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|COOKIE|AUTH|PAT)(_|$)",
    re.IGNORECASE,
)


# The patterns below are compiled on first use: most commands never need them (compiling them is
# about 2 ms of every start), and a text that cannot hold a match is not searched (_may_hold).
@functools.cache
def _url_userinfo() -> re.Pattern[str]:
    """scheme://userinfo@ : the userinfo (user:password, or a token used as a user name)."""
    return re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{0,30}://)(?P<userinfo>[^/?#@\s]+)@")


@functools.cache
def _secret_query() -> re.Pattern[str]:
    """A query or fragment parameter whose name says it carries a credential."""
    return re.compile(
        r"(?P<name>[?&;#](?:[A-Za-z0-9_.-]*?)"
        r"(?:key|token|secret|password|passwd|pwd|auth|sig|signature|credential|session|code)"
        r"[A-Za-z0-9_.-]*=)(?P<value>[^&;#\s]+)",
        re.IGNORECASE,
    )


@functools.cache
def _header_text() -> re.Pattern[str]:
    """A credential header as free text (``Authorization: Bearer x``, ``x-api-key=x``): a header
    passed as an argument."""
    return re.compile(
        r"(?P<name>\b(?:proxy-authorization|authorization|x-api-key|x-goog-api-key|api-key|set-cookie|cookie)"
        r"\s*[:=]\s*)(?P<value>[^\r\n]+)",
        re.IGNORECASE,
    )


_HEADER_NAME_PARTS = ("authorization", "api-key", "cookie")
"""Each name :func:`_header_text` matches holds one of these."""


@functools.cache
def _scheme_token() -> re.Pattern[str]:
    return re.compile(r"(?P<name>\b(?:Bearer|Basic|Token)\s+)(?P<value>[A-Za-z0-9._~+/=-]{4,})")


# Keys known by their shape alone: a credential pasted into a message, a tool's output or a setting
# under a name no rule knows (GH = "ghp_...") has no context, only this. Each is (what it is, its
# fixed-width prefix, the rest, literal prefixes to look for first); a key starts a word, and enough
# key characters follow that a word ("sk-learn", "task-force") is not one.
_SHAPES = (
    ("an Anthropic key", "sk-ant-", "[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ("an OpenAI-style key", "sk-", "(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
    ("an AWS access key id", "AKIA", "[0-9A-Z]{16}", ("AKIA",)),
    ("a GitHub token", "gh[pousr]_", "[A-Za-z0-9]{30,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ("a GitHub token", "github_pat_", "[A-Za-z0-9_]{30,}", ("github_pat_",)),
    ("a GitLab token", "glpat-", "[A-Za-z0-9_-]{20,}", ("glpat-",)),
    ("a Google API key", "AIza", "[0-9A-Za-z_-]{35}", ("AIza",)),
    ("a Slack token", "xox[abposr]-", "[A-Za-z0-9-]{10,}", ("xox",)),
    ("a Hugging Face token", "hf_", "[A-Za-z0-9]{30,}", ("hf_",)),
    ("an npm token", "npm_", "[A-Za-z0-9]{36}", ("npm_",)),
    ("a Stripe key", "[rs]k_live_", "[A-Za-z0-9]{20,}", ("k_live_",)),
    ("a JSON Web Token", "eyJ", "[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}", ("eyJ",)),
)
# The word start is checked after the prefix (a look-behind first would cost each position of a
# megabyte body a test; after a literal, the search for it is fast).
_SHAPE_PATTERNS = [f"{prefix}(?<![A-Za-z0-9_-]{prefix}){rest}" for _, prefix, rest, _ in _SHAPES]
_KEY_LITERALS = tuple(literal for shape in _SHAPES for literal in shape[3])
"""A text holding none of these holds no key shape."""


@functools.cache
def _key_shape() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pattern})" for pattern in _SHAPE_PATTERNS))


# Each shape on its own, as text and as bytes, compiled on first use: most commands never need them,
# and compiling 24 patterns is a millisecond or two of every start.
@functools.cache
def _shape_names() -> list[tuple[str, re.Pattern[str]]]:
    return [(shape[0], re.compile(pattern)) for shape, pattern in zip(_SHAPES, _SHAPE_PATTERNS, strict=True)]


@functools.cache
def _key_shapes_bytes() -> list[tuple[tuple[bytes, ...], re.Pattern[bytes]]]:
    return [
        (tuple(literal.encode() for literal in shape[3]), re.compile(pattern.encode()))
        for shape, pattern in zip(_SHAPES, _SHAPE_PATTERNS, strict=True)
    ]


_ENV_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$|^\$[A-Za-z_][A-Za-z0-9_]*$")
_MIN_SECRET = 6
"""Shorter known values are not replaced in free text: '1' would garble everything."""


def is_secret_name(name: str) -> bool:
    """Whether a variable's (or an option's) name says its value is a secret."""
    return bool(_SECRET_NAME.search(name.lstrip("-").replace("-", "_")))


def is_secret_header(name: str) -> bool:
    """Whether an HTTP header's name says its value is a credential."""
    key = name.lower()
    return key in SECRET_HEADERS or any(word in key for word in _SECRET_HEADER_WORDS)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with URL credentials, credential headers and the given secret values hidden."""
    for value in sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    # Each pattern runs only where the text holds what it cannot match without (_may_hold): a long
    # captured answer rarely does.
    may = _may_hold(text)
    if may.userinfo:
        text = _url_userinfo().sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    if may.query:
        text = _secret_query().sub(lambda m: f"{m['name']}{REDACTED}", text)
    if may.header:
        text = _header_text().sub(_header_value, text)
    if may.scheme:
        text = _scheme_token().sub(lambda m: f"{m['name']}{REDACTED}", text)
    if not any(literal in text for literal in _KEY_LITERALS):
        return text
    return _key_shape().sub(REDACTED, text)


class _May(NamedTuple):
    userinfo: bool
    query: bool
    header: bool
    scheme: bool


def _may_hold(text: str) -> _May:
    """Which patterns ``text`` may match: each needs a literal the text must hold. Case-insensitive
    names are looked for lower-cased in ASCII text only: outside ASCII a match may use another case
    folding (the Kelvin sign for k)."""
    lowered = text.lower() if text.isascii() else None
    return _May(
        "@" in text and "://" in text,
        "=" in text,
        lowered is None or any(name in lowered for name in _HEADER_NAME_PARTS),
        "Bearer" in text or "Basic" in text or "Token" in text,
    )


def redact_key_shapes(data: bytes) -> bytes:
    """``data`` with every key known by its shape hidden (bytes as they travel: a captured body).

    Each shape is searched for only where its literal prefix occurs: a megabyte of prose costs
    about a millisecond."""
    for literals, shape in _key_shapes_bytes():
        if any(literal in data for literal in literals):
            data = shape.sub(REDACTED.encode(), data)
    return data


def key_shape(text: str) -> str | None:
    """What kind of key ``text`` holds by its shape alone (``"a GitHub token"``), or None."""
    if not any(literal in text for literal in _KEY_LITERALS):
        return None
    found = _key_shape().search(text)
    if found is None:
        return None
    return next(name for name, shape in _shape_names() if shape.fullmatch(found.group(0)))


def _header_value(match: re.Match[str]) -> str:
    value = match["value"]
    scheme = re.match(r"(?:Bearer|Basic|Token)\s+", value, re.IGNORECASE)
    return match["name"] + (scheme.group(0) if scheme else "") + REDACTED


def inline_secret(text: str) -> str | None:
    """What credential ``text`` writes out literally (not as a ``${VAR}`` reference), or None."""
    may = _may_hold(text)
    for match in _url_userinfo().finditer(text) if may.userinfo else ():
        _, colon, password = match["userinfo"].partition(":")
        if colon and password and not _is_reference(password):
            return "a password in a URL (user:password@)"
    for match in _secret_query().finditer(text) if may.query else ():
        if not _is_reference(match["value"]):
            return f"a credential in a URL query ({match['name'][1:]}...)"
    for match in _header_text().finditer(text) if may.header else ():
        value = re.sub(r"^(?:Bearer|Basic|Token)\s+", "", match["value"].strip(), flags=re.IGNORECASE)
        if not _is_reference(value):
            return f"a {match['name'].strip(' :=')} header value"
    for match in _scheme_token().finditer(text) if may.scheme else ():
        if not _is_reference(match["value"]):
            return f"a {match['name'].strip()} token"
    shape = key_shape(text)
    return f"{shape} (by its shape)" if shape else None


def inline_secret_in_args(args: Sequence[str]) -> str | None:
    """What credential an argument list writes out literally: ``--token=x``, ``--api-key x``, a URL..."""
    for index, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag.startswith("-") and is_secret_name(flag):
            if eq and value and not _is_reference(value):
                return f"a literal value for {flag}"
            following = args[index + 1] if index + 1 < len(args) else ""
            if not eq and following and not following.startswith("-") and not _is_reference(following):
                return f"a literal value after {flag}"
        found = inline_secret(arg)
        if found:
            return found
    return None


def _is_reference(value: str) -> bool:
    """A value that names where the secret is (``${VAR}``, ``$VAR``) rather than holding it."""
    return bool(_ENV_REF.match(value.strip())) or value.strip().startswith("${")
