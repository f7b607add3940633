"""The seam's value types are frozen dataclasses, whichever ``__init__`` builds them."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest
from dsh_fs import FsDirEntry, FsInfo, FsTarget

ENTRY = FsDirEntry("a.py", "file", FsTarget("/w/a.py", "/w/a.py"), "v1", 3, 7, symlink=False)


@pytest.mark.parametrize("cls", [FsTarget, FsDirEntry, FsInfo])
def test_the_constructor_takes_the_fields_in_order_with_their_defaults(cls: type) -> None:
    parameters = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)
    assert [p.name for p in parameters] == [f.name for f in fields]
    assert [p.default for p in parameters] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]


def test_an_entry_keeps_what_it_was_built_with() -> None:
    assert (ENTRY.name, ENTRY.type, ENTRY.version, ENTRY.size, ENTRY.modified_ns) == (
        "a.py",
        "file",
        "v1",
        3,
        7,
    )
    assert ENTRY.target == FsTarget("/w/a.py", "/w/a.py")
    assert ENTRY.symlink is False
    bare = FsDirEntry("d", "directory", FsTarget("/w/d", "/w/d"))
    assert (bare.version, bare.size, bare.modified_ns, bare.symlink) == (None, None, None, False)


@pytest.mark.parametrize("value", [ENTRY, ENTRY.target])
def test_a_field_cannot_be_assigned_or_deleted(value: object) -> None:
    name = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, name, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(value, name)


@pytest.mark.parametrize("value", [ENTRY, ENTRY.target])
def test_equal_values_hash_alike_and_survive_replace_and_pickle(value: object) -> None:
    twin = dataclasses.replace(value)  # type: ignore[type-var]
    assert twin == value and twin is not value
    assert hash(twin) == hash(value)
    assert pickle.loads(pickle.dumps(value)) == value
    assert {value, twin} == {value}


def test_replace_changes_only_the_named_field() -> None:
    changed = dataclasses.replace(ENTRY, size=4)
    assert changed.size == 4
    assert dataclasses.replace(changed, size=3) == ENTRY
