"""Options form a closed set and fail closed, naming the harness, the adapter and the option."""

from __future__ import annotations

from pathlib import Path

import pytest

from tackroom.adapters.plan import Endpoint, plan_run
from tackroom.adapters.resolve import load_adapters, resolve_builtins
from tackroom.errors import ConfigError, OptionError, UnsupportedOptionError
from tackroom.options import parse_option_args

ENV = {"PATH": "/bin"}


def plan_argv(name: str, **options: object) -> list[str]:
    adapter = resolve_builtins()[name]
    return list(plan_run(adapter, "hi", options=options, workdir=Path("/w"), home=None, environ=ENV).argv)


def test_override_that_drops_option_slots_fails_closed(config_dir: Path) -> None:
    (config_dir / "tackroom.toml").write_text(
        "[adapter.claude-lite]\nextends = 'claude-code'\n"
        "one_shot = ['-p', '{{prompt}}', '{{opt.model}}']\n"
        "[adapter.claude-lite.options]\nmodel = ['--model', '{{value}}']\n",
        encoding="utf-8",
    )
    # The override keeps the built-in's other option templates, which have no slot now.
    with pytest.raises(ConfigError, match=r"no \{\{opt.max_turns\}\} slot"):
        load_adapters(config=config_dir)


def test_unsupported_option_error_message() -> None:
    adapter = resolve_builtins()["claude-code"]
    with pytest.raises(UnsupportedOptionError) as caught:
        plan_run(adapter, "hi", options={"sandbox": "x"}, workdir=Path("/w"), home=None, environ=ENV)
    message = str(caught.value)
    assert "harness 'claude-code'" in message and "adapter 'claude-code'" in message
    assert "'sandbox'" in message and "max_turns" in message


def test_unknown_option() -> None:
    with pytest.raises(OptionError, match="unknown option 'turbo'"):
        plan_argv("claude-code", turbo=True)


@pytest.mark.parametrize(
    ("option", "value"), [("max_turns", "three"), ("max_turns", 0), ("auto_accept", "maybe"), ("model", "")]
)
def test_bad_values_are_typed_errors(option: str, value: object) -> None:
    with pytest.raises(OptionError, match=f"option '{option}' takes"):
        plan_argv("claude-code", **{option: value})


@pytest.mark.parametrize(
    "model",
    ['x","plugin":["evil"]', "gpt 5", "a{b}", "$(id)", "m\n", "\u00e9", "a" * 257],
)
def test_a_model_is_a_model_name_and_nothing_that_is_syntax_somewhere(model: str) -> None:
    """opencode-acp carries the model in a JSON config in a variable; a quote would end its string."""
    with pytest.raises(OptionError, match="option 'model' takes a model name"):
        plan_argv("opencode-acp", model=model)


@pytest.mark.parametrize(
    "model",
    ["anthropic/claude-sonnet-4-5", "sonnet[1m]", "us.anthropic.claude-3-5-sonnet-20241022-v2:0", "m@v"],
)
def test_model_names_as_providers_spell_them_pass(model: str) -> None:
    plan_argv("claude-code", model=model)


def test_list_options_repeat_their_template() -> None:
    argv = plan_argv("claude-code", allowed_tools=["Bash", "Read"])
    assert argv[-4:] == ["--allowedTools", "Bash", "--allowedTools", "Read"]


def test_flag_false_renders_nothing() -> None:
    assert plan_argv("claude-code", auto_accept=False) == plan_argv("claude-code")


def test_cli_option_strings() -> None:
    parsed = parse_option_args(["max_turns=4", "allowed_tools=A,B", "allowed_tools=C", "auto_accept=yes"])
    assert parsed == {"max_turns": 4, "allowed_tools": ["A", "B", "C"], "auto_accept": True}
    with pytest.raises(OptionError, match="KEY=VALUE"):
        parse_option_args(["max_turns"])


def test_prompt_is_one_argv_element_never_a_shell_string() -> None:
    argv = plan_argv("claude-code")
    nasty = plan_run(
        resolve_builtins()["claude-code"], "a; rm -rf / $(x) 'q'", workdir=Path("/w"), home=None, environ=ENV
    )
    assert nasty.argv[2] == "a; rm -rf / $(x) 'q'" and len(nasty.argv) == len(argv)


def test_endpoint_secret_never_shown() -> None:
    adapter = resolve_builtins()["claude-code"]
    plan = plan_run(
        adapter,
        "hi",
        workdir=Path("/w"),
        home=None,
        environ={"ANTHROPIC_API_KEY": "sk-real"},
        endpoint=Endpoint("http://127.0.0.1:9/v1", api_key="sk-hidden"),
    )
    shown = plan.to_json()
    assert shown["env"]["ANTHROPIC_API_KEY"] == "<secret>"
    assert shown["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert "sk-hidden" not in str(shown) and "sk-real" not in str(shown)
    assert plan.environ()["ANTHROPIC_API_KEY"] == "sk-hidden"


def test_environment_is_an_allowlist_and_scrubs_identity() -> None:
    adapter = resolve_builtins()["claude-code"]
    environ = {"PATH": "/bin", "AWS_SECRET": "x", "ANTHROPIC_API_KEY": "k", "CLAUDECODE": "1", "RANDOM": "r"}
    env = plan_run(adapter, "hi", workdir=Path("/w"), home=None, environ=environ).environ()
    assert env["ANTHROPIC_API_KEY"] == "k" and env["PATH"] == "/bin"
    assert "AWS_SECRET" not in env and "RANDOM" not in env and "CLAUDECODE" not in env


def test_isolated_home_relocates_config() -> None:
    adapter = resolve_builtins()["claude-code"]
    env = plan_run(
        adapter, "hi", workdir=Path("/w"), home=Path("/r/home"), environ={"HOME": "/real"}
    ).environ()
    assert env["HOME"] == "/r/home" and env["CLAUDE_CONFIG_DIR"] == "/r/home/.claude"
    assert env["TMPDIR"] == "/r/tmp" and env["XDG_CONFIG_HOME"] == "/r/home/.config"


def test_secret_names() -> None:
    from tackroom.redact import is_secret_name

    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "GITHUB_TOKEN",
        "MY_SECRET",
        "KEY",
        "AWS_PASSWORD",
    ):
        assert is_secret_name(name), name
    for name in ("GOOSE_DISABLE_KEYRING", "PATH", "MONKEY_MODE", "AUTHOR"):
        assert not is_secret_name(name), name


def test_env_only_and_empty_flag_options(config_dir: Path) -> None:
    (config_dir / "tackroom.toml").write_text(
        '[adapter.claude-code.options]\nauto_accept = []\nmodel = { env = { CLAUDE_MODEL = "{{value}}" } }\n',
        encoding="utf-8",
    )
    claude = load_adapters(config=config_dir)["claude-code"]
    bare = plan_run(claude, "hi", workdir=Path("/w"), home=None, environ=ENV)
    plan = plan_run(
        claude, "hi", options={"auto_accept": True, "model": "m1"}, workdir=Path("/w"), home=None, environ=ENV
    )
    assert plan.argv == bare.argv
    assert plan.environ()["CLAUDE_MODEL"] == "m1"


def test_value_option_needs_somewhere_to_go(config_dir: Path) -> None:
    (config_dir / "tackroom.toml").write_text("[adapter.claude-code.options]\nmodel = []\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="needs argv or env"):
        load_adapters(config=config_dir)
