"""The key-line scanner behind provenance: lines survive multi-line values, strings and comments."""

from __future__ import annotations

import pytest

from tackroom.adapters.tomlsource import parse_toml
from tackroom.errors import ConfigError

TEXT = '''# comment with [brackets] and key = value
[adapter.x]
one_shot = [
  "-p", "{{prompt}}",   # a ] in a comment
  "]", "[",
]
template = """a = 1
[not.a.table]
"""
literal = \'\'\'
x = [\'\'\'
"quoted.key" = { a = 1, b = [1,
  2] }
dotted.sub = "s # not a comment"

[[adapter.x.detect]]
path = "a"

[[adapter.x.detect]]
path = "b"
'''


def test_lines_of_keys() -> None:
    source = parse_toml(TEXT, "f.toml")
    assert source.data["adapter"]["x"]["one_shot"][2:4] == ["]", "["]
    lines = source.lines
    assert lines[("adapter", "x")] == 2
    assert lines[("adapter", "x", "one_shot")] == 3
    assert lines[("adapter", "x", "template")] == 7
    assert lines[("adapter", "x", "literal")] == 10
    assert lines[("adapter", "x", "quoted.key")] == 12
    assert lines[("adapter", "x", "dotted", "sub")] == 14
    assert lines[("adapter", "x", "detect", "0", "path")] == 17
    assert lines[("adapter", "x", "detect", "1", "path")] == 20
    assert ("not", "a", "table") not in lines
    assert source.line_of(("adapter", "x", "quoted.key", "b")) == 12


def test_syntax_error_line() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_toml("a = 1\nb = [\nc = 3\n", "bad.toml")
    problem = caught.value.problems[0]
    assert problem.file == "bad.toml" and problem.line is not None and problem.line >= 3


def test_a_table_under_an_array_of_tables_belongs_to_its_last_element() -> None:
    text = (
        "[[a.since]]\n"  # 1
        'version = "1"\n'  # 2
        "[a.since.env]\n"  # 3
        "x = 1\n"  # 4
        "[[a.since]]\n"  # 5
        'version = "2"\n'  # 6
        "[a.since.env.set]\n"  # 7
        "y = 2\n"  # 8
        "[[a.since.detect]]\n"  # 9
        'path = "p"\n'  # 10
    )
    source = parse_toml(text, "t.toml")
    assert source.data["a"]["since"][1]["detect"] == [{"path": "p"}]
    assert source.line_of(("a", "since", "0", "env", "x")) == 4
    assert source.line_of(("a", "since", "1", "env", "set", "y")) == 8
    assert source.line_of(("a", "since", "1", "detect", "0", "path")) == 10
