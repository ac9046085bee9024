"""Aider's rules (engine ``aider-conf``): a document that ``~/.aider.conf.yml`` names under ``read:``.

Aider 0.86.2 reads no rules file by itself; the files its config names under ``read:`` reach the
model as read-only context. tackroom writes the home's config; a project's is read on import. The
fixture is a project's config in the shape aider's sample ``.aider.conf.yml`` has (its comments, a
model, ``read:`` naming CONVENTIONS.md and a second document), as its conventions docs suggest.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import assert_adapter_conformance
from tackroom.families import get_family
from tackroom.profile.model import Profile, Rule
from tackroom.profile.render import Scope, import_native, plan_render, write

FIXTURE = Path(__file__).parent / "fixtures" / "native" / "aider" / "project"
CONF = Path(".aider.conf.yml")


@pytest.fixture(scope="module")
def aider() -> Adapter:
    return resolve_builtins()["aider"]


def test_the_family_serves_its_engine_and_the_adapter_conforms(aider: Adapter) -> None:
    assert [e.name for e in get_family("aider").engines()] == ["aider-conf"]
    assert_adapter_conformance(aider)
    assert "rules" not in aider.spec.lacks


def test_rules_land_in_a_document_the_home_config_names(aider: Adapter, tmp_path: Path) -> None:
    profile = Profile(rules=(Rule("style", "Use tabs.\n"), Rule("tests", "Run make test.\n")))
    rendered = write(plan_render(profile, aider, root=tmp_path))
    assert rendered.drops == ()
    conf = yaml.safe_load((tmp_path / CONF).read_text(encoding="utf-8"))
    # Under ~: aider resolves a relative entry against its working directory, the project.
    assert conf == {"read": ["~/.aider.rules.md"]}
    assert "Use tabs." in (tmp_path / ".aider.rules.md").read_text(encoding="utf-8")
    assert import_native(aider, root=tmp_path).profile.rules == profile.rules


def test_a_projects_config_is_the_users_so_rules_are_written_at_home_only(
    aider: Adapter, tmp_path: Path
) -> None:
    rendered = plan_render(Profile(rules=(Rule("style", "x\n"),)), aider, root=tmp_path, scope="project")
    assert [(d.kind, d.name, d.reason) for d in rendered.drops] == [
        ("rule", "style", "no project-level rules")
    ]


def test_no_rules_write_no_config(aider: Adapter, tmp_path: Path) -> None:
    write(plan_render(Profile(), aider, root=tmp_path))
    assert not (tmp_path / CONF).exists()


@settings(max_examples=30, deadline=None)
@given(
    rules=st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True),
        st.text(st.characters(codec="utf-8", exclude_characters="\r\x00"), min_size=1, max_size=60).map(
            lambda t: t.strip() + "\n"
        ),
        min_size=1,
        max_size=4,
    ),
    name=st.sampled_from(["first", "second"]),
)
def test_rules_round_trip_the_same_bytes_wherever_the_home_is(
    aider: Adapter, rules: dict[str, str], name: str
) -> None:
    profile = Profile(rules=tuple(Rule(n, t) for n, t in sorted(rules.items()) if t.strip()))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / name
        write(plan_render(profile, aider, root=root))
        assert import_native(aider, root=root).profile.rules == profile.rules
        assert "/" + name not in (root / CONF).read_text(encoding="utf-8")


def test_a_projects_own_config_imports_its_documents_and_names_its_options(aider: Adapter) -> None:
    found = import_native(aider, root=FIXTURE, scope="project")
    assert [(r.name, r.text.splitlines()[0]) for r in found.profile.rules] == [
        ("conventions", "# Coding conventions"),
        ("style", "# Style"),
    ]
    assert sorted((d.kind, d.name) for d in found.dropped) == [
        ("setting", "auto-commits"),
        ("setting", "dark-mode"),
        ("setting", "model"),
    ]


def test_the_projects_documents_render_into_a_home_that_imports_the_same(
    aider: Adapter, tmp_path: Path
) -> None:
    found = import_native(aider, root=FIXTURE, scope="project").profile
    rendered = write(plan_render(found, aider, root=tmp_path))
    assert rendered.drops == ()
    again = import_native(aider, root=tmp_path)
    assert again.dropped == ()
    assert again.profile.rules == found.rules


@pytest.mark.parametrize(
    ("scope", "read", "why"),
    [
        ("project", "~/.aider.rules.md", "the real home"),
        ("home", "~bob/rules.md", "the real home"),
        ("home", "rules.md", "relative to wherever aider runs"),
        ("project", "/etc/passwd", "outside"),
        ("home", "/etc/passwd", "outside"),
        ("project", "../outside.md", "outside"),
        ("home", "~/../outside.md", "outside"),
        ("project", "docs", "a directory"),
        ("home", "~/docs", "a directory"),
        ("project", "missing.md", "no such file"),
    ],
)
def test_an_entry_an_import_may_not_read_is_dropped_by_name(
    aider: Adapter, tmp_path: Path, scope: Scope, read: str, why: str
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "rules.md").write_text("mine\n", encoding="utf-8")
    (tmp_path / CONF).write_text(f"read: {read}\n", encoding="utf-8")
    found = import_native(aider, root=tmp_path, scope=scope)
    assert found.profile.rules == ()
    [drop] = found.dropped
    assert (drop.kind, drop.name) == ("rule", read) and why in drop.reason


def test_each_config_reads_its_entries_as_aider_would_there(aider: Adapter, tmp_path: Path) -> None:
    """~ is the home in the home's config; a relative entry is the project's in a project's."""
    (tmp_path / "rules.md").write_text("mine\n", encoding="utf-8")
    for scope, read in (
        ("home", "~/rules.md"),
        ("project", "rules.md"),
        ("project", str(tmp_path / "rules.md")),
    ):
        (tmp_path / CONF).write_text(f"read: {read}\n", encoding="utf-8")
        found = import_native(aider, root=tmp_path, scope=scope)  # type: ignore[arg-type]
        assert found.profile.rules == (Rule("rules", "mine\n"),) and found.dropped == ()


def test_a_link_out_of_the_tree_is_never_followed(aider: Adapter, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "rules.md").symlink_to(outside)
    (project / CONF).write_text("read: rules.md\n", encoding="utf-8")
    found = import_native(aider, root=project, scope="project")
    assert found.profile.rules == ()
    assert [d.name for d in found.dropped] == ["rules.md"]


@pytest.mark.parametrize(
    "text",
    [
        "read: [1, {a: b}, null]\n",
        "- not a mapping\n",
        "read: [unclosed\n",
        "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nread: [*c, *c]\n",
    ],
)
def test_a_hostile_config_is_dropped_by_name_never_raised(aider: Adapter, tmp_path: Path, text: str) -> None:
    (tmp_path / CONF).write_text(text, encoding="utf-8")
    found = import_native(aider, root=tmp_path, scope="project")
    assert found.profile.rules == ()
    assert found.dropped
    assert all(len(d.name) <= 80 for d in found.dropped)
