"""The openhands family: OpenHands CLI's ``openhands --headless --json``.

Verified on 1.16.0 against the mock. stdout mixes human lines (banners,
"Agent is working", a Rich summary box, ``Conversation ID: <hex>``) with one
JSON event per line; only lines starting with ``{`` are events. Their
``kind``: ``MessageEvent`` (``source`` user or agent, ``llm_message.content``
a list of text parts), ``ActionEvent`` (a tool call: ``tool_name``,
``tool_call_id``, ``action``), ``ObservationEvent`` (its result) and
``ConversationErrorEvent`` (``code``, ``detail``): a model failure, after
which the CLI still exits 0.

No usage is printed: it is in the conversation's
``$OPENHANDS_PERSISTENCE_DIR/conversations/<id>/base_state.json``
(``stats.usage_to_metrics.agent.accumulated_token_usage``), read after exit
for the conversation id the stream named. ``prompt_tokens`` includes the
cache read; over Chat Completions there is no cache-write figure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser
from tackroom.families.openhands.stream import MAX_STATE, OpenHandsStreamParser, persistence_dir, state_usage
from tackroom.paths import read_regular
from tackroom.trace.events import (
    ErrorEvent,
    Event,
    SessionStarted,
    UsageReport,
)

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class OpenHands(Family):
    """OpenHands CLI, verified on 1.16.0 against the mock over Chat Completions (litellm)."""

    name = "openhands"
    stream = "openhands --headless --json"
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "reasoning"})
    engines_module = "tackroom.families.openhands.engines"

    def parser(self) -> StreamParser:
        return OpenHandsStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.openhands.transcripts import OpenHandsTranscripts

        return OpenHandsTranscripts()

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        """The run's total usage, from the base_state.json of the conversation the stream named."""
        root = persistence_dir(home, env)
        session = next((e.session_id for e in events if isinstance(e, SessionStarted) and e.session_id), None)
        if root is None or session is None or not re.fullmatch(r"[0-9a-f]{8,64}", session):
            return []
        state = root / "conversations" / session / "base_state.json"
        try:
            raw = read_regular(state, MAX_STATE + 1)
            if len(raw) > MAX_STATE:
                return []
            data = json.loads(raw.decode("utf-8", errors="replace"))
        except (OSError, ValueError, RecursionError):
            return [ErrorEvent(message="openhands base_state.json could not be read", fatal=False)]
        usage = state_usage(data)
        return [UsageReport(usage=usage, scope="total")] if usage.reported else []


FAMILY = OpenHands()
