"""Real harnesses through ``tackroom run --mock ... --capture``: one captured call per model request,
each with exact usage.

The mock answers every model call with the same usage (its defaults), so each
captured call's normalized figures are known exactly from its wire's semantics.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from realkit import REAL, RunFn

from tackroom.adapters.resolve import Adapter
from tackroom.families import get_family
from tackroom.gateway import Gateway
from tackroom.mock import (
    DEFAULT_CACHE_READ_TOKENS,
    DEFAULT_CACHE_WRITE_TOKENS,
    DEFAULT_INPUT_TOKENS,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_REASONING_TOKENS,
    MockServer,
    Script,
    Turn,
)
from tackroom.run.runner import run, vocabulary

pytestmark = pytest.mark.real

IN, OUT = DEFAULT_INPUT_TOKENS, DEFAULT_OUTPUT_TOKENS
READ, WRITE, THINK = DEFAULT_CACHE_READ_TOKENS, DEFAULT_CACHE_WRITE_TOKENS, DEFAULT_REASONING_TOKENS

# The mock puts each figure verbatim in the wire's own field; the gateway converts each wire's semantics.
EXPECTED = {
    "anthropic-messages": {
        "input_uncached": IN,
        "cache_read": READ,
        "cache_write": WRITE,
        "output": OUT,
        "reasoning": None,
    },
    "openai-chat": {
        "input_uncached": IN - READ,
        "cache_read": READ,
        "cache_write": None,
        "output": OUT,
        "reasoning": THINK,
    },
    "openai-responses": {
        "input_uncached": IN - READ - WRITE,
        "cache_read": READ,
        "cache_write": WRITE,
        "output": OUT,
        "reasoning": THINK,
    },
    "gemini": {
        "input_uncached": IN - READ,
        "cache_read": READ,
        "cache_write": None,
        "output": OUT + THINK,
        "reasoning": THINK,
    },
}


@pytest.mark.parametrize("harness", REAL, indirect=True)
def test_every_model_request_is_captured_with_exact_usage(
    harness: Adapter, run_harness: RunFn, tmp_path: Path
) -> None:
    text = f"TACKROOM-CAPTURED-{harness.name}"
    with MockServer(Script([Turn.reply(text)]), tools=vocabulary(harness)) as mock:
        # The capture goes to the test's own database, not the shared harness data dir's state.
        result = run_harness(
            "say the magic words", mock=mock, capture=True, capture_db=tmp_path / "capture.db"
        )
        requests = mock.requests
    assert result.ok, result.error
    assert result.final_text is not None and result.final_text.strip() == text
    assert result.capture is not None and not result.capture["failures"]
    calls = result.capture["calls"]
    # What the gateway refused itself is recorded too: only claude-agent-acp's connectivity check
    # (HEAD on the base URL, no provider API) is, and the run does not depend on its answer.
    refused = [c for c in calls if (c["reason"] or "").startswith("tackroom gateway: no provider API")]
    assert [(c["method"], c["path"]) for c in refused] in ([], [("HEAD", "/")]), refused
    # One captured call per request that reached the model, no more, no fewer.
    forwarded = [c for c in calls if c not in refused]
    assert Counter(c["path"] for c in forwarded) == Counter(r.path for r in requests)
    assert {c["trace_id"] for c in calls} == {result.run_dir.name}
    generated = [c for c in calls if c["wire_api"] is not None]
    assert generated, "the harness made no model call through the gateway"
    for call in generated:
        assert (call["status"], call["outcome"]) == (200, "complete"), call
        assert call["usage"] == EXPECTED[call["wire_api"]], call
    summed = result.capture["usage"]
    assert summed["calls"] == len(calls)
    assert summed["usage"]["output"] == sum(EXPECTED[c["wire_api"]]["output"] or 0 for c in generated)
    # Beside the harness's own report: each harness that reports output counts its one call's output
    # as the provider sent it; one that reports none is explained, never taken as zero.
    reconciliation = result.capture["reconciliation"]
    if "output" in get_family(harness.family).reports_usage:
        assert reconciliation["output"] == {
            "harness": OUT,
            "gateway": OUT,
            "difference": 0,
            "explanation": None,
        }
    else:
        assert reconciliation["output"] == {
            "harness": None,
            "gateway": summed["usage"]["output"],
            "difference": None,
            "explanation": "the harness's report has no output figure",
        }
    for figure in reconciliation.values():
        assert figure["difference"] in (0, None) or figure["explanation"], figure


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_a_run_through_a_running_gateway_carries_its_calls(
    harness: Adapter, harness_data: Path, workdir: Path, tmp_path: Path
) -> None:
    """``run --gateway URL``: the gateway runs on its own (here in-process, its own store); the Result
    gets the run's calls from it over HTTP, as from a gateway on another host."""
    text = "TACKROOM-THROUGH-A-GATEWAY"
    key = "sk-ant-through-gateway-0001"
    environ = {**os.environ, "XDG_DATA_HOME": str(harness_data), "ANTHROPIC_API_KEY": key}
    with (
        MockServer(Script([Turn.reply(text)]), tools=vocabulary(harness)) as mock,
        Gateway(mock.base_url, db=tmp_path / "gateway.db") as gateway,
    ):
        result = run(
            harness,
            "say the magic words",
            workdir=workdir,
            runs_dir=tmp_path / "runs",
            environ=environ,
            gateway=gateway.url,
            timeout_s=120.0,
            harness_version=harness.version,
        )
        stored = gateway.store.calls(run=result.run_dir.name)
        requests = mock.requests
    assert result.ok, result.error
    assert result.final_text is not None and result.final_text.strip() == text
    assert result.capture is not None and result.capture["failures"] == []
    calls = result.capture["calls"]
    assert calls == json.loads(json.dumps(stored, default=str))
    assert Counter(c["path"] for c in calls) == Counter(r.path for r in requests)
    generated = [c for c in calls if c["wire_api"] is not None]
    assert generated and all(c["usage"] == EXPECTED["anthropic-messages"] for c in generated)
    assert result.capture["reconciliation"]["output"]["difference"] == 0
    assert key not in (tmp_path / "gateway.db").read_bytes().decode("latin-1")
