"""Heads read and written without PyYAML are exactly what PyYAML reads and writes.

:func:`~tackroom.profile.frontmatter.plain_head` and :func:`~tackroom.profile.frontmatter.dump_head`
take a short way for the common head (``key: words`` lines, lists of words) and must never differ
from PyYAML on it: whatever the fast way accepts, PyYAML's safe loader (the C one a render uses, and
the pure one) reads the same; whatever it writes, ``yaml.safe_dump`` writes byte for byte. The heads
are drawn from an alphabet of YAML's awkward characters, so most draws are ones the fast way must
refuse.
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tackroom.profile.engines.files import frontmatter
from tackroom.profile.frontmatter import dump_head, parse_head, plain, plain_head, read

AWKWARD = "aZ09 _-.,;:#'\"!?&*%@|>=+/\\()[]{}~`\t\u00e9\u2028\ufeff"
plain_words = st.from_regex(r"[A-Za-z][A-Za-z0-9 _.,;()/+=!?&%$@'\"-]{0,12}", fullmatch=True)
words = (
    plain_words  # twice: most heads real users write are plain, and those are what must not differ
    | plain_words
    | st.from_regex(r"[a-z]{1,4}[ :#'\"!&*|>-]{1,2}[a-z]{0,3}", fullmatch=True)
    | st.text(alphabet=AWKWARD, max_size=12)
    | st.sampled_from(
        [
            "yes",
            "No",
            "true",
            "OFF",
            "null",
            "y",
            "n",
            "~",
            "1e3",
            "0x1F",
            ".inf",
            "2026-12-06",
            "Use when: x",
        ]
    )
)
keys = (
    st.from_regex(r"[a-z_][a-z0-9_-]{0,6}", fullmatch=True)
    | st.text(alphabet="abXY_-09:# ", min_size=1, max_size=8)
    | st.sampled_from(["on", "yes", "<<", "=", "y", "k" * 70])
)


def pure(raw: str) -> Any:
    return yaml.load(raw, Loader=yaml.SafeLoader)


def fast(raw: str) -> Any:
    return yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@st.composite
def heads(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        key = draw(keys)
        shape = draw(st.sampled_from(["value", "list", "blank", "bare"]))
        if shape == "value":
            lines.append(f"{key}:{draw(st.sampled_from([' ', '  ', '', chr(9)]))}{draw(words)}")
        elif shape == "list":
            indent = draw(st.sampled_from(["", " ", "  ", "   "]))
            lines.append(f"{key}:")
            lines += [
                f"{indent}-{draw(st.sampled_from([' ', '  ', '']))}{draw(words)}"
                for _ in range(draw(st.integers(0, 3)))
            ]
        elif shape == "blank":
            lines.append(draw(st.sampled_from(["", " ", "# a comment", "...", "- stray"])))
        else:
            lines.append(f"{key}:")
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(heads())
@example("name: tidy\ndescription: Tidy up.\n")
@example("tools:\n- Read\n- Grep\nmodel: sonnet\n")
@example("tools:\n  - Read\n  - Grep\n")
@example("a: b\na: c\n")
@example("tools:\n- Read\n  - Grep\n")
@example("key:\n")
@example('description: don\'t say "hi", ever!\n')
def test_what_the_fast_way_reads_is_what_yaml_reads(raw: str) -> None:
    ours = plain_head(raw)
    if ours is None:
        return
    assert ours == pure(raw) == fast(raw), raw
    assert parse_head(raw) == ours


dicts = st.dictionaries(
    keys,
    words | st.booleans() | st.lists(words, max_size=3) | st.integers() | st.none(),
    max_size=5,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dicts)
@example({"name": "tidy", "description": "Tidy up.", "tools": ["Read", "Grep"], "disabled": False})
@example({"description": "a" * 500})
@example({"description": "a " * 300})
def test_what_the_fast_way_writes_is_what_yaml_writes(data: dict[str, Any]) -> None:
    expected = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    assert dump_head(data) == expected
    assert fast(dump_head(data)) == data


def test_the_common_head_takes_the_fast_way() -> None:
    head = (
        "name: code-reviewer\ndescription: Reviews code, then says what to change.\ntools:\n- Read\n- Grep\n"
    )
    assert plain_head(head) == {
        "name": "code-reviewer",
        "description": "Reviews code, then says what to change.",
        "tools": ["Read", "Grep"],
    }
    assert frontmatter(plain_head(head) or {}, "Body.\n") == f"---\n{head}---\nBody.\n"
    assert read(f"---\n{head}---\nBody.\n") == (plain_head(head), "Body.\n")


def test_what_yaml_reads_otherwise_is_refused() -> None:
    for raw in ("on: x\n", "a: yes\n", "a: 1e3\n", "a: b: c\n", "a: x #c\n", "a:\n", "a: 'q'\n", "a: x \n"):
        assert plain_head(raw) is None, raw
    assert not plain("Use when: x") and not plain("null") and not plain(" lead") and plain("Tidy up.")
