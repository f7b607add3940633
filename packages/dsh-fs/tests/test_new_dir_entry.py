"""``new_dir_entry`` builds exactly what the constructors build, only faster."""

from __future__ import annotations

import dataclasses

import pytest
from dsh_fs import FsDirEntry, FsTarget, new_dir_entry


@pytest.mark.parametrize(
    ("version", "size"), [(None, None), ("v1", None), ("v2", 12)], ids=["bare", "dir", "file"]
)
def test_new_dir_entry_equals_the_constructed_entry(version: str | None, size: int | None) -> None:
    built = new_dir_entry("a.txt", "file", "/k/a.txt", "/d/a.txt", version, size)
    expected = FsDirEntry("a.txt", "file", FsTarget("/k/a.txt", "/d/a.txt"), version, size)
    assert built == expected
    assert hash(built) == hash(expected)
    assert repr(built) == repr(expected)
    assert hash(built.target) == hash(expected.target)


def test_new_dir_entry_is_as_frozen_as_the_constructed_entry() -> None:
    built = new_dir_entry("d", "directory", "/k/d", "/d/d")
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.target.display_path = "/elsewhere"  # type: ignore[misc]


def test_new_dir_entry_fills_every_field() -> None:
    # A field added to the seam types would be left unset here: fail loudly.
    assert [f.name for f in dataclasses.fields(FsDirEntry)] == [
        "name", "type", "target", "version", "size",
    ]
    assert [f.name for f in dataclasses.fields(FsTarget)] == ["target_key", "display_path"]
