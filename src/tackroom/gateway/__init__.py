"""tackroom.gateway: a capturing proxy between harnesses and model providers.

Every model call passing through is forwarded as it is (streams byte for
byte), attributed to a trace (``/t/<trace-id>/...``), and stored once it ends:
the model asked for and served, timings, normalized usage, cost, and the
bodies (secrets redacted, history deduplicated). See :class:`Gateway`.
"""

from tackroom.gateway.capture import CallUsage
from tackroom.gateway.server import Gateway, keys_from_env, upstream_map
from tackroom.gateway.store import Call, CaptureStore, SQLiteCaptureStore

__all__ = [
    "Call",
    "CallUsage",
    "CaptureStore",
    "Gateway",
    "SQLiteCaptureStore",
    "keys_from_env",
    "upstream_map",
]
