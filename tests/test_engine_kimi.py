"""Kimi CLI's ``kimi-hooks`` engine: ``[[hooks]]`` tables in the share dir's ``config.toml``.

Rendered into the run's home (``$KIMI_SHARE_DIR/config.toml``, beside the model the endpoint
stages there), read back exactly; the native file as a user writes it accounts for every hook.
"""

from __future__ import annotations

import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.plan import Endpoint, plan_run
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.conformance import assert_adapter_conformance, assert_adapter_loads_hooks
from tackroom.errors import TackroomError
from tackroom.families import get_family
from tackroom.profile.model import Hook, Profile
from tackroom.profile.render import Imported, import_native, plan_render, write

CONFIG = Path(".kimi/config.toml")
HOME = Path(__file__).parent / "fixtures" / "native" / "kimi" / "home"
STAGED = """default_model = "tackroom"

[providers.tackroom]
type = "openai_legacy"
base_url = "http://127.0.0.1:8765/v1"
api_key = ""

[models.tackroom]
provider = "tackroom"
model = "mock-model"
max_context_size = 128000
"""


@pytest.fixture(scope="module")
def adapter() -> Adapter:
    return resolve_builtins()["kimi"]


def config_at(root: Path) -> dict[str, Any]:
    return tomllib.loads((root / CONFIG).read_text(encoding="utf-8"))


def native(root: Path, text: str) -> None:
    (root / CONFIG).parent.mkdir(parents=True, exist_ok=True)
    (root / CONFIG).write_text(text, encoding="utf-8")


def dropped(result: Imported) -> dict[tuple[str, str | None], str]:
    return {(d.name, d.field): d.reason for d in result.dropped}


def test_the_family_serves_the_engine_and_the_adapter_conforms(adapter: Adapter) -> None:
    assert "kimi-hooks" in [e.name for e in get_family("kimi").engines()]
    assert adapter.spec.capabilities.hooks is not None
    assert adapter.spec.capabilities.hooks.render == "kimi-hooks"
    assert_adapter_conformance(adapter)
    assert_adapter_loads_hooks(adapter)


def test_the_endpoint_is_staged_in_config_toml_where_the_hooks_go(adapter: Adapter) -> None:
    """--config TEXT makes 1.51.0 read no config file, hooks included: the model is staged instead."""
    plan = plan_run(
        adapter,
        "hi",
        workdir=Path("/work/p"),
        home=Path("/run/1/home"),
        endpoint=Endpoint("http://127.0.0.1:8765", api_key="sk-test"),
        environ={"PATH": "/usr/bin", "HOME": "/home/u"},
    )
    assert "--config" not in plan.argv and "--config-file" not in plan.argv
    [staged] = plan.files
    assert staged.path == Path("/run/1/home/.kimi/config.toml")
    assert "sk-test" not in str(plan.to_json()["files"])


def test_hooks_render_as_kimi_reads_them_and_import_back_exactly(adapter: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("guard", "before-tool", "refuse", text="Never force-push.", matcher=("shell",)),
            Hook("fmt", "after-tool", "command", command="./fmt.sh", matcher=("write_file", "read_file")),
            Hook("hello", "session-start", "command", command="./hello.sh", source=("startup",)),
            Hook("done", "turn-end", "command", command="./done.sh", timeout=20.0),
        )
    )
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert rendered.drops == ()
    assert config_at(tmp_path) == {
        "hooks": [
            {
                "event": "PreToolUse",
                "command": "jq -nc --arg m 'Never force-push.' '"
                + '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
                + '"permissionDecisionReason":$m}}\' # tackroom:hook guard',
                # kimi re.search-es the matcher: a bare name would match every tool holding it.
                "matcher": "^(?:Shell)$",
            },
            {
                "event": "PostToolUse",
                "command": "./fmt.sh # tackroom:hook fmt",
                "matcher": "^(?:WriteFile|ReadFile)$",
            },
            {"event": "SessionStart", "command": "./hello.sh # tackroom:hook hello", "matcher": "startup"},
            {"event": "Stop", "command": "./done.sh # tackroom:hook done", "timeout": 20},
        ]
    }
    found = import_native(adapter, root=tmp_path)
    assert found.dropped == ()
    assert found.profile.hooks == tuple(sorted(profile.hooks, key=lambda h: h.name))


@settings(max_examples=40, deadline=None)
@given(
    moment=st.sampled_from(["before-tool", "after-tool"]),
    matcher=st.lists(
        st.sampled_from(["shell", "read_file", "write_file", "search", "glob", "todo"]),
        max_size=3,
        unique=True,
    ).map(tuple)
    | st.sampled_from([("kimi:TaskOutput",), ("kimi:Read.*",), ("kimi:^Task(List|Stop)$",)]),
    timeout=st.none() | st.integers(1, 600).map(float),
    action=st.sampled_from(["command", "refuse"]),
)
def test_tool_hooks_round_trip(
    adapter: Adapter, moment: str, matcher: tuple[str, ...], timeout: float | None, action: str
) -> None:
    if action == "refuse" and moment != "before-tool":
        action = "command"
    fields: dict[str, Any] = {"text": "no"} if action == "refuse" else {"command": "./x.sh"}
    hook = Hook("h", moment, action, matcher=matcher, timeout=timeout, **fields)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rendered = write(plan_render(Profile(hooks=(hook,)), adapter, root=root))
        assert rendered.drops == ()
        assert import_native(adapter, root=root).profile.hooks == (hook,)


@pytest.mark.parametrize("timeout", [0.5, 2.5, 0.0, 601.0, 3600.0])
def test_a_timeout_kimi_cannot_take_is_dropped_by_name_and_the_hook_kept(
    adapter: Adapter, timeout: float, tmp_path: Path
) -> None:
    """HookDef.timeout is whole seconds, 1-600: anything else would stop kimi loading its config."""
    profile = Profile(hooks=(Hook("slow", "turn-end", "command", command="true", timeout=timeout),))
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert [(d.name, d.field) for d in rendered.drops] == [("slow", "timeout")]
    [entry] = config_at(tmp_path)["hooks"]
    assert "timeout" not in entry


def test_what_kimi_cannot_hook_is_dropped_by_name(adapter: Adapter, tmp_path: Path) -> None:
    profile = Profile(
        hooks=(
            Hook("early", "prompt-submit", "inject", text="x"),
            Hook("late", "after-tool", "refuse", text="y"),
            Hook("mixed", "before-tool", "command", command="true", matcher=("shell", "kimi:Read.*")),
            Hook("compact", "pre-compact", "command", command="true"),
            Hook("cleared", "session-start", "command", command="true", source=("clear",)),
        )
    )
    rendered = write(plan_render(profile, adapter, root=tmp_path))
    assert sorted(d.name for d in rendered.drops) == ["cleared", "compact", "early", "late", "mixed"]
    assert not (tmp_path / CONFIG).exists()


def test_render_merges_into_the_staged_config_and_takes_back_only_its_own(
    adapter: Adapter, tmp_path: Path
) -> None:
    native(tmp_path, STAGED)
    profile = Profile(hooks=(Hook("log", "after-tool", "command", command="./log.sh"),))
    write(plan_render(profile, adapter, root=tmp_path))
    data = config_at(tmp_path)
    assert data["default_model"] == "tackroom"
    assert data["models"]["tackroom"]["max_context_size"] == 128000
    assert data["hooks"] == [{"event": "PostToolUse", "command": "./log.sh # tackroom:hook log"}]
    before = (tmp_path / CONFIG).read_bytes()
    write(plan_render(profile, adapter, root=tmp_path))
    assert (tmp_path / CONFIG).read_bytes() == before  # a second render changes nothing
    write(plan_render(Profile(), adapter, root=tmp_path))
    assert config_at(tmp_path) == tomllib.loads(STAGED)  # the hooks gone, the model as staged


def test_hooks_the_user_wrote_are_never_overwritten(adapter: Adapter, tmp_path: Path) -> None:
    """The list is one top-level value: the user's own hooks there stop the render, named."""
    mine = STAGED + '\n[[hooks]]\nevent = "Stop"\ncommand = "make lint"\n'
    native(tmp_path, mine)
    profile = Profile(hooks=(Hook("log", "after-tool", "command", command="./log.sh"),))
    with pytest.raises(TackroomError, match="hooks"):
        write(plan_render(profile, adapter, root=tmp_path))
    assert (tmp_path / CONFIG).read_text(encoding="utf-8") == mine


def test_a_users_config_imports_every_hook_or_names_it(adapter: Adapter) -> None:
    """The fixture: config.toml as kimi writes it and a user extends it, hooks in the documented form."""
    result = import_native(adapter, root=HOME, scope="home")
    hooks = {h.name: h for h in result.profile.hooks}
    assert hooks["pre-tool-use-1"] == Hook(
        "pre-tool-use-1",
        "before-tool",
        "command",
        command="python3 ~/.kimi/hooks/guard_shell.py",
        matcher=("shell",),
        timeout=5.0,
    )
    # Unanchored, kimi searches: kept whole as kimi's own matcher text, never narrowed to names.
    assert hooks["post-tool-use-1"].matcher == ("kimi:WriteFile|StrReplaceFile",)
    assert hooks["session-start-1"].source == ("startup",)
    assert (hooks["stop-1"].moment, hooks["stop-1"].timeout) == ("turn-end", 10.0)
    assert set(dropped(result)) == {("notification-1", None)}
    assert "Notification" in dropped(result)[("notification-1", None)]
    assert [s.name for s in result.profile.skills] == ["changelog"]


def test_a_users_config_renders_back_into_what_imports_the_same(adapter: Adapter, tmp_path: Path) -> None:
    found = import_native(adapter, root=HOME, scope="home").profile
    rendered = write(plan_render(found, adapter, root=tmp_path))
    assert rendered.drops == ()
    again = import_native(adapter, root=tmp_path)
    assert again.dropped == ()
    assert again.profile.hooks == found.hooks
    assert again.profile.skills == found.skills


def test_entries_kimi_would_refuse_or_no_hook_can_say_are_named(adapter: Adapter, tmp_path: Path) -> None:
    native(
        tmp_path,
        "\n".join(
            [
                '[[hooks]]\nevent = "BeforeTool"\ncommand = "a"',
                '[[hooks]]\nevent = "Stop"\ncommand = "b"\ntimeout = 0',
                '[[hooks]]\nevent = "Stop"\ncommand = "c"\ntimeout = 2.5',
                '[[hooks]]\nevent = "UserPromptSubmit"\nmatcher = "deploy"\ncommand = "d"',
                '[[hooks]]\nevent = "SessionStart"\nmatcher = "resume|other"\ncommand = "e"',
                '[[hooks]]\nevent = "PreToolUse"\ncommand = 3',
                '[[hooks]]\nevent = "PreToolUse"\ncommand = "f"\nmatcher = "^(?:Shell|ReadFile)$"',
                "",
            ]
        ),
    )
    result = import_native(adapter, root=tmp_path)
    assert [(h.name, h.matcher) for h in result.profile.hooks] == [("pre-tool-use-2", ("shell", "read_file"))]
    reasons = dropped(result)
    assert set(reasons) == {
        ("before-tool-1", None),
        ("stop-1", None),
        ("stop-2", None),
        ("user-prompt-submit-1", None),
        ("session-start-1", None),
        ("pre-tool-use-1", None),
    }
    assert "would not start" in reasons[("before-tool-1", None)]
    assert "whole seconds" in reasons[("stop-2", None)]
    assert "no neutral hook" in reasons[("user-prompt-submit-1", None)]


def test_a_hooks_value_that_is_no_list_is_named(adapter: Adapter, tmp_path: Path) -> None:
    native(tmp_path, '[hooks]\nevent = "Stop"\ncommand = "x"\n')
    result = import_native(adapter, root=tmp_path)
    assert result.profile.hooks == ()
    assert [d.name for d in result.dropped] == ["hooks"]


def test_a_copied_home_keeps_its_model_settings_when_hooks_are_rendered(
    adapter: Adapter, tmp_path: Path
) -> None:
    shutil.copytree(HOME, tmp_path / "home")
    root = tmp_path / "home"
    profile = Profile(hooks=(Hook("tr", "prompt-submit", "command", command="./tr.sh"),))
    with pytest.raises(TackroomError):  # the user's own [[hooks]] are there: named, not replaced
        write(plan_render(profile, adapter, root=root))
    assert config_at(root)["default_model"] == "kimi-k2"


def test_a_config_kimi_could_not_read_is_named_never_guessed_at(adapter: Adapter, tmp_path: Path) -> None:
    native(tmp_path, "[[hooks]\nevent = \n")
    result = import_native(adapter, root=tmp_path)
    assert result.profile.hooks == ()
    [drop] = result.dropped
    assert (drop.name, "not TOML" in drop.reason) == ("config.toml", True)
