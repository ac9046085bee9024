#!/usr/bin/env python3
"""A scripted ACP agent on stdio, for the acp family's tests (a real subprocess, no patching).

It answers initialize, session/new and session/prompt; during the prompt it
thinks, writes a message in chunks, posts a plan, runs one tool call behind a
permission request (writing ``allowed.txt`` in its cwd only when allowed),
asks the client for a file (``fs/read_text_file``, which a client that did not
offer it refuses), then answers the prompt with usage. Flags change that:

--linger         keep running after stdin closes (an agent server that never exits)
--hang           never answer session/prompt
--cancellable    answer session/prompt only once the client sends session/cancel (stopReason cancelled)
--prompt-error   answer session/prompt with a JSON-RPC error
--version N      answer initialize with protocol version N
--banner         print a line that is not JSON-RPC first
--no-usage       answer session/prompt without usage
--mcp-log PATH   write session/new's mcpServers to PATH (without it, they must be none)
--mcp-caps T,T   advertise these remote MCP transports (http, sse) in initialize
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ARGS = sys.argv[1:]
_next_id = 100


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(session: str, body: dict[str, object]) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": body}})


def read() -> dict[str, object] | None:
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


def ask(method: str, params: dict[str, object]) -> dict[str, object]:
    """Send a request to the client and wait for its answer (notifications in between are not expected)."""
    global _next_id
    _next_id += 1
    send({"id": _next_id, "method": method, "params": params})
    while True:
        answer = read()
        if answer is None:
            sys.exit(3)
        if answer.get("id") == _next_id and "method" not in answer:
            return answer


def prompt(request_id: object, params: dict[str, object], cwd: Path) -> None:
    session = str(params["sessionId"])
    blocks = params["prompt"]
    assert isinstance(blocks, list)
    text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    if "--hang" in ARGS:
        time.sleep(3600)
    if "--cancellable" in ARGS:
        update(
            session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Working"}}
        )
        while (message := read()) is not None:
            if message.get("method") == "session/cancel" and "id" not in message:
                (cwd / "cancelled.txt").write_text(str(message.get("params")))
                usage = {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}
                send({"id": request_id, "result": {"stopReason": "cancelled", "usage": usage}})
                return
        sys.exit(4)  # stdin closed without a cancel
    if "--prompt-error" in ARGS:
        send({"id": request_id, "error": {"code": -32603, "message": "model unreachable"}})
        return
    update(session, {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}})
    update(session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Let me "}})
    update(session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "look."}})
    update(
        session,
        {"sessionUpdate": "plan", "entries": [{"content": "write", "priority": "high", "status": "pending"}]},
    )
    call = {
        "toolCallId": "call-1",
        "title": "Terminal",
        "kind": "execute",
        "rawInput": {},
        "_meta": {"fake": {"toolName": "Shell"}},
    }
    update(session, {"sessionUpdate": "tool_call", "status": "pending", **call})
    update(
        session,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "rawInput": {"command": "touch allowed.txt"},
            "title": "touch allowed.txt",
        },
    )
    options = [
        {"optionId": "yes-always", "name": "Always", "kind": "allow_always"},
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    answer = ask(
        "session/request_permission",
        {"sessionId": session, "toolCall": {**call, "title": "touch allowed.txt"}, "options": options},
    )
    outcome = answer.get("result", {}).get("outcome", {})  # type: ignore[union-attr]
    if outcome.get("optionId") in ("yes", "yes-always"):
        (cwd / "allowed.txt").write_text(outcome["optionId"])
        update(
            session, {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "in_progress"}
        )
        update(
            session,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call-1",
                "status": "completed",
                "rawOutput": "touched",
            },
        )
    else:
        content = [
            {"type": "content", "content": {"type": "text", "text": f"refused: {json.dumps(outcome)}"}}
        ]
        update(
            session,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call-1",
                "status": "failed",
                "content": content,
            },
        )
    refused = ask("fs/read_text_file", {"sessionId": session, "path": str(cwd / "x")})
    code = refused.get("error", {}).get("code")  # type: ignore[union-attr]
    update(session, {"sessionUpdate": "usage_update", "used": 100, "size": 1000})
    for piece in ("You said: ", text, f" (fs answered {code})"):
        update(session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": piece}})
    result: dict[str, object] = {"stopReason": "end_turn"}
    if "--no-usage" not in ARGS:
        result["usage"] = {
            "inputTokens": 11,
            "outputTokens": 7,
            "cachedReadTokens": 5,
            "cachedWriteTokens": 2,
            "totalTokens": 25,
        }
    send({"id": request_id, "result": result})


def main() -> None:
    if "--banner" in ARGS:
        print("fake agent starting", flush=True)
    version = int(ARGS[ARGS.index("--version") + 1]) if "--version" in ARGS else 1
    cwd = Path.cwd()
    while (message := read()) is not None:
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        if method == "initialize":
            caps = ARGS[ARGS.index("--mcp-caps") + 1].split(",") if "--mcp-caps" in ARGS else []
            agent = {"mcpCapabilities": dict.fromkeys(caps, True)} if caps else {}
            send(
                {
                    "id": request_id,
                    "result": {"protocolVersion": version, "agentCapabilities": agent, "authMethods": []},
                }
            )
        elif method == "session/new":
            cwd = Path(str(params["cwd"]))
            if "--mcp-log" in ARGS:
                log = Path(ARGS[ARGS.index("--mcp-log") + 1])
                log.write_text(json.dumps(params["mcpServers"]), encoding="utf-8")
            else:
                assert params["mcpServers"] == [], params
            send({"id": request_id, "result": {"sessionId": f"fake-session-{os.getpid()}"}})
        elif method == "session/prompt":
            prompt(request_id, params, cwd)
    if "--linger" in ARGS:
        time.sleep(3600)


if __name__ == "__main__":
    main()
