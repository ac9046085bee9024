#!/usr/bin/env python3
"""A small stdio MCP server for the capability proofs: one tool, every message logged.

Newline-delimited JSON-RPC on stdin/stdout. Its one tool, ``tr_echo(text)``,
answers ``TR_ECHO:<text>`` and carries ``TACKROOM_MCP_MARKER`` in its
description, so a test can see it offered to the model and called. Each
message received is appended to ``$TR_MCP_LOG`` (when set) as a JSON line.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

TOOL = {
    "name": "tr_echo",
    "description": "TACKROOM_MCP_MARKER: echoes its text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to echo."}},
        "required": ["text"],
    },
}


def log(message: dict[str, Any]) -> None:
    path = os.environ.get("TR_MCP_LOG")
    if path:
        with Path(path).open("a", encoding="utf-8") as out:
            out.write(json.dumps({"pid": os.getpid(), **message}) + "\n")


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method = message.get("method")
    if "id" not in message:
        return None  # a notification
    if method == "initialize":
        version = message.get("params", {}).get("protocolVersion", "2025-06-18")
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tackroom-test-mcp", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = message.get("params", {}).get("arguments", {}).get("text", "")
        result = {"content": [{"type": "text", "text": f"TR_ECHO:{text}"}], "isError": False}
    elif method in ("resources/list", "resources/templates/list", "prompts/list"):
        key = {"resources/list": "resources", "resources/templates/list": "resourceTemplates"}.get(
            method, "prompts"
        )
        result = {key: []}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        log(message)
        reply = answer(message)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
