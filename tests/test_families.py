"""Every family is registered, satisfies the interface, and every adapter lands on one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tackroom.adapters.resolve import resolve_builtins
from tackroom.families import Family, family_names, get_family
from tackroom.families.base import PlainTextParser
from tackroom.trace.events import AssistantText, Finished


def test_every_builtin_adapter_has_a_registered_family() -> None:
    for name, adapter in resolve_builtins().items():
        family = get_family(adapter.family)
        assert isinstance(family, Family) and family.name == adapter.family, name


def test_every_family_is_used_and_makes_fresh_parsers() -> None:
    used = {adapter.family for adapter in resolve_builtins().values()}
    assert used == set(family_names())
    for name in family_names():
        family = get_family(name)
        assert family.stream, name
        assert family.parser() is not family.parser()


def test_verified_families_belong_to_verified_adapters() -> None:
    verified_adapters = {a.family for a in resolve_builtins().values() if a.spec.verified_with}
    for name in family_names():
        if get_family(name).verified:
            assert name in verified_adapters, name


def test_plain_text_parser_reports_stdout_and_nothing_invented() -> None:
    parser = PlainTextParser()
    assert parser.feed("hello") == [] and parser.feed("world") == []
    events = parser.close(0)
    assert events == [AssistantText(text="hello\nworld"), Finished(final_text="hello\nworld", ok=True)]
    assert PlainTextParser().close(2) == [Finished(final_text=None, ok=False)]


ENTRY_POINTS_ORACLE = """
import importlib.metadata, json, sys
from tackroom import _dists
from tackroom.families import GROUP, _entry_points
theirs = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=GROUP)}
def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
names = {d.metadata["Name"] for d in importlib.metadata.distributions()} | {"no-such-dist"}
versions = [{n: _dists.version(n) for n in names}, {n: _version(n) for n in names}]
print(json.dumps([_entry_points(), theirs, *versions]))
"""


def _dist(root: Path, stem: str, text: str | None) -> None:
    info = root / stem
    info.mkdir(parents=True)
    name, version = stem.rpartition(".")[0].partition("-")[::2]
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version or 0}\n\nVersion: not a header\n"
    (info / "METADATA" if stem.endswith("dist-info") else info / "PKG-INFO").write_text(metadata)
    if text is not None:
        (info / "entry_points.txt").write_text(text)


def test_entry_points_and_versions_are_found_as_importlib_metadata_finds_them(tmp_path: Path) -> None:
    """tackroom reads entry_points.txt and METADATA itself (importing importlib.metadata cost a third
    of a quick command's start); importlib.metadata is the oracle, in a process whose sys.path holds
    shadowed, commented, oddly named and entry-point-less distributions beside the installed ones."""
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(
        first,
        "Acme.Families-2.0.dist-info",
        "# a comment\n\n [tackroom.families] \n  acme = acme.fam:FAMILY  \n",
    )
    _dist(second, "acme_families-1.0.dist-info", "[tackroom.families]\nacme = old.fam:FAMILY\nold = old:F\n")
    _dist(
        second,
        "zeta-1.dist-info",
        "[console_scripts]\nzeta = zeta:main\n[tackroom.families]\nzeta = zeta:F\n",
    )
    _dist(second, "legacy.egg-info", "[tackroom.families]\nlegacy=legacy.mod:FAMILY.inner\n")
    _dist(second, "bare-3.dist-info", None)
    (second / "file-1.egg-info").write_text("Metadata-Version: 1.0\nName: file\n")
    done = subprocess.run(
        [sys.executable, "-c", ENTRY_POINTS_ORACLE],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{first}:{second}", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=True,
    )
    ours, theirs, our_versions, their_versions = json.loads(done.stdout)
    assert ours == theirs
    assert our_versions == their_versions
    assert our_versions["Acme.Families"] == "2.0" and our_versions["no-such-dist"] is None
    assert (
        ours["acme"] == "acme.fam:FAMILY" and "old" not in ours
    )  # the first acme-families shadows the second
    assert ours["zeta"] == "zeta:F" and ours["legacy"] == "legacy.mod:FAMILY.inner"
    assert ours["claude-code"] == "tackroom.families.claude_code:FAMILY"  # the installed ones too


def test_a_later_process_reuses_the_look_until_a_distribution_changes(tmp_path: Path) -> None:
    """The entry points of the last look are reused (its cache file is what answers) until a
    distribution is added, removed, gains entry points or has them edited; a damaged cache is a miss."""
    site = tmp_path / "site"
    _dist(site, "acme_families-1.0.dist-info", "[tackroom.families]\nacme = acme:F\n")
    _dist(site, "bare-3.dist-info", None)
    probe = (
        "import json; from tackroom._dists import _groups; print(json.dumps(_groups()['tackroom.families']))"
    )
    env = {"PYTHONPATH": str(site), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    work = tmp_path / "work"  # sys.path[0] of ``python -c``: not where the cache is written
    work.mkdir()

    def look() -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=work, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    assert look()["acme"] == "acme:F"
    cache = tmp_path / ".cache" / "tackroom" / "entry-points.json"
    data = json.loads(cache.read_text(encoding="utf-8"))
    data["groups"]["tackroom.families"]["planted"] = "planted:F"
    cache.write_text(json.dumps(data), encoding="utf-8")
    assert look()["planted"] == "planted:F"  # reused: nothing changed
    (work / "scratch").mkdir()
    assert look()["planted"] == "planted:F"  # a sys.path directory changed, but not its distributions
    (site / "acme_families-1.0.dist-info" / "entry_points.txt").write_text(
        "[tackroom.families]\nacme = b:F\n"
    )
    found = look()
    assert found["acme"] == "b:F" and "planted" not in found  # an edited entry_points.txt
    (site / "bare-3.dist-info" / "entry_points.txt").write_text("[tackroom.families]\nbare = bare:F\n")
    assert look()["bare"] == "bare:F"  # a distribution that gained entry points
    _dist(site, "zeta-1.dist-info", "[tackroom.families]\nzeta = zeta:F\n")
    assert look()["zeta"] == "zeta:F"  # a new distribution
    shutil.rmtree(site / "zeta-1.dist-info")
    assert "zeta" not in look()  # a removed one
    cache.write_text("{", encoding="utf-8")
    assert look()["acme"] == "b:F"  # a damaged cache: looked again
    env["TACKROOM_NO_CACHE"] = "1"
    cache.unlink()
    assert look()["acme"] == "b:F" and not cache.exists()


def test_the_built_in_hashes_are_hashlibs() -> None:
    """tackroom._hash skips hashlib's OpenSSL import; its hashes must be the same functions' output."""
    import hashlib
    import subprocess
    import sys

    from tackroom._hash import blake2b, sha256

    for data in (b"", b"tackroom", bytes(range(256)) * 9):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert blake2b(data, digest_size=16).hexdigest() == hashlib.blake2b(data, digest_size=16).hexdigest()
    probe = "import sys, tackroom.adapters.resolve, tackroom.trace.index; print('hashlib' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert found.stdout.strip() == "False", found.stderr
