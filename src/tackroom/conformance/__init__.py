"""The conformance kit: checks an adapter author runs in their own tests.

::

    import tackroom
    from tackroom.conformance import assert_adapter_conformance, assert_adapter_loads_hooks

    def test_my_adapter_conforms() -> None:
        adapter = tackroom.load_adapters()["my-harness"]
        assert_adapter_conformance(adapter)   # every check below
        assert_adapter_loads_hooks(adapter)   # hooks rendered into a temp home come back

Loading an adapter already checks its shape and grammar; these checks go
further, each one a rule a loaded adapter can still break:

``renderers``
    every capability names an engine that exists, serves it and reads its
    format (the load check itself, reused for adapters built in code);
``hook-maps``
    a hooks capability maps at least one moment, each to its own event, and
    its inject and refuse channels work only at mapped moments and carry the
    message (``{{text}}`` once);
``tool-vocabulary``
    tool names are consistent across the model's tools, the hooks, the
    subagents and the mock: one harness name per neutral tool, hook renames
    only of tools the harness has, an MCP pattern and call the mock accepts;
``templates``
    every option template renders with a sample value that reaches the
    harness, no option or ``env.set`` undoes the run's isolation, and the
    model endpoint renders against the mock;
``family``
    the family is registered and has a stream parser that takes any line;
``detect``
    detection markers are plain relative paths inside a repository;
``round-trip``
    every engine imports back exactly what it rendered of a profile
    generated from the adapter (:func:`generated_profile`), in the home and
    in the project, and keeps at least one item of each kind;
``hooks-load``
    hooks rendered into a temp home are read back by the hooks engine's own
    parser, all of them (:func:`assert_adapter_loads_hooks`).

Each check returns ``(key path, message)`` pairs; :func:`check_adapter_conformance`
turns them into :class:`Finding` objects that name the file and line of the
key through the adapter's provenance, as load errors do. ``tackroom adapters
check NAME|FILE`` runs them all (:func:`check_targets`). The IO checks write
only into a temporary directory of their own, removed afterwards.
"""

from __future__ import annotations

from tackroom.conformance.findings import Finding
from tackroom.conformance.kit import (
    CHECKS,
    assert_adapter_conformance,
    assert_adapter_loads_hooks,
    check_adapter_conformance,
)
from tackroom.conformance.roundtrip import generated_profile
from tackroom.conformance.static import family_problems
from tackroom.conformance.targets import Report, check_file, check_targets
from tackroom.errors import ConformanceError

__all__ = [
    "CHECKS",
    "ConformanceError",
    "Finding",
    "Report",
    "assert_adapter_conformance",
    "assert_adapter_loads_hooks",
    "check_adapter_conformance",
    "check_file",
    "check_targets",
    "family_problems",
    "generated_profile",
]
