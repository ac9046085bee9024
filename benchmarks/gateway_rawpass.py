"""A raw pass-through beside the aiohttp one: asyncio protocols on uvloop, httptools (llhttp) parsing.

No aiohttp on the path: the request is parsed with httptools, sent on a kept-alive raw
upstream connection, and the answer's bytes go back to the client as they arrive (its
framing, chunked or not, passes verbatim; httptools only finds where it ends). No capture,
no store: what a proxy without aiohttp's per-request and per-chunk cost adds here.

    python benchmarks/gateway_rawpass.py PORT UPSTREAM_URL
"""

from __future__ import annotations

import asyncio
import sys
from urllib.parse import urlsplit

import httptools
import uvloop

HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"host", b"content-length", b"accept-encoding"}


class Upstream(asyncio.Protocol):
    """One kept-alive connection to the upstream; relays one answer at a time to a client."""

    def __init__(self, pool: list[Upstream]) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.client: Client | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.done = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no asyncio.Transport subclass

    def send(self, client: Client, request: bytes) -> None:
        assert self.transport is not None
        self.client, self.done = client, False
        self.transport.write(request)

    def data_received(self, data: bytes) -> None:
        client = self.client
        self.parser.feed_data(data)
        if client is not None and client.transport is not None:
            client.transport.write(data)
        if self.done:
            self.client = None
            self.pool.append(self)
            if client is not None:
                client.finished()

    def on_message_complete(self) -> None:
        self.done = True

    def connection_lost(self, exc: Exception | None) -> None:
        if self in self.pool:
            self.pool.remove(self)
        if self.client is not None and self.client.transport is not None:
            self.client.transport.close()


class Client(asyncio.Protocol):
    def __init__(self, host: str, port: int, pool: list[Upstream]) -> None:
        self.host, self.port, self.pool = host, port, pool
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.url = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no asyncio.Transport subclass

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_message_begin(self) -> None:
        self.headers, self.body, self.url = [], [], b""

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        assert self.transport is not None
        self.transport.pause_reading()
        body = b"".join(self.body)
        method = self.parser.get_method()
        lines = [method + b" " + self.url + b" HTTP/1.1", b"host: " + f"{self.host}:{self.port}".encode()]
        lines += [n + b": " + v for n, v in self.headers if n.lower() not in HOP]
        lines.append(b"content-length: " + str(len(body)).encode())
        request = b"\r\n".join(lines) + b"\r\n\r\n" + body
        if self.pool:
            self.pool.pop().send(self, request)
        else:
            asyncio.get_running_loop().create_task(self.connect(request))

    async def connect(self, request: bytes) -> None:
        loop = asyncio.get_running_loop()
        _, upstream = await loop.create_connection(lambda: Upstream(self.pool), self.host, self.port)
        upstream.send(self, request)

    def finished(self) -> None:
        if self.transport is not None:
            self.transport.resume_reading()


def main() -> None:
    port, upstream = int(sys.argv[1]), urlsplit(sys.argv[2])
    host, up_port = upstream.hostname or "127.0.0.1", upstream.port or 80
    pool: list[Upstream] = []

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        factory = lambda: Client(host, up_port, pool)  # noqa: E731
        server = await loop.create_server(factory, "127.0.0.1", port, backlog=1024)
        async with server:
            await server.serve_forever()

    uvloop.run(serve())


if __name__ == "__main__":
    main()
