"""tackroom's ACP client against the protocol's own schema, the official Python SDK's models.

The acp family speaks the protocol itself rather than through the SDK (``agent-client-protocol``):
the SDK's connection wants to own the agent's stdio as asyncio streams, while tackroom's runner
supervises every harness process the same way (its own home, the environment allowlist, output
caps on hostile bytes, the timeout and ``session/cancel``, the process group's end) and hands the
family one line at a time. The SDK still serves as the referee: every message the client sends,
replaying each conversation recorded from a real ACP agent, must be what the SDK's models accept
(nothing dropped, nothing renamed), and every message the real agents sent must be one the SDK
reads, so the recordings the family is tested on are the protocol's shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import schema
from pydantic import BaseModel

from tackroom.families import get_family
from tackroom.families.acp import AcpClient

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("acp*/*/stream.jsonl"))

SENT = {
    "initialize": schema.InitializeRequest,
    "session/new": schema.NewSessionRequest,
    "session/prompt": schema.PromptRequest,
    "session/cancel": schema.CancelNotification,
}
RECEIVED = {
    "session/update": schema.SessionNotification,
    "session/request_permission": schema.RequestPermissionRequest,
}
ANSWERS = {0: schema.InitializeResponse, 1: schema.NewSessionResponse, 2: schema.PromptResponse}
"""The client's request ids (initialize, session/new, session/prompt) and what answers each."""


def exactly(model: type[BaseModel], value: Any) -> None:
    """``value`` is what ``model`` reads, and written back it is the same: no field was unknown to it."""
    parsed = model.model_validate(value)
    assert parsed.model_dump(by_alias=True, exclude_unset=True, mode="json") == value


def replay(case: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The messages the client sent and received, replaying the agent's recorded stdout."""
    meta = json.loads((case / "meta.json").read_text()) if (case / "meta.json").exists() else {}
    client = get_family(case.parent.name).parser()
    assert isinstance(client, AcpClient)
    client.begin("the run's prompt", Path("/work/dir"), meta.get("options", {}))
    sent = [json.loads(line) for line in client.outgoing()]
    received = []
    for line in (case / "stream.jsonl").read_text(encoding="utf-8").splitlines():
        client.feed(line)
        sent += [json.loads(out) for out in client.outgoing()]
        try:
            message = json.loads(line)
        except ValueError:
            continue  # a log line on stdout: not the protocol
        if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
            received.append(message)
    client.cancel()
    sent += [json.loads(out) for out in client.outgoing()]
    return sent, received


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_what_the_client_sends_is_the_protocol(case: Path) -> None:
    sent, _ = replay(case)
    methods = [message.get("method") for message in sent]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    for message in sent:
        assert message["jsonrpc"] == "2.0"
        if "method" in message:
            exactly(SENT[message["method"]], message["params"])
        elif "error" in message:  # a request tackroom did not offer (fs/*, terminal/*)
            assert message["error"]["code"] == -32601
        else:
            exactly(schema.RequestPermissionResponse, message["result"])


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_what_the_real_agents_sent_is_the_protocol(case: Path) -> None:
    _, received = replay(case)
    assert received, "a recording without a single protocol message"
    for message in received:
        method = message.get("method")
        if method in RECEIVED:
            RECEIVED[method].model_validate(message["params"])
        elif method is None and "result" in message and message.get("id") in ANSWERS:
            ANSWERS[message["id"]].model_validate(message["result"])
        elif method is None:
            assert "error" in message, message


def test_a_permission_answer_and_a_cancel_are_the_protocol() -> None:
    """What the recordings may not hold: a denied permission, the cancel sent on timeout."""
    for auto_accept in (True, False):
        client = AcpClient()
        client.begin("p", Path("/w"), {"auto_accept": auto_accept})
        client.feed(json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}))
        client.feed(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}))
        options = [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ]
        ask = {"sessionId": "s1", "toolCall": {"toolCallId": "t1", "title": "ls"}, "options": options}
        schema.RequestPermissionRequest.model_validate(ask)
        request = {"jsonrpc": "2.0", "id": 9, "method": "session/request_permission", "params": ask}
        client.feed(json.dumps(request))
        client.cancel()
        *_, answer, cancel = [json.loads(out) for out in client.outgoing()]
        exactly(schema.RequestPermissionResponse, answer["result"])
        assert answer["result"]["outcome"]["optionId"] == ("yes" if auto_accept else "no")
        exactly(schema.CancelNotification, cancel["params"])
