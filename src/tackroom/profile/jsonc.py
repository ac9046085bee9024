"""JSON with comments and trailing commas, as harnesses read their settings, edited without losing either.

Gemini CLI and its forks strip ``//`` and ``/* */`` comments before parsing
their ``settings.json``, and users write trailing commas; :func:`loads` reads
what they read. Writing such a file back through ``json.dumps`` would drop the
user's comments, so :func:`set_member` edits the text instead: it replaces or
inserts one member at most two levels down (``mcpServers.<name>``,
``hooks.<Event>``) and leaves every other byte as it was. A member whose old
value holds a comment is never replaced (:class:`CommentLost`).

Nothing here recurses on the input: nesting is tracked with a counter, and
parsing deeper than :data:`MAX_DEPTH` is refused before ``json`` sees it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 256
"""Deeper than any settings file needs, and well inside what ``json`` parses without recursing out."""


class JsoncError(ValueError):
    """Text that is not JSON even with comments and trailing commas allowed."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class CommentLost(ValueError):
    """An edit would replace a value that holds a comment of the user's."""


@dataclass(frozen=True)
class _Token:
    kind: str
    """``{ } [ ] : ,``, ``string``, ``literal`` or ``comment``."""
    start: int
    end: int


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _tokens(text: str) -> list[_Token]:
    """Every token and comment of ``text``, in order (whitespace skipped)."""
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n\ufeff":
            i += 1
        elif c in "{}[]:,":
            out.append(_Token(c, i, i + 1))
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise JsoncError("unterminated string", _line(text, i))
            out.append(_Token("string", i, j + 1))
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(_Token("comment", i, j))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise JsoncError("unterminated /* comment", _line(text, i))
            out.append(_Token("comment", i, j + 2))
            i = j + 2
        else:
            j = i
            while j < n and text[j] not in ' \t\r\n{}[]:,"/':
                j += 1
            if j == i:
                raise JsoncError(f"unexpected character {text[i]!r}", _line(text, i))
            out.append(_Token("literal", i, j))
            i = j
    return out


def has_comments(text: str) -> bool:
    """Whether ``text`` holds a comment (raises :class:`JsoncError` when it is not even tokens)."""
    return any(t.kind == "comment" for t in _tokens(text))


def loads(text: str) -> Any:
    """Parse JSONC: comments and trailing commas allowed, nesting bounded; :class:`JsoncError` otherwise."""
    tokens = _tokens(text)
    chars = list(text)
    if text.startswith("\ufeff"):
        chars[0] = " "
    significant = [t for t in tokens if t.kind != "comment"]
    for t in tokens:
        if t.kind == "comment":  # blanked, not removed: offsets and lines stay where they were
            chars[t.start : t.end] = [" " if ch != "\n" else "\n" for ch in text[t.start : t.end]]
    depth = 0
    for index, t in enumerate(significant):
        if t.kind in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                raise JsoncError(f"nested more than {MAX_DEPTH} deep", _line(text, t.start))
        elif t.kind in "}]":
            depth -= 1
        elif t.kind == "," and index + 1 < len(significant) and significant[index + 1].kind in "}]":
            chars[t.start] = " "  # a trailing comma
    try:
        return json.loads("".join(chars))
    except json.JSONDecodeError as exc:
        raise JsoncError(exc.msg, exc.lineno) from exc
    except RecursionError as exc:  # pragma: no cover - MAX_DEPTH keeps json well inside its limit
        raise JsoncError("nested too deeply", 1) from exc


# -- editing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Member:
    key: str
    key_token: int
    first: int
    """Index (in the significant tokens) of the value's first token."""
    last: int


def _close(tokens: list[_Token], start: int) -> int:
    """Index of the token closing the object or array opened at ``start``."""
    depth = 0
    for index in range(start, len(tokens)):
        if tokens[index].kind in "{[":
            depth += 1
        elif tokens[index].kind in "}]":
            depth -= 1
            if depth == 0:
                return index
    raise JsoncError("unclosed object or array", 1)


def _members(text: str, tokens: list[_Token], opened: int) -> tuple[dict[str, _Member], int]:
    """The members of the object whose ``{`` is ``tokens[opened]``, and the index of its ``}``."""
    members: dict[str, _Member] = {}
    close = _close(tokens, opened)
    index = opened + 1
    while index < close:
        if tokens[index].kind == ",":
            index += 1
            continue
        key = json.loads(text[tokens[index].start : tokens[index].end])
        first = index + 2
        last = _close(tokens, first) if tokens[first].kind in "{[" else first
        members[key] = _Member(key, index, first, last)
        index = last + 1
    return members, close


def _after_line(text: str, all_tokens: list[_Token], at: int, member: str) -> str:
    """Insert ``member`` after the value ending at ``at``, on a line of its own.

    A comment after that value on its line stays with it; a trailing comma
    there moves to after the new member.
    """
    newline = text.find("\n", at)
    tail = [t for t in all_tokens if at <= t.start < (newline if newline >= 0 else len(text))]
    if newline < 0 or any(t.kind not in (",", "comment") or t.end > newline for t in tail):
        return text[:at] + ",\n" + member + text[at:]
    if any(t.kind == "," for t in tail):
        return text[: newline + 1] + member + ",\n" + text[newline + 1 :]
    return text[:at] + "," + text[at : newline + 1] + member + "\n" + text[newline + 1 :]


def _indent_of(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    line = text[start:offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def dumps(value: Any, indent: int | None = 2) -> str:
    """JSON text of ``value``; non-ASCII kept as is, unless a lone surrogate forces ``\\u`` escapes."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a "\ud83d" read from the file goes back as the escape it was
        return json.dumps(value, indent=indent, ensure_ascii=True)
    return text


def _dump(value: Any, indent: str | None) -> str:
    if indent is None:
        return dumps(value, indent=None)
    return dumps(value).replace("\n", "\n" + indent)


def set_member(text: str, path: tuple[str, ...], value: Any) -> str:
    """``text`` with the member at ``path`` (one or two keys) set to ``value``, all else kept."""
    all_tokens = _tokens(text)
    tokens = [t for t in all_tokens if t.kind != "comment"]
    if not tokens or tokens[0].kind != "{":
        raise JsoncError("not a JSON object", 1)
    opened = 0
    for depth, key in enumerate(path):
        members, close = _members(text, tokens, opened)
        rest = path[depth + 1 :]
        found = members.get(key)
        if found is None:
            nested: Any = value
            for inner in reversed(rest):
                nested = {inner: nested}
            return _insert(text, all_tokens, tokens, (opened, close), members, dumps(key) + ": ", nested)
        if not rest:
            return _replace(text, all_tokens, tokens, found, value)
        if tokens[found.first].kind != "{":
            raise JsoncError(f"{key} is not an object", _line(text, tokens[found.first].start))
        opened = found.first
    raise AssertionError("path is empty")  # pragma: no cover


def _replace(text: str, all_tokens: list[_Token], tokens: list[_Token], member: _Member, value: Any) -> str:
    start, end = tokens[member.first].start, tokens[member.last].end
    if any(t.kind == "comment" and start <= t.start < end for t in all_tokens):
        raise CommentLost(f"the value of {member.key!r} holds a comment that replacing it would lose")
    indent = _indent_of(text, tokens[member.key_token].start)
    return text[:start] + _dump(value, indent) + text[end:]


def _insert(
    text: str,
    all_tokens: list[_Token],
    tokens: list[_Token],
    span: tuple[int, int],
    members: dict[str, _Member],
    key: str,
    value: Any,
) -> str:
    """Add ``key`` (already ``"name": ``) as the last member of the object ``tokens[span[0]:span[1]]``."""
    opened, close = span
    if members:
        last = max(members.values(), key=lambda m: m.last)
        at = tokens[last.last].end
        if "\n" not in text[tokens[opened].start : tokens[close].start]:  # a one-line object stays one line
            return text[:at] + ", " + key + _dump(value, None) + text[at:]
        indent = _indent_of(text, tokens[last.key_token].start)
        return _after_line(text, all_tokens, at, indent + key + _dump(value, indent))
    outer = _indent_of(text, tokens[opened].start)
    indent = outer + "  "
    at = tokens[opened].end
    member = key + _dump(value, indent)
    if text[at : tokens[close].start].strip():  # only comments inside: keep them after the new member
        return text[:at] + "\n" + indent + member + text[at:]
    return text[:at] + "\n" + indent + member + "\n" + outer + text[tokens[close].start :]


def remove_member(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the member at ``path`` (one or two keys), all else kept; absent: unchanged.

    The member's comma goes with it, and so does its line once nothing else is
    left on it; a comment inside the member's value is never removed
    (:class:`CommentLost`), and one after it stays where it was.
    """
    all_tokens = _tokens(text)
    tokens = [t for t in all_tokens if t.kind != "comment"]
    if not tokens or tokens[0].kind != "{":
        raise JsoncError("not a JSON object", 1)
    opened = 0
    for depth, key in enumerate(path):
        members, _ = _members(text, tokens, opened)
        found = members.get(key)
        if found is None:
            return text
        if depth + 1 < len(path):
            if tokens[found.first].kind != "{":
                return text
            opened = found.first
            continue
        start, end = tokens[found.key_token].start, tokens[found.last].end
        if any(t.kind == "comment" and start <= t.start < end for t in all_tokens):
            raise CommentLost(f"the value of {key!r} holds a comment that removing it would lose")
        spans = [(start, end)]
        after = tokens[found.last + 1] if found.last + 1 < len(tokens) else None
        before = tokens[found.key_token - 1]
        if after is not None and after.kind == ",":
            spans = [(start, after.end)]
        elif before.kind == ",":
            spans.insert(0, (before.start, before.end))
        for cut_start, cut_end in reversed(spans):
            text = text[:cut_start] + text[cut_end:]
        at = start - sum(e - s for s, e in spans if e <= start)
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", line_start)
        if line_end >= 0 and not text[line_start:line_end].strip():
            text = text[:line_start] + text[line_end + 1 :]
        return text
    raise AssertionError("path is empty")  # pragma: no cover
