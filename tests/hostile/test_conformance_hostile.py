"""The conformance kit reads operator data (``adapters check FILE``): fuzzed, it only ever reports findings.

Hypothesis builds adapters whose tools, options, endpoint, detection markers
and hooks hold whatever the schema lets through (quotes, braces, newlines,
empty names, duplicates, templates that never render) and runs the checks on
them: each check returns findings, it never raises, and every finding names
a key of that adapter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from hostile.fuzz import FUZZ
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.adapters.schema import AdapterSpec
from tackroom.conformance import Finding, check_adapter_conformance
from tackroom.vocabulary import MOMENTS, NEUTRAL_TOOLS

TEXT = st.lists(
    st.sampled_from(list("abcXY _-./~$'\"\\\n{}[]:é✓")) | st.sampled_from(["{{text}}", "{{event}}", "%s"]),
    max_size=12,
).map("".join)
PLACEHOLDERS = st.sampled_from(["{{value}}", "{{model}}", "{{base_url}}", "{{api_key}}", "{{home}}", "x"])
ENV_NAMES = st.sampled_from(["HOME", "XDG_CONFIG_HOME", "ANTHROPIC_BASE_URL", "MODE", "CLAUDE_CONFIG_DIR"])

TOOLS = st.dictionaries(
    st.sampled_from([*NEUTRAL_TOOLS, "mcp"]),
    TEXT | st.fixed_dictionaries({"name": TEXT, "args": st.dictionaries(TEXT, TEXT, max_size=2)}),
    max_size=5,
)
OPTIONS = st.dictionaries(
    st.sampled_from(["model", "max_turns", "allowed_tools", "auto_accept", "reasoning_effort"]),
    st.lists(PLACEHOLDERS | TEXT, max_size=3)
    | st.fixed_dictionaries(
        {
            "argv": st.lists(PLACEHOLDERS, max_size=2),
            "env": st.dictionaries(ENV_NAMES, PLACEHOLDERS, max_size=2),
        }
    ),
    max_size=3,
)
ENDPOINT = st.fixed_dictionaries(
    {"wire_api": st.just("anthropic-messages"), "env": st.dictionaries(ENV_NAMES, PLACEHOLDERS, max_size=3)},
    optional={"model": TEXT, "model_format": PLACEHOLDERS},
)
DETECT = st.lists(
    st.fixed_dictionaries(
        {"path": TEXT | st.sampled_from(["../x", "/etc", "~/.claude"]), "score": st.integers(1, 100)}
    ),
    max_size=3,
)
CHANNEL = st.none() | st.fixed_dictionaries(
    {"template": TEXT}, optional={"moments": st.lists(st.sampled_from(MOMENTS), max_size=3)}
)
HOOKS = st.fixed_dictionaries(
    {
        "path": st.sampled_from(["~/.claude/settings.json", "~/ext/tackroom.ts", "~/h.json"]),
        "render": st.sampled_from(
            ["claude-settings", "gemini-settings", "copilot-hooks", "opencode-plugin", "pi-extension"]
        ),
        "events": st.dictionaries(st.sampled_from(MOMENTS), TEXT, max_size=6),
        "fields": st.dictionaries(st.sampled_from(["tool-name", "tool-file", "x"]), TEXT, max_size=2),
        "tool_names": st.dictionaries(st.sampled_from([*NEUTRAL_TOOLS, "browser"]), TEXT, max_size=2),
        "inject": CHANNEL,
        "refuse": CHANNEL,
    }
)


def built(changes: dict[str, Any], base: str = "claude-code") -> Adapter:
    """The built-in ``base`` with ``changes`` on top, built in code as an author's test would."""
    data = {**resolve_builtins()[base].effective, **changes}
    try:
        spec = AdapterSpec.model_validate(data)
    except ValidationError:
        assume(False)
        raise
    return Adapter.from_spec("fuzzed", spec, base, "fuzz.toml", {})


def only_findings(adapter: Adapter, checks: list[str]) -> None:
    findings = check_adapter_conformance(adapter, checks=checks)
    for finding in findings:
        assert isinstance(finding, Finding) and finding.check in checks
        assert finding.key.startswith("adapter.fuzzed") and finding.message


@FUZZ
@given(tools=TOOLS, options=OPTIONS, endpoint=ENDPOINT, detect=DETECT)
def test_data_checks_report_and_never_raise(
    tools: dict[str, Any], options: dict[str, Any], endpoint: dict[str, Any], detect: list[Any]
) -> None:
    changes = {"tools": tools, "options": options, "model_endpoint": endpoint, "detect": detect}
    checks = ["renderers", "hook-maps", "tool-vocabulary", "templates", "family", "detect"]
    only_findings(built(changes), checks)


@FUZZ
@given(hooks=HOOKS)
def test_hooks_checks_report_and_never_raise(hooks: dict[str, Any]) -> None:
    hooks = {k: v for k, v in hooks.items() if v is not None}
    capabilities = {**resolve_builtins()["pi"].effective["capabilities"], "hooks": hooks}
    only_findings(built({"capabilities": capabilities}, "pi"), ["hook-maps", "tool-vocabulary", "hooks-load"])


@pytest.mark.parametrize("name", sorted(resolve_builtins()))
def test_the_builtins_pass_the_fuzzed_checks(name: str) -> None:
    """The fuzz targets are held to findings only; on the built-ins there are none."""
    assert check_adapter_conformance(resolve_builtins()[name]) == []


REPEATED = """
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.adapters.schema import HookTemplate
from tackroom.conformance import check_adapter_conformance

spec = resolve_builtins()["claude-code"].spec
inject = HookTemplate(template="echo " + "{{text}}" * 14 + " Z")
hooks = spec.capabilities.hooks.model_copy(update={"inject": inject})
spec = spec.model_copy(update={"capabilities": spec.capabilities.model_copy(update={"hooks": hooks})})
adapter = Adapter.from_spec("repeated", spec, "claude-code", "test", {})
for finding in check_adapter_conformance(adapter, checks=["hook-maps", "hooks-load"]):
    print(finding.check, finding.key)
"""


def test_a_template_repeating_its_text_is_matched_in_polynomial_time(tmp_path: Path) -> None:
    """Regression: each {{text}} was its own regex group, and reading a hook back backtracked for hours.

    In a process of its own, so the old behaviour fails the test by its timeout instead of hanging it.
    """
    done = subprocess.run(
        [sys.executable, "-c", REPEATED], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["hook-maps adapter.repeated.capabilities.hooks.inject.template"]
