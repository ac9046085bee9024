"""Detection reads a stranger's repository: links, loops, FIFOs and odd marker paths are hostile.

Hypothesis plants trees of marker names as files, directories, FIFOs and links
(to another marker, into a sibling ``outside`` directory that holds every
marker too, to the root, its parent, themselves, nowhere). Whatever it plants,
detection answers without raising or hanging, counts only markers that really
are a file or a directory inside the repository, counts each of those, and
calls two markers one signal only when they are one file or the same bytes.
Marker paths themselves (operator data) are fuzzed too: none reaches outside.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hostile.fuzz import FUZZ
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.adapters.schema import DetectMarker
from tackroom.detect import detect

NAMES = (".claude", "CLAUDE.md", "AGENTS.md", ".codex", ".agents", "GEMINI.md", ".github", ".github/hooks")
CONTENTS = (b"", b"same text\n", b"other text\n")
TARGETS = st.sampled_from(
    [*NAMES, "../outside/.claude", "../outside/AGENTS.md", "OUTSIDE", "ROOT", ".", "..", "SELF", "missing"]
)
KINDS = st.one_of(
    st.tuples(st.just("file"), st.sampled_from(CONTENTS)),
    st.tuples(st.just("dir"), st.none()),
    st.tuples(st.just("fifo"), st.none()),
    st.tuples(st.just("link"), TARGETS),
)
TREES = st.dictionaries(st.sampled_from(NAMES), KINDS, max_size=7)


def plant(root: Path, outside: Path, tree: dict[str, tuple[str, object]]) -> None:
    for name in sorted(tree):  # parents before children
        kind, arg = tree[name]
        path = root / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                path.write_bytes(arg)  # type: ignore[arg-type]
            elif kind == "dir":
                path.mkdir()
            elif kind == "fifo":
                os.mkfifo(path)
            else:
                path.symlink_to(_target(str(arg), name, root, outside))
        except OSError:
            continue  # a parent is a file, a FIFO or a dangling link: the tree simply lacks this entry


def _target(arg: str, name: str, root: Path, outside: Path) -> str:
    special = {"OUTSIDE": str(outside / ".claude"), "ROOT": str(root), "SELF": Path(name).name}
    return special.get(arg, arg)


def outside_world(tmp: Path) -> Path:
    """A sibling of the repository holding every marker: a link out would find them all."""
    outside = tmp / "outside"
    for name in NAMES:
        (outside / name).parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".md"):
            (outside / name).write_bytes(b"same text\n")
        else:
            (outside / name).mkdir(exist_ok=True)
    return outside


def really_inside(root: Path, name: str) -> bool:
    """What a careful reader would count: the path resolves inside the root, to a file or a directory."""
    real = Path(os.path.realpath(root / name))
    if real == root or root not in real.parents:
        return False
    return real.is_file() or real.is_dir()


@FUZZ
@given(tree=TREES)
def test_detection_counts_exactly_what_is_inside(tree: dict[str, tuple[str, object]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        root = base / "repo"
        (root / ".git").mkdir(parents=True)
        outside = outside_world(base)
        plant(root, outside, tree)
        found = detect(root, resolve_builtins())
        counted = {m.path for match in found.matches for m in match.markers}
        for path in counted:
            assert really_inside(root, path), path
        for name in NAMES:
            if really_inside(root, name) and not _leaves_on_the_way(root, name):
                # Counted itself, or as one name of a mirrored file another of its names stands for.
                mirrored = any(name in group and counted & set(group) for group in found.mirrors)
                assert name in counted or mirrored or name not in _marker_paths(), name
        for group in found.mirrors:
            _one_signal(root, group)


def _marker_paths() -> set[str]:
    return {m["path"] for a in resolve_builtins().values() for m in a.effective.get("detect", ())}


def _leaves_on_the_way(root: Path, name: str) -> bool:
    """Whether resolving ``name`` passes through a link that points out of the root (even to come back)."""
    path = root
    for part in Path(name).parts:
        path = path / part
        if path.is_symlink():
            target = path.readlink()
            if target.is_absolute() or ".." in target.parts or _leaves_on_the_way(root, str(target)):
                return True
    return False


def _one_signal(root: Path, group: tuple[str, ...]) -> None:
    paths = [Path(os.path.realpath(root / name)) for name in group]
    if all(p.is_file() for p in paths):
        assert len({p.read_bytes() for p in paths}) == 1, group
    else:
        assert len({p.stat().st_ino for p in paths}) == 1, group


HOSTILE_PATHS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "/etc/passwd",
            "../outside/.claude",
            "a/../../outside/AGENTS.md",
            "~/.claude",
            "x\0y",
            "a\\..\\..\\outside",
            "." * 300,
            "x/" * 50,
            "",
            ".",
            "./.",
            "outside",
        ]
    ),
)


def adapter_with(paths: list[str]) -> Adapter:
    base = resolve_builtins()["aider"].spec
    spec = base.model_copy(update={"detect": [DetectMarker(path=p, score=5) for p in paths]})
    return Adapter.from_spec("hostile", spec, "aider", "test", {})


@FUZZ
@given(paths=st.lists(HOSTILE_PATHS, min_size=1, max_size=5))
def test_marker_paths_from_operator_data_never_reach_outside(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        root = base / "repo"
        (root / ".git").mkdir(parents=True)
        outside_world(base)
        (root / "inside").mkdir()
        (root / "outside").symlink_to(base / "outside")
        found = detect(root, {"hostile": adapter_with(paths)})
        for match in found.matches:
            for marker in match.markers:
                assert really_inside(root, marker.path), marker.path
