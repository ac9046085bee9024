"""A fast upstream for the gateway benchmark: Anthropic answers, whole or as N distinct deltas.

python benchmarks/gateway_upstream.py PORT EVENTS
"""

from __future__ import annotations

import json
import sys
from typing import Any

from aiohttp import web

USAGE = {
    "input_tokens": 100,
    "cache_read_input_tokens": 20,
    "cache_creation_input_tokens": 3,
    "output_tokens": 7,
}
MESSAGE = {
    "id": "m",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": USAGE,
}


def sse(kind: str, **fields: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


def stream(events: int) -> list[bytes]:
    # Distinct deltas: LiteLLM cuts a stream after 100 identical chunks.
    deltas = [
        sse("content_block_delta", index=0, delta={"type": "text_delta", "text": f"w{n} "})
        for n in range(events)
    ]
    return [
        sse("message_start", message=MESSAGE),
        sse("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        *deltas,
        sse("content_block_stop", index=0),
        sse("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 7}),
        sse("message_stop"),
    ]


def main() -> None:
    port, events = int(sys.argv[1]), int(sys.argv[2])
    chunks = stream(events)
    whole = json.dumps(
        {**MESSAGE, "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}
    ).encode()

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if not body.get("stream"):
            return web.Response(body=whole, content_type="application/json")
        answer = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await answer.prepare(request)
        for chunk in chunks:
            await answer.write(chunk)
        await answer.write_eof()
        return answer

    app = web.Application()
    app.router.add_post("/v1/messages", handle)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


if __name__ == "__main__":
    main()
