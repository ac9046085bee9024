"""A capability the harness reads only when its command line names the file: ``argv`` and ``{{profile}}``.

Kimi CLI takes its subagents only from the agent spec ``--agent-file`` names, and refuses a file
that does not exist. So a capability's ``argv`` goes at one_shot's ``{{profile}}`` slot only when
the run's profile wrote that capability's file, with ``{{path}}`` the file as the harness sees it;
a run without such items passes nothing. The harness here is a real script that prints its
arguments; the load checks say what is wrong with a table that cannot work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tackroom
from runkit import SLOTS
from tackroom.adapters.resolve import load_adapters
from tackroom.errors import ConfigError
from tackroom.profile.model import Agent, Profile, Rule

LAST_LINE = json.dumps({"type": "result", "result": "ok", "usage": {"input_tokens": 1, "output_tokens": 1}})


def _adapter(config_dir: Path, tmp_path: Path, table: str, one_shot: str) -> tackroom.Adapter:
    script = tmp_path / "agent"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{tmp_path}/argv.txt"\necho \'{LAST_LINE}\'\n')
    script.chmod(0o755)
    (config_dir / "adapters.d" / "mine.toml").write_text(
        f'[adapter.mine]\nextends = "claude-code"\nexecutable = "{script}"\none_shot = [{one_shot}]\n{table}',
        encoding="utf-8",
    )
    return load_adapters(config=config_dir)["mine"]


AGENTS = '[adapter.mine.capabilities.subagents]\nargv = ["--agents-from", "{{path}}"]\n'
ONE_SHOT = f'"{{{{profile}}}}", {SLOTS}, "-p", "{{{{prompt}}}}"'


def test_the_argv_names_what_the_profile_wrote_and_only_then(config_dir: Path, tmp_path: Path) -> None:
    adapter = _adapter(config_dir, tmp_path, AGENTS, ONE_SHOT)
    agent = Agent("reviewer", "Reviews changes.", "You review.\n")
    result = tackroom.run(adapter, "hi", profile=Profile(agents=(agent,)), workdir=tmp_path, timeout_s=30)
    assert result.ok, result.error
    agents = result.run_dir / "home" / ".claude" / "agents"
    assert (tmp_path / "argv.txt").read_text().split("\n")[:3] == ["--agents-from", str(agents), "-p"]
    assert result.argv[1:3] == ("--agents-from", str(agents))
    # Rules are written, agents are not: the harness is told nothing.
    result = tackroom.run(adapter, "hi", profile=Profile(rules=(Rule("r", "Be brief.\n"),)), workdir=tmp_path)
    assert result.ok and (tmp_path / "argv.txt").read_text().split("\n")[:2] == ["-p", "hi"]


@pytest.mark.parametrize(
    ("table", "one_shot", "said"),
    [
        (AGENTS, f'{SLOTS}, "-p", "{{{{prompt}}}}"', "one_shot has no {{profile}} slot for it"),
        (AGENTS, f'"{{{{profile}}}}", "{{{{profile}}}}", {SLOTS}, "-p", "{{{{prompt}}}}"', "at most once"),
        (AGENTS.replace("{{path}}", "{{home}}"), ONE_SHOT, "unknown placeholder {{home}}"),
        (AGENTS.replace("{{path}}", "x{{path}}"), ONE_SHOT, None),
        (
            '[adapter.mine.capabilities.subagents]\npath = "~/.x"\nrender = "dir"\nformat = "markdown"\n'
            'argv = ["--a", "{{path"]\n',
            ONE_SHOT,
            "unbalanced",
        ),
    ],
)
def test_a_table_that_cannot_work_is_refused_at_load(
    config_dir: Path, tmp_path: Path, table: str, one_shot: str, said: str | None
) -> None:
    if said is None:
        _adapter(config_dir, tmp_path, table, one_shot)  # a prefix is fine: --agent-file=PATH
        return
    with pytest.raises(ConfigError) as caught:
        _adapter(config_dir, tmp_path, table, one_shot)
    assert said in str(caught.value)


def test_kimi_names_its_agent_spec_only_when_there_are_agents() -> None:
    kimi = tackroom.load_adapters()["kimi"]
    assert kimi.spec.capabilities.subagents is not None
    assert kimi.spec.capabilities.subagents.argv == ["--agent-file", "{{path}}"]
    plan = tackroom.plan_run(kimi, "hi", workdir=Path())
    assert "--agent-file" not in plan.argv
