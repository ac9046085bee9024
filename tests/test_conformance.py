"""The conformance kit: every built-in passes every check, and each check catches its defect.

Each defect is an operator file with exactly that defect, checked as ``tackroom
adapters check FILE`` checks it: the finding names the check, the key, and the
file and line the defect was written on. A defect the load itself refuses (a
renderer on the wrong capability) is a finding of the ``load`` check; the kit's
own ``renderers`` check catches it on an adapter built in code. An operator
file cannot select a family, so the family check is shown on a family that a
third party registers through the entry-point group.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import (
    CHECKS,
    Finding,
    assert_adapter_conformance,
    assert_adapter_loads_hooks,
    check_adapter_conformance,
    check_file,
    family_problems,
)
from tackroom.errors import ConformanceError, TackroomError
from tackroom.families.base import Family, PlainTextParser, StreamParser

BUILTINS = sorted(resolve_builtins())


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_passes_every_check(name: str) -> None:
    adapter = resolve_builtins()[name]
    assert check_adapter_conformance(adapter) == []
    assert_adapter_conformance(adapter)
    if adapter.spec.capabilities.hooks is not None:
        assert_adapter_loads_hooks(adapter)


# (file text after the [adapter.NAME] header, check, key under adapter.NAME, line, part of the message)
DEFECTS = {
    "duplicate-event": (
        'extends = "claude-code"\n[adapter.x.capabilities.hooks.events]\n'
        'session-start = "Start"\nprompt-submit = "Start"\n',
        "hook-maps",
        "capabilities.hooks.events.prompt-submit",
        6,
        "both map to 'Start'",
    ),
    "no-events": (
        'extends = "aider"\n[adapter.x.capabilities.hooks]\npath = "~/.aider/hooks.json"\n'
        'render = "claude-settings"\nevents = {}\n',
        "hook-maps",
        "capabilities.hooks.events",
        7,
        "no moment is mapped",
    ),
    "channel-at-an-unmapped-moment": (
        'extends = "qwen"\n[adapter.x.capabilities.hooks.inject]\nmoments = ["session-end"]\n',
        "hook-maps",
        "capabilities.hooks.inject.moments",
        5,
        "session-end not in hooks.events",
    ),
    "two-tools-one-name": (
        'extends = "claude-code"\n[adapter.x.tools]\nread_file = "Bash"\n',
        "tool-vocabulary",
        "tools.read_file",
        5,
        "'read_file' and 'shell' are both 'Bash'",
    ),
    "hook-rename-of-a-tool-it-lacks": (
        'extends = "pi"\n[adapter.x.capabilities.hooks.tool_names]\nsubagent = "task"\n',
        "tool-vocabulary",
        "capabilities.hooks.tool_names.subagent",
        5,
        "gives the harness no such tool",
    ),
    "mcp-pattern-the-mock-rejects": (
        'extends = "claude-code"\n[adapter.x.tools]\nmcp = "mcp__{server}"\n',
        "tool-vocabulary",
        "tools.mcp",
        5,
        "the mock cannot use this vocabulary",
    ),
    "option-undoes-isolation": (
        'extends = "claude-code"\n[adapter.x.options]\n'
        'model = { argv = ["--model", "{{value}}"], env = { HOME = "/srv/{{value}}" } }\n',
        "templates",
        "options.model.env.HOME",
        5,
        "sets HOME, which isolates the run's home",
    ),
    "endpoint-needs-a-model-it-lacks": (
        'extends = "claude-code"\n[adapter.x.model_endpoint.env]\nANTHROPIC_MODEL = "{{model}}"\n',
        "templates",
        "model_endpoint.env.ANTHROPIC_MODEL",
        5,
        "sets no default model",
    ),
    "marker-outside-the-repository": (
        'extends = "claude-code"\n[[adapter.x.detect]]\npath = "../.claude"\nscore = 10\n',
        "detect",
        "detect.0.path",
        4,
        "must be a plain relative path inside the repository",
    ),
    "frontmatter-overrides-what-the-engine-writes": (
        'extends = "claude-code"\n[adapter.x.capabilities.commands]\n'
        'frontmatter = { description = "fixed" }\n',
        "round-trip",
        "capabilities.commands",
        5,
        "'conformance-command' comes back with description 'fixed'",
    ),
    "inject-without-its-text": (
        'extends = "claude-code"\n[adapter.x.capabilities.hooks.inject]\ntemplate = "echo advice"\n',
        "hooks-load",
        "capabilities.hooks",
        5,
        "comes back with action 'command' instead of 'inject'",
    ),
    "renderer-on-the-wrong-capability": (
        'extends = "claude-code"\n[adapter.x.capabilities.rules]\nrender = "dir"\n',
        "load",
        "capabilities.rules.render",
        5,
        "renderer 'dir' writes commands, skills, subagents, not rules",
    ),
}


def operator_file(tmp_path: Path, body: str, name: str = "x") -> Path:
    path = tmp_path / "drafts" / "20-x.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"# an operator's draft\n[adapter.{name}]\n{body}", encoding="utf-8")
    return path


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_check_catches_its_defect_with_file_and_line(
    config_dir: Path, tmp_path: Path, defect: str
) -> None:
    body, check, key, line, message = DEFECTS[defect]
    path = operator_file(tmp_path, body)
    report = check_file(path, config=config_dir)
    assert not report.ok
    mine = [f for f in report.findings if f.check == check and f.key == f"adapter.x.{key}"]
    assert mine, "\n".join(map(str, report.findings))
    assert (mine[0].file, mine[0].line) == (str(path), line)
    assert message in mine[0].message
    assert f"{path}:{line}: adapter.x.{key}: " in str(mine[0]) and str(mine[0]).endswith(f"[{check}]")


def test_the_same_adapter_without_the_defect_passes(config_dir: Path, tmp_path: Path) -> None:
    """The defect files differ from a passing variant only in the defect."""
    report = check_file(operator_file(tmp_path, 'extends = "claude-code"\nexecutable = "/opt/claude"\n'))
    assert report.ok and report.checked == (("x", str(tmp_path / "drafts" / "20-x.toml")),)


def spec_with(name: str, **changes: object) -> Adapter:
    base = resolve_builtins()[name]
    spec = base.spec.model_copy(update=changes)
    return Adapter.from_spec(f"{name}-built-in-code", spec, name, "test", {})


def test_renderers_check_catches_an_adapter_built_in_code() -> None:
    base = resolve_builtins()["claude-code"].spec
    rules = base.capabilities.rules
    assert rules is not None
    caps = base.capabilities.model_copy(update={"rules": rules.model_copy(update={"render": "dir"})})
    [finding] = check_adapter_conformance(spec_with("claude-code", capabilities=caps), checks=["renderers"])
    assert finding.key == "adapter.claude-code-built-in-code.capabilities.rules.render"
    assert "renderer 'dir' writes commands, skills, subagents, not rules" in finding.message
    # No provenance (built in code): the finding names the source the author gave.
    assert (finding.file, finding.line) == ("test", None) and str(finding).startswith("test: adapter.claude")


def test_family_check_names_an_unregistered_family() -> None:
    [finding] = check_adapter_conformance(spec_with("aider", family="nosuch"), checks=["family"])
    assert finding.key.endswith(".family") and "no family 'nosuch' is registered" in finding.message


class Hollow(Family):
    name = "hollow"
    stream = "nothing"

    def parser(self) -> StreamParser:
        return StreamParser()  # the base parser: it reads nothing


class Shared(Family):
    name = "shared"
    stream = "plain text"
    one = PlainTextParser()

    def parser(self) -> PlainTextParser:
        return self.one


class Fragile(Family):
    name = "fragile"

    def parser(self) -> PlainTextParser:
        class Breaks(PlainTextParser):
            def feed(self, line: str) -> list:  # type: ignore[type-arg]
                return [] if not line.startswith("{") else [line.split()[5]]

        return Breaks()


def test_family_problems_name_what_keeps_a_family_from_parsing() -> None:
    class Mute(Family):  # no parser at all: Family is abstract, so it cannot even be made
        name = "mute"

    with pytest.raises(TypeError, match="abstract method parser"):
        Mute()  # type: ignore[abstract]
    assert family_problems(Hollow()) == [
        "family 'hollow' has no stream parser: its parser reads nothing; override Family.parser()"
    ]
    assert family_problems(Shared()) == [
        "family 'shared'.parser() returns the same parser twice: each run needs a fresh one"
    ]
    problems = family_problems(Fragile())
    assert problems[0] == "family 'fragile' does not say which stream it parses (Family.stream)"
    assert "raised IndexError on a line any harness may print" in problems[1]


HOLLOW = """
from tackroom.families.base import Family

class Hollow(Family):
    name = "hollow"
    stream = "nothing"

FAMILY = Hollow()
"""

CHECK_HOLLOW = """
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import check_adapter_conformance
spec = resolve_builtins()["aider"].spec.model_copy(update={"family": "hollow"})
adapter = Adapter.from_spec("hollow-cli", spec, "aider", "test", {})
for finding in check_adapter_conformance(adapter, checks=["family"]):
    print(finding)
"""


def test_a_third_party_family_without_a_stream_parser_fails_the_family_check(tmp_path: Path) -> None:
    """Registered through the entry-point group a third party uses, in a process of its own."""
    (tmp_path / "hollow_family.py").write_text(HOLLOW, encoding="utf-8")
    info = tmp_path / "hollow_family-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hollow-family\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[tackroom.families]\nhollow = hollow_family:FAMILY\n")
    done = subprocess.run(
        [sys.executable, "-c", CHECK_HOLLOW],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # A family without a parser cannot be made, so it does not load; the other families still do.
    assert done.stdout.strip() == (
        "test: adapter.hollow-cli.family: family 'hollow' (hollow_family:FAMILY) cannot be made: "
        "Can't instantiate abstract class Hollow with abstract method parser [family]"
    )


def test_assertions_raise_a_conformance_error_that_is_an_assertion(config_dir: Path, tmp_path: Path) -> None:
    body = DEFECTS["inject-without-its-text"][0]
    path = operator_file(tmp_path, body)
    installed = config_dir / "adapters.d" / path.name
    installed.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    from tackroom.adapters.resolve import load_adapters

    adapter = load_adapters()["x"]
    with pytest.raises(ConformanceError) as caught:
        assert_adapter_loads_hooks(adapter)
    assert isinstance(caught.value, AssertionError) and isinstance(caught.value, TackroomError)
    assert [f.check for f in caught.value.findings] == ["hooks-load"]
    # Under the hooks table, the line the operator wrote (the template) is the one named.
    assert str(caught.value).startswith(f"adapter 'x' fails 1 conformance check(s):\n  {installed}:5: ")
    with pytest.raises(ConformanceError) as every:
        assert_adapter_conformance(adapter)
    assert {f.check for f in every.value.findings} == {"hook-maps", "round-trip", "hooks-load"}
    with pytest.raises(ConformanceError, match="declares no hooks capability"):
        assert_adapter_loads_hooks(resolve_builtins()["aider"])


def test_an_unknown_check_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown checks"):
        check_adapter_conformance(resolve_builtins()["aider"], checks=["nosuch"])


# -- the CLI -------------------------------------------------------------------------------


def test_adapters_check_passes_every_builtin() -> None:
    done = run_cli("adapters", "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"{len(BUILTINS)} adapter(s) pass all {len(CHECKS)} checks: renderers,")
    as_json = json.loads(run_cli("adapters", "check", "--json", "codex").stdout)
    assert as_json == {
        "ok": True,
        "checks": list(CHECKS),
        "adapters": [{"name": "codex", "source": "builtin", "ok": True}],
        "findings": [],
    }


def test_adapters_check_file_prints_each_failure_with_file_and_line(config_dir: Path, tmp_path: Path) -> None:
    path = operator_file(tmp_path, DEFECTS["two-tools-one-name"][0])
    done = run_cli("adapters", "check", str(path), "codex")
    assert done.returncode == 1 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"{path}:5: adapter.x.tools.read_file: 'read_file' and 'shell' are both 'Bash' in the model's tools: "
        "a subagent's or hook's tool read back could not say which it was [tool-vocabulary]"
    )
    assert lines[-1] == "2 failure(s); 1 of 2 adapter(s) checked fail"
    data = json.loads(run_cli("adapters", "check", "--json", str(path)).stdout)
    assert data["ok"] is False and data["adapters"] == [{"name": "x", "source": str(path), "ok": False}]
    assert data["findings"][0] == {
        "check": "tool-vocabulary",
        "adapter": "x",
        "key": "adapter.x.tools.read_file",
        "message": lines[0].split(": ", 2)[2].removesuffix(" [tool-vocabulary]"),
        "file": str(path),
        "line": 5,
        "via": None,
    }


def test_adapters_check_file_is_checked_beside_the_installed_files(config_dir: Path, tmp_path: Path) -> None:
    installed = config_dir / "adapters.d" / "20-x.toml"
    installed.write_text('[adapter.x]\nextends = "codex"\n', encoding="utf-8")
    (config_dir / "adapters.d" / "30-y.toml").write_text('[adapter.y]\nextends = "x"\n', encoding="utf-8")
    draft = operator_file(
        tmp_path, 'extends = "claude-code"\n'
    )  # drafts/20-x.toml: replaces the installed one
    assert check_file(draft, config=config_dir).ok
    other = tmp_path / "drafts" / "40-z.toml"
    other.write_text('[adapter.z]\nextends = "y"\n\n[adapter.x]\nextends = "pi"\n', encoding="utf-8")
    report = check_file(other, config=config_dir)
    [problem] = report.findings
    assert (problem.check, problem.adapter, problem.file, problem.line) == ("load", "x", str(other), 4)
    assert f"also defined in {installed}" in problem.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[adapter.x\n", "TOML syntax error"),
        (b"\xff\xfe", "not UTF-8"),
        (b"title = 'no adapters'\n", "no [adapter.<name>] tables to check"),
    ],
)
def test_a_file_that_cannot_be_checked_is_a_load_finding(
    config_dir: Path, tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    done = run_cli("adapters", "check", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert message in done.stdout and "[load]" in done.stdout
    missing = run_cli("adapters", "check", str(tmp_path / "missing.toml"))
    assert missing.returncode == 1 and "cannot read" in missing.stdout


def test_values_from_operator_files_are_printed_as_written(config_dir: Path, tmp_path: Path) -> None:
    path = operator_file(
        tmp_path, 'extends = "aider"\n[[adapter.x.detect]]\npath = "/[red]x[/red]"\nscore = 1\n'
    )
    done = run_cli("adapters", "check", str(path))
    assert done.returncode == 1 and "'/[red]x[/red]' must be a plain relative path" in done.stdout


def test_an_unknown_adapter_name_is_an_error() -> None:
    done = run_cli("adapters", "check", "nosuch")
    assert done.returncode == 1 and done.stderr.startswith("tackroom: error: unknown adapter 'nosuch'")


def test_findings_print_like_load_errors() -> None:
    finding = Finding("detect", "x", "adapter.x.detect", "bad", "f.toml", 3, "extends codex")
    assert str(finding) == "f.toml:3: adapter.x.detect: bad [detect] (extends codex)"
    assert textwrap.dedent(str(Finding("family", "y", "adapter.y.family", "none"))) == (
        "adapter 'y': adapter.y.family: none [family]"
    )
