"""The mini-swe-agent family: ``mini -o /dev/stdout`` (its trajectory file, written to stdout).

Verified on 2.4.6 against the mock. mini has no machine-readable stream: stdout
is a Rich-rendered human transcript, and the machine-readable record is the
trajectory JSON it saves after every step. The adapter points that file at
stdout, so stdout holds the transcript with, after each step, the whole
trajectory so far pretty-printed (``json.dumps(indent=2)``): a line that is
exactly ``{`` opens one and a line that is exactly ``}`` closes it (inside, every
line is indented, and strings never span lines). A ``{`` line of the transcript
that opens no trajectory is dropped at the next ``{`` or when it fails to parse.

A trajectory is ``{"info": {"exit_status", "submission", ...}, "messages": [...],
"trajectory_format": "mini-swe-agent-1.1"}``. ``messages`` only grow between
saves, so each save's new messages become events: an assistant message's
``tool_calls`` (mini's one tool is ``bash``) and its ``extra.response.usage``
(the model call's OpenAI usage, as litellm returned it), each ``tool`` message's
result (``extra.returncode``), and the ``exit`` message that ends the run.

mini ends only through its submit command (a bash call whose output starts with
the line ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``): the rest of that output is the
submission, the run's answer, and ``exit_status`` is ``Submitted``. mini records that
call's own result as ``returncode`` -1, "action was not executed": it is kept as mini
wrote it (a failed tool result), not reinterpreted. Any other
exit status (``RepeatedFormatError`` after three answers without a tool call,
exit 0; ``BadRequestError`` and other model failures, exit 1; limits) fails the
run, whatever the exit code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import (
    Family,
    StreamParser,
)
from tackroom.families.mini_swe_agent.stream import MiniStreamParser

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class MiniSweAgent(Family):
    """mini-swe-agent, verified on 2.4.6 against the mock over Chat Completions (litellm)."""

    name = "mini-swe-agent"
    stream = "mini trajectory JSON, saved to stdout after each step"
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "reasoning"})

    def parser(self) -> StreamParser:
        return MiniStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.mini_swe_agent.transcripts import MiniTranscripts

        return MiniTranscripts()


FAMILY = MiniSweAgent()
