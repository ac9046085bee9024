"""The floor for the gateway benchmark: a bare aiohttp pass-through (no capture, no parsing, no store).

What any aiohttp proxy adds on this machine; tackroom's gateway is measured beside it.

    python benchmarks/gateway_passthrough.py PORT UPSTREAM_URL
"""

from __future__ import annotations

import sys

import aiohttp
from aiohttp import web

HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length", "accept-encoding"}


def main() -> None:
    port, upstream = int(sys.argv[1]), sys.argv[2].rstrip("/")
    session: aiohttp.ClientSession | None = None

    async def start(app: web.Application) -> None:
        nonlocal session
        session = aiohttp.ClientSession(auto_decompress=False, connector=aiohttp.TCPConnector(limit=0))

    async def stop(app: web.Application) -> None:
        if session is not None:
            await session.close()

    async def handle(request: web.Request) -> web.StreamResponse:
        assert session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        body = await request.read()
        async with session.request(
            request.method, upstream + request.path_qs, headers=headers, data=body
        ) as up:
            answer = web.StreamResponse(status=up.status)
            for name, value in up.headers.items():
                if name.lower() not in HOP:
                    answer.headers[name] = value
            await answer.prepare(request)
            while chunk := await up.content.readany():
                await answer.write(chunk)
            await answer.write_eof()
            return answer

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


if __name__ == "__main__":
    main()
