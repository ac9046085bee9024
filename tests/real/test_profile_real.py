"""Every capability of every installable harness, proven against the real binary.

A profile carrying unique markers is rendered into the run's isolated home;
the real harness runs against the mock; the proof is in what reached the
model and what happened on disk. A capability the adapter lacks must be
reported ``not supported`` (an absent key), never silently pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realkit import REAL

from tackroom.adapters.resolve import Adapter
from tackroom.probe.capabilities import CAPABILITIES, Probe, probe

pytestmark = pytest.mark.real


@pytest.mark.parametrize("capability", CAPABILITIES)
@pytest.mark.parametrize("harness", REAL, indirect=True)
def test_capability_is_proven_or_absent(
    harness: Adapter, capability: str, harness_environ: dict[str, str], tmp_path: Path
) -> None:
    row = probe(harness, capability, Probe(tmp_path, harness_environ, timeout_s=120))
    if getattr(harness.spec.capabilities, capability) is None:
        assert row.status == "not supported"
    else:
        assert row.status == "proven", f"{row.checks} {row.detail}"
