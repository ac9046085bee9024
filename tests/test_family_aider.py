"""The aider family: plain-text stdout, exit-0 failures, and only the token figures printed in full."""

from __future__ import annotations

from typing import TypeVar

import pytest

from tackroom.adapters.resolve import resolve_builtins
from tackroom.families import get_family
from tackroom.families.aider import AiderTextParser, exact, parse_output, undouble
from tackroom.run.result import summarize
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    Usage,
    UsageReport,
)

NOTES = ["Analytics have been permanently disabled.", "", "Added .aider* to .gitignore"]
BANNER = [
    "Aider v0.86.2",
    "Model: openai/mock-model with whole edit format",
    "Git repo: .git with 0 files",
    "Repo-map: using 1024 tokens, auto refresh",
    "",
]
BAD_REQUEST = "litellm.BadRequestError: OpenAIException - TACKROOM-INJECTED-ERROR"
CONNECTION = "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error."
OVERLOADED = "The API provider's servers are down or overloaded."
RETRY = [CONNECTION, OVERLOADED, "Retrying in 0.2 seconds..."]


def run(*body: str, banner: list[str] = BANNER) -> list[Event]:
    parser = AiderTextParser()
    for line in [*NOTES, *banner, *body]:
        assert parser.feed(line) == []  # nothing is known until aider has exited
    return parser.close(0)


E = TypeVar("E", bound=Event)


def of(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def usages(events: list[Event], scope: str) -> list[Usage]:
    return [e.usage for e in events if isinstance(e, UsageReport) and e.scope == scope]


def test_figures_printed_in_full_are_exact_and_rounded_ones_unknown() -> None:
    assert exact("54") == 54
    assert exact("0") == 0
    assert exact("1.2k") is None
    assert exact("12k") is None


def test_a_reply_is_text_received_tokens_and_a_good_finish() -> None:
    events = run("counted", "", "Tokens: 321 sent, 54 received.")
    assert isinstance(events[0], SessionStarted) and events[0].model == "openai/mock-model"
    assert [e.text for e in of(events, AssistantText)] == ["counted"]
    # "sent" counts cached tokens in the prompt and aider does not show OpenAI's cached figure.
    assert usages(events, "turn") == [Usage(output=54)]
    summary = summarize(events)
    assert (summary.final_text, summary.usage, summary.model_failed) == ("counted", Usage(output=54), False)


def test_a_rounded_received_figure_is_unknown() -> None:
    events = run("long", "", "Tokens: 12k sent, 1.5k received. Cost: $0.01 message, $0.01 session.")
    rounded = Usage(unknown=frozenset({"output"}))
    assert usages(events, "turn") == [rounded]
    assert summarize(events).usage == rounded and summarize(events).usage.to_json()["output"] == "unknown"


def test_cache_and_cost_parts_do_not_hide_the_received_figure() -> None:
    events = run("hi", "", "Tokens: 2.3k sent, 12 cache write, 1.9k cache hit, 7 received.")
    assert usages(events, "turn") == [Usage(output=7)]


def test_the_total_of_several_calls_is_unknown_when_any_part_was_rounded() -> None:
    events = run("a", "", "Tokens: 10 sent, 5 received.", "b", "", "Tokens: 10 sent, 1.1k received.")
    assert usages(events, "turn") == [Usage(output=5), Usage(unknown=frozenset({"output"}))]
    assert usages(events, "total") == [Usage(unknown=frozenset({"output"}))]
    assert summarize(events).usage.to_json()["output"] == "unknown"


def test_a_flood_is_parsed_bounded_and_its_total_is_unknown() -> None:
    body = [f"line {n}" for n in range(300_000)]
    events = run(
        "first", "", "Tokens: 10 sent, 5 received.", *body, "last", "", "Tokens: 10 sent, 6 received."
    )
    notes = [e.message for e in of(events, ErrorEvent) if not e.fatal]
    assert len(notes) == 1 and "were not parsed" in notes[0]
    assert usages(events, "total") == [Usage(unknown=frozenset({"output"}))]
    assert summarize(events).final_text is not None and summarize(events).final_text.endswith("last")


def test_the_total_of_exact_calls_is_their_sum_and_the_last_reply_is_final() -> None:
    events = run("a", "", "Tokens: 10 sent, 5 received.", "b", "", "Tokens: 10 sent, 6 received.")
    assert usages(events, "total") == [Usage(output=11)]
    assert summarize(events).final_text == "b"


def test_the_whole_edit_format_doubled_newlines_are_undone() -> None:
    shown = ["line one", "", "", "", "* bullet", "", "  indented", "", "", "", "last"]
    events = run(*shown, "", "Tokens: 10 sent, 5 received.")
    assert summarize(events).final_text == "line one\n\n* bullet\n  indented\n\nlast"
    assert undouble("a\n\n\n\nb\n\nc") == "a\n\nb\nc"


def test_other_edit_formats_show_the_reply_as_it_is() -> None:
    banner = ["Aider v0.86.2", "Main model: gpt-4o with diff edit format, infinite output", ""]
    events = run("a", "", "b", "", "Tokens: 10 sent, 5 received.", banner=banner)
    assert summarize(events).final_text == "a\n\nb"
    assert of(events, SessionStarted)[0].model == "gpt-4o"


def test_a_litellm_error_behind_exit_0_fails_the_run() -> None:
    events = run(BAD_REQUEST, "")
    summary = summarize(events)
    assert summary.model_failed
    assert summary.error == BAD_REQUEST
    assert summary.final_text is None
    assert events[-1] == Finished("", final_text=None, ok=False)


def test_an_error_with_a_description_keeps_both() -> None:
    auth = "litellm.AuthenticationError: AuthenticationError: OpenAIException - bad key"
    hint = "The API provider is not able to authenticate you. Check your API key."
    events = run(auth, hint, "")
    assert summarize(events).error == f"{auth} {hint}"


def test_a_retried_error_then_a_reply_is_a_good_run() -> None:
    events = run(*RETRY, "hello", "", "Tokens: 9 sent, 3 received.")
    errors = of(events, ErrorEvent)
    assert [e.fatal for e in errors] == [False]
    assert "Retrying in 0.2 seconds..." in errors[0].message
    summary = summarize(events)
    assert (summary.model_failed, summary.final_text) == (False, "hello")


def test_output_cut_off_while_retrying_fails_with_the_error_being_retried() -> None:
    events = run(*RETRY, *RETRY)
    summary = summarize(events)
    assert summary.model_failed
    assert summary.error == f"{CONNECTION} {OVERLOADED}"


def test_a_python_traceback_fails_with_the_exception_line() -> None:
    events = run(
        "Traceback (most recent call last):",
        '  File "aider/coders/base_coder.py", line 1459, in send_message',
        "    yield from self.send(messages, functions=self.functions)",
        "ValueError: boom",
        "",
        "boom",
    )
    assert summarize(events).error == "ValueError: boom"


def test_an_empty_reply_is_a_warning_not_text() -> None:
    warning = "Empty response received from LLM. Check your provider account?"
    events = run(warning, "", "Tokens: 9 sent, 0 received.")
    assert of(events, AssistantText) == []
    assert [(e.message, e.fatal) for e in of(events, ErrorEvent)] == [(warning, False)]
    assert summarize(events).usage == Usage(output=0)
    assert not summarize(events).model_failed


def test_output_without_the_announcements_yields_nothing() -> None:
    assert parse_output(["Traceback (most recent call last):", "ImportError: no module"]) == []
    assert parse_output([]) == []


def test_the_aider_adapter_selects_this_verified_family() -> None:
    family = get_family(resolve_builtins()["aider"].family)
    assert family.name == "aider" and family.verified
    assert family.reports_usage == {"output"}


@pytest.mark.parametrize("flag", ["--no-stream", "--no-pretty"])
def test_the_adapter_keeps_the_flags_the_parser_relies_on(flag: str) -> None:
    # Streaming, aider counts tokens itself; pretty, it re-renders the reply as Markdown.
    assert flag in resolve_builtins()["aider"].spec.one_shot
