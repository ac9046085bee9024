"""tackroom: drive every coding-agent CLI through one interface, and prove what it configured was used.

The public API is what ``__all__`` lists; everything else may change. Names are
imported on first use, so ``import tackroom`` does no work.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Adapter": "tackroom.adapters.resolve",
    "AdapterSet": "tackroom.adapters.resolve",
    "load_adapters": "tackroom.adapters.resolve",
    "Endpoint": "tackroom.plan",
    "Plan": "tackroom.plan",
    "TackroomError": "tackroom.errors",
    "ConfigError": "tackroom.errors",
    "OptionError": "tackroom.errors",
    "UnsupportedOptionError": "tackroom.errors",
    "UnknownAdapterError": "tackroom.errors",
}

__all__ = [
    "Adapter",
    "AdapterSet",
    "ConfigError",
    "Endpoint",
    "OptionError",
    "Plan",
    "TackroomError",
    "UnknownAdapterError",
    "UnsupportedOptionError",
    "__version__",
    "load_adapters",
]

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter, AdapterSet, load_adapters
    from tackroom.errors import (
        ConfigError,
        OptionError,
        TackroomError,
        UnknownAdapterError,
        UnsupportedOptionError,
    )
    from tackroom.plan import Endpoint, Plan


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tackroom' has no attribute {name!r}")
    return getattr(import_module(module), name)
