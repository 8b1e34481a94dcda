"""The entry-point cache: same answer as importlib.metadata, served from the cache until something
installed changes, and never in the way when the cache is missing, corrupt or unwritable."""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from pi_core.loader import discovery as dc


def make_dist(root: Path, dist: str, module: str, entry: str, version: str = "1.0", value: str | None = None) -> Path:
    """A minimal installed distribution (dist-info with METADATA and entry_points.txt) plus its module."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(textwrap.dedent("""\
        LOADED = True
        def factory():
            return "made"
    """))
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[pi]\n{entry} = {value or module}\n\n[other]\nx = {module}\n")
    return info


def as_rows(eps: list) -> list[tuple]:
    return [(ep.name, ep.value, ep.group, ep.dist.name, ep.dist.version) for ep in eps]


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    return root


@pytest.fixture
def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = dc.scan

    def counting(group: str, paths: list[str]) -> list[dc.CachedEntryPoint]:
        calls.append(group)
        return real(group, paths)

    monkeypatch.setattr(dc, "scan", counting)
    return calls


def test_matches_importlib_metadata_for_the_real_environment(tmp_path: Path) -> None:
    expected = as_rows(list(importlib.metadata.entry_points(group="pi")))
    assert as_rows(dc.entry_points("pi", cache_dir=tmp_path)) == expected
    assert as_rows(dc.entry_points("pi", cache_dir=tmp_path)) == expected  # now from the cache
    assert "read" in {row[0] for row in expected}


def test_second_call_is_served_from_the_cache(site: Path, tmp_path: Path, count_scans: list[str]) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    first = dc.entry_points("pi", cache_dir=tmp_path / "cache", paths=[str(site)])
    second = dc.entry_points("pi", cache_dir=tmp_path / "cache", paths=[str(site)])
    assert as_rows(first) == as_rows(second) == [("alpha", "alpha_mod", "pi", "pi-alpha", "1.0")]
    assert count_scans == ["pi"]


def test_only_the_requested_group_is_returned_and_groups_are_cached_separately(site: Path, tmp_path: Path,
                                                                                 count_scans: list[str]) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    cache = tmp_path / "cache"
    assert [ep.name for ep in dc.entry_points("other", cache_dir=cache, paths=[str(site)])] == ["x"]
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]
    assert [ep.name for ep in dc.entry_points("other", cache_dir=cache, paths=[str(site)])] == ["x"]
    assert count_scans == ["other", "pi"]


def test_installing_a_distribution_invalidates_the_cache(site: Path, tmp_path: Path) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    cache = tmp_path / "cache"
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]
    make_dist(site, "pi-beta", "beta_mod", "beta")
    assert sorted(ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])) == ["alpha", "beta"]


def test_removing_a_distribution_invalidates_the_cache(site: Path, tmp_path: Path) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    info = make_dist(site, "pi-beta", "beta_mod", "beta")
    cache = tmp_path / "cache"
    assert len(dc.entry_points("pi", cache_dir=cache, paths=[str(site)])) == 2
    for child in info.iterdir():
        child.unlink()
    info.rmdir()
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]


def test_rewritten_entry_points_file_invalidates_the_cache(site: Path, tmp_path: Path) -> None:
    info = make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    cache = tmp_path / "cache"
    dc.entry_points("pi", cache_dir=cache, paths=[str(site)])
    (info / "entry_points.txt").write_text("[pi]\nrenamed = alpha_mod:factory\n")
    stamp = (info / "entry_points.txt").stat().st_mtime_ns + 5_000_000_000  # coarse-mtime filesystems
    os.utime(info / "entry_points.txt", ns=(stamp, stamp))
    assert as_rows(dc.entry_points("pi", cache_dir=cache, paths=[str(site)])) == [
        ("renamed", "alpha_mod:factory", "pi", "pi-alpha", "1.0")]


def test_first_distribution_of_a_name_on_the_path_wins(tmp_path: Path) -> None:
    early, late = tmp_path / "early", tmp_path / "late"
    make_dist(early, "pi-alpha", "alpha_one", "alpha", version="2.0")
    make_dist(late, "pi-alpha", "alpha_two", "alpha", version="1.0")
    eps = dc.entry_points("pi", cache_dir=tmp_path / "cache", paths=[str(early), str(late)])
    assert as_rows(eps) == [("alpha", "alpha_one", "pi", "pi-alpha", "2.0")]


def test_corrupt_cache_file_is_rescanned_and_replaced(site: Path, tmp_path: Path, count_scans: list[str]) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    cache = tmp_path / "cache"
    dc.entry_points("pi", cache_dir=cache, paths=[str(site)])
    (target,) = cache.iterdir()
    target.write_text('{"format": 1, "fingerprint": "x", "groups": {"pi": [{"na')
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]
    assert json.loads(target.read_text())["groups"]["pi"][0]["name"] == "alpha"
    assert count_scans == ["pi", "pi"]


def test_cache_rows_of_the_wrong_shape_count_as_a_miss(site: Path, tmp_path: Path) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    cache = tmp_path / "cache"
    dc.entry_points("pi", cache_dir=cache, paths=[str(site)])
    (target,) = cache.iterdir()
    data = json.loads(target.read_text())
    data["groups"]["pi"] = [{"unexpected": 1}]
    target.write_text(json.dumps(data))
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only directories")
def test_unwritable_cache_dir_still_answers(site: Path, tmp_path: Path) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    cache = tmp_path / "ro"
    cache.mkdir()
    cache.chmod(0o500)
    try:
        assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]
        assert list(cache.iterdir()) == []
    finally:
        cache.chmod(0o700)


def test_cache_dir_that_is_a_file_still_answers(site: Path, tmp_path: Path) -> None:
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=blocker, paths=[str(site)])] == ["alpha"]


def test_each_environment_gets_its_own_cache_file(site: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-site"
    make_dist(site, "pi-alpha", "alpha_mod", "alpha")
    make_dist(other, "pi-beta", "beta_mod", "beta")
    cache = tmp_path / "cache"
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(other)])] == ["beta"]
    assert [ep.name for ep in dc.entry_points("pi", cache_dir=cache, paths=[str(site)])] == ["alpha"]
    assert len(list(cache.iterdir())) == 2


def test_discovery_imports_nothing_and_load_imports_the_module(site: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "pi-lazy", "lazy_plugin_mod", "lazy", value="lazy_plugin_mod:factory")
    monkeypatch.syspath_prepend(str(site))
    (ep,) = dc.entry_points("pi", cache_dir=tmp_path / "cache", paths=[str(site)])
    assert "lazy_plugin_mod" not in sys.modules
    try:
        assert ep.load()() == "made"
        assert sys.modules["lazy_plugin_mod"].LOADED is True
    finally:
        sys.modules.pop("lazy_plugin_mod", None)


def test_invalid_value_raises_a_clear_error() -> None:
    ep = dc.CachedEntryPoint("bad", "not a module path!", "pi")
    with pytest.raises(ValueError, match="invalid value 'not a module path!'"):
        ep.load()


def test_default_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert dc.default_cache_dir() == tmp_path / "xdg" / "pi"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert dc.default_cache_dir() == Path.home() / ".cache" / "pi"
