"""Every family is registered, satisfies the interface, and every adapter lands on one."""

from __future__ import annotations

from tackroom.adapters.resolve import resolve_builtins
from tackroom.families import Family, family_names, get_family
from tackroom.families.base import PlainTextParser
from tackroom.trace.events import AssistantText, Finished


def test_every_builtin_adapter_has_a_registered_family() -> None:
    for name, adapter in resolve_builtins().items():
        family = get_family(adapter.family)
        assert isinstance(family, Family) and family.name == adapter.family, name


def test_every_family_is_used_and_makes_fresh_parsers() -> None:
    used = {adapter.family for adapter in resolve_builtins().values()}
    assert used == set(family_names())
    for name in family_names():
        family = get_family(name)
        assert family.stream, name
        assert family.parser() is not family.parser()


def test_verified_families_belong_to_verified_adapters() -> None:
    verified_adapters = {a.family for a in resolve_builtins().values() if a.spec.verified_with}
    for name in family_names():
        if get_family(name).verified:
            assert name in verified_adapters, name


def test_plain_text_parser_reports_stdout_and_nothing_invented() -> None:
    parser = PlainTextParser()
    assert parser.feed("hello") == [] and parser.feed("world") == []
    events = parser.close(0)
    assert events == [AssistantText(text="hello\nworld"), Finished(final_text="hello\nworld", ok=True)]
    assert PlainTextParser().close(2) == [Finished(final_text=None, ok=False)]
