"""Fuzzing the profile loader and every settings file tackroom merges into or imports from.

Random bytes, mutated valid files and random JSON/TOML shapes go into a
profile directory, or into a harness's native files (settings JSON, JSONC,
codex TOML, subagent and command files, the generated plugin and extension
modules, Copilot's hook file); loading, importing and rendering over them must
end in one of tackroom's typed errors or succeed, never in another exception.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.errors import ConfigError, TackroomError
from tackroom.profile import jsonc
from tackroom.profile.load import load_profile
from tackroom.profile.model import Profile
from tackroom.profile.render import import_profile, plan_render, write

MARKERS = Path(__file__).resolve().parent.parent / "profiles" / "markers"


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def lay_out(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@st.composite
def mutated(draw: st.DrawFn, valid: bytes) -> bytes:
    """``valid`` with a few random edits: bytes inserted, deleted, replaced or a slice repeated."""
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["insert", "delete", "replace", "repeat"]))
        if edit == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8) | st.sampled_from(SPECIAL))
        elif edit == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif edit == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 32))] * draw(st.integers(1, 3))
    return bytes(data)


SPECIAL = [
    b"---\n",
    b"\n---\n",
    b"[",
    b"{",
    b"]]",
    b'"',
    b"\\",
    b"//",
    b"/*",
    b",",
    b"\xff",
    b"\xed\xa0\xbd",
    b'"\\ud83d"',
    b"null",
    b"- x\n",
    b": ",
    b"../",
    b"# tackroom:hook ../../x",
    b"[servers.x]\n",
    b"&a [*a]",
]

KEYS = st.sampled_from(
    [
        *("mcpServers", "mcp", "mcp_servers", "hooks", "command", "args", "env", "url", "httpUrl", "headers"),
        *("type", "matcher", "Stop", "PreToolUse", "bash", "version", "enabled", "environment", "name"),
        *("env_vars", "http_headers", "description", "prompt", "tools", "../../x", "x"),
    ]
)
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=12)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)
TOML_VALUES = st.recursive(
    st.booleans() | st.integers(-5, 5) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=15,
)


# -- the profile loader ------------------------------------------------------------------------------


@cache
def marker_files() -> dict[str, bytes]:
    return files_of(MARKERS)


@cache
def harness_names() -> frozenset[str]:
    return frozenset(resolve_builtins())


@FUZZ
@given(st.data())
def test_the_loader_gives_only_config_errors_on_mutated_profiles(data: st.DataObject) -> None:
    files = dict(marker_files())
    rel = data.draw(st.sampled_from(sorted(files)))
    files[rel] = data.draw(mutated(files[rel]) | st.binary(max_size=200))
    with tempfile.TemporaryDirectory() as tmp:
        lay_out(Path(tmp), files)
        try:
            load_profile([Path(tmp)], harnesses=harness_names())
        except ConfigError as exc:
            assert exc.problems and all(p.file.startswith(tmp) for p in exc.problems)


@FUZZ
@given(
    st.sampled_from(["mcp.toml", "hooks.toml"]),
    st.dictionaries(st.sampled_from(["servers", "hooks", "x"]), TOML_VALUES, max_size=3),
)
def test_the_loader_gives_only_config_errors_on_any_toml_shape(name: str, document: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / name).write_text(tomli_w.dumps(document), encoding="utf-8")
        with contextlib.suppress(ConfigError):
            load_profile([Path(tmp)], harnesses=harness_names())


@FUZZ
@given(st.sampled_from(["rules/r.md", "agents/a.md", "commands/c.md", "skills/s/SKILL.md"]), JSON_VALUES)
def test_the_loader_gives_only_config_errors_on_any_frontmatter(rel: str, value: Any) -> None:
    import yaml

    text = "---\n" + yaml.safe_dump(value) + "---\nbody\n"
    with tempfile.TemporaryDirectory() as tmp:
        lay_out(Path(tmp), {rel: text.encode("utf-8", "surrogatepass")})
        with contextlib.suppress(ConfigError):
            load_profile([Path(tmp)], harnesses=harness_names())


# -- native files: import from them, merge into them --------------------------------------------------


@cache
def markers() -> Profile:
    return load_profile([MARKERS], harnesses=harness_names())


@cache
def rendered(adapter: str) -> dict[str, bytes]:
    """Every file a render of the marker profile writes for ``adapter`` (the ownership file left out)."""
    with tempfile.TemporaryDirectory() as tmp:
        write(plan_render(markers(), resolve_builtins()[adapter], root=Path(tmp)))
        return {k: v for k, v in files_of(Path(tmp)).items() if k != ".tackroom-owned.json"}


@cache
def adapters_with_files() -> list[str]:
    return sorted(name for name in resolve_builtins() if rendered(name))


def shaped(rel: str) -> st.SearchStrategy[bytes]:
    """Random documents of the file's own format."""
    if rel.endswith(".toml"):
        return st.dictionaries(KEYS, TOML_VALUES, max_size=4).map(lambda d: tomli_w.dumps(d).encode())
    if rel.endswith((".json", ".jsonc")):
        return JSON_VALUES.map(lambda v: json.dumps(v).encode())
    return st.binary(max_size=300)


def outcome(adapter: Adapter, root: Path) -> None:
    """Import, then render over what is there: each may refuse with a typed error, nothing else."""
    with contextlib.suppress(TackroomError):
        import_profile(adapter, root=root)
    with contextlib.suppress(TackroomError):
        write(plan_render(markers(), adapter, root=root))


@FUZZ
@given(st.data())
def test_import_and_merge_give_only_typed_errors_on_mutated_native_files(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(adapters_with_files()))
    files = dict(rendered(name))
    rel = data.draw(st.sampled_from(sorted(files)))
    files[rel] = data.draw(mutated(files[rel]) | shaped(rel))
    with tempfile.TemporaryDirectory() as tmp:
        lay_out(Path(tmp), files)
        outcome(resolve_builtins()[name], Path(tmp))


@FUZZ
@given(st.data())
def test_import_and_merge_give_only_typed_errors_on_user_settings(data: st.DataObject) -> None:
    """A settings file the user wrote (tackroom owns nothing yet), of any shape, with or without comments."""
    name = data.draw(st.sampled_from(adapters_with_files()))
    merged = [rel for rel in rendered(name) if rel.endswith((".json", ".toml"))]
    if not merged:
        return
    rel = data.draw(st.sampled_from(merged))
    body = data.draw(shaped(rel))
    if rel.endswith(".json") and data.draw(st.booleans()):
        body = b"// the user's comment\n" + body.replace(b",", b", /* c */", 1)
    with tempfile.TemporaryDirectory() as tmp:
        lay_out(Path(tmp), {rel: body})
        outcome(resolve_builtins()[name], Path(tmp))


# -- JSONC ---------------------------------------------------------------------------------------------


@FUZZ
@given(st.text(max_size=80) | st.binary(max_size=80).map(lambda b: b.decode("latin-1")))
def test_jsonc_reads_any_text_or_refuses_it_typed(text: str) -> None:
    try:
        jsonc.loads(text)
    except jsonc.JsoncError as exc:
        assert exc.line >= 1


@FUZZ
@given(
    st.dictionaries(KEYS, JSON_VALUES, max_size=4),
    st.lists(KEYS, min_size=1, max_size=2).map(tuple),
    JSON_VALUES,
    st.booleans(),
)
def test_jsonc_edits_keep_comments_and_mean_what_they_say(
    document: dict[str, Any], path: tuple[str, ...], value: Any, commented: bool
) -> None:
    text = json.dumps(document, indent=2)
    if commented:
        text = "// head\n" + text.replace("\n", " /* c */\n", 1)
    parent = document.get(path[0], {}) if len(path) == 2 else document
    if not isinstance(parent, dict):
        return  # a member of something that is not an object: the merge refuses or replaces it whole
    try:
        edited = jsonc.set_member(text, path, value)
    except jsonc.CommentLost:
        return
    expected = json.loads(json.dumps(document))
    target = expected.setdefault(path[0], {}) if len(path) == 2 else expected
    target[path[-1]] = value
    assert jsonc.loads(edited) == expected
    for comment in ("// head", "/* c */"):
        assert (comment in text) == (comment in edited)
