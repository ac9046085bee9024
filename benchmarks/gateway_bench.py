"""The gateway's added latency and throughput against a fast upstream on loopback (issue 11).

Three processes: a fast aiohttp upstream (an Anthropic answer, whole or as a
stream of N distinct deltas), ``tackroom gateway serve`` in front of it with
capture on (SQLite), and this client (aiohttp). Each case is run direct and
through the gateway, alternating, at each concurrency; the added latency is
the gateway's percentile minus the direct one. The gateway's peak RSS is read
from ``/proc``. (LiteLLM's proxy joins the comparison in a later part.)

    python benchmarks/gateway_bench.py [--requests 2000] [--events 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

UPSTREAM = Path(__file__).resolve().parent / "gateway_upstream.py"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_up(url: str) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(200):
            try:
                async with http.get(url) as answer:
                    await answer.read()
                    return
            except aiohttp.ClientError:
                await asyncio.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


async def load(base: str, streamed: bool, requests: int, concurrency: int) -> tuple[list[float], float]:
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 5, "stream": streamed, "messages": []})
    latencies: list[float] = []
    left = requests
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                started = time.perf_counter()
                async with http.post(f"{base}/v1/messages", data=body, headers={"x-api-key": "k"}) as answer:
                    await answer.read()
                    assert answer.status == 200
                latencies.append(time.perf_counter() - started)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return latencies, requests / (time.perf_counter() - began)


def pct(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100)[int(q) - 1] * 1000


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--events", type=int, default=200)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    up_port, gw_port = free_port(), free_port()
    upstream = subprocess.Popen([sys.executable, str(UPSTREAM), str(up_port), str(args.events)])
    env = {**os.environ, "XDG_DATA_HOME": str(tmp / "data"), "XDG_CACHE_HOME": str(tmp / "cache")}
    gateway = subprocess.Popen(
        [
            *(sys.executable, "-m", "tackroom", "gateway", "serve"),
            *(
                "--upstream",
                f"http://127.0.0.1:{up_port}",
                "--port",
                str(gw_port),
                "--db",
                str(tmp / "state.db"),
            ),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    direct, through = f"http://127.0.0.1:{up_port}", f"http://127.0.0.1:{gw_port}/t/bench"
    try:
        asyncio.run(wait_up(f"http://127.0.0.1:{gw_port}/health"))
        time.sleep(0.5)
        print("| case | concurrency | direct p50 ms | added p50 ms | added p99 ms | direct/s | gateway/s |")
        print("|---|---|---|---|---|---|---|")
        for streamed in (False, True):
            for concurrency in (1, 50, 100):
                asyncio.run(load(through, streamed, 200, concurrency))  # warm up
                d, d_rate = asyncio.run(load(direct, streamed, args.requests, concurrency))
                g, g_rate = asyncio.run(load(through, streamed, args.requests, concurrency))
                case = f"stream {args.events} events" if streamed else "whole"
                print(
                    f"| {case} | {concurrency} | {pct(d, 50):.2f} | {pct(g, 50) - pct(d, 50):+.2f} "
                    f"| {pct(g, 99) - pct(d, 99):+.2f} | {d_rate:.0f} | {g_rate:.0f} |"
                )
        print(f"gateway peak RSS: {peak_rss_mb(gateway.pid):.0f} MB")
    finally:
        for process in (gateway, upstream):
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
