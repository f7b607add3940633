"""FsPolicy's owner map: a weak map from owner to observations, freed on collection."""

from __future__ import annotations

import gc
import weakref
from types import SimpleNamespace
from typing import Any

import pytest
from dsh_fs import CreateIfAbsent, EditGuard, FsError, FsTarget, ReplaceIfVersion
from dsh_fs_policy import FsPolicy

TARGET = FsTarget("/w/a.txt", "/w/a.txt")


class Owner:
    """A session stand-in: hashable by identity, weakly referenceable."""


def actor_of(owner: Any) -> SimpleNamespace:
    return SimpleNamespace(session=owner, tool="test")


def test_an_owner_is_held_by_one_weak_reference_however_often_it_is_looked_up() -> None:
    policy = FsPolicy()
    owner = Owner()
    actor = actor_of(owner)
    policy.fs_observed(target=TARGET, version="v1", actor=actor)
    assert weakref.getweakrefcount(owner) == 1
    for _ in range(3):
        policy.fs_observed(target=TARGET, version="v2", actor=actor)
        assert policy.fs_write_intent(target=TARGET, actor=actor) == ReplaceIfVersion("v2")
        assert policy.fs_edit_intent(target=TARGET, actor=actor) == EditGuard("v2")
    assert weakref.getweakrefcount(owner) == 1
    assert policy.owner_count() == 1


def test_a_new_owner_never_inherits_a_collected_owners_state() -> None:
    policy = FsPolicy()
    for _ in range(200):  # CPython reuses the memory, hence the id, of a collected owner
        owner = Owner()
        policy.fs_observed(target=TARGET, version="v", actor=actor_of(owner))
        del owner
        fresh = Owner()
        assert policy.fs_write_intent(target=TARGET, actor=actor_of(fresh)) == CreateIfAbsent()
        with pytest.raises(FsError):
            policy.fs_edit_intent(target=TARGET, actor=actor_of(fresh))
        del fresh
    gc.collect()
    assert policy.owner_count() == 0


def test_owners_discarded_around_a_reset_are_freed() -> None:
    policy = FsPolicy()
    before, kept = Owner(), Owner()
    policy.fs_observed(target=TARGET, version="v1", actor=actor_of(before))
    policy.fs_observed(target=TARGET, version="v1", actor=actor_of(kept))
    policy.reset()
    assert policy.owner_count() == 0
    del before  # its callback belongs to the dropped map: harmless
    gc.collect()
    policy.fs_observed(target=TARGET, version="v2", actor=actor_of(kept))
    assert policy.observed_version(kept, TARGET.target_key) == "v2"
    assert policy.owner_count() == 1
    del kept
    gc.collect()
    assert policy.owner_count() == 0


def test_an_owner_in_a_reference_cycle_is_freed_by_the_collector() -> None:
    policy = FsPolicy()
    owner = Owner()
    owner.cycle = owner  # type: ignore[attr-defined]
    policy.fs_observed(target=TARGET, version="v", actor=actor_of(owner))
    del owner
    gc.collect()
    assert policy.owner_count() == 0


class ValueOwner:
    """Weakly referenceable but unhashable (equality without ``__hash__``)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValueOwner)

    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize(
    "owner",
    ["session-1", ("a", 1), ["a"], ValueOwner()],
    ids=["str", "tuple", "list", "unhashable"],
)
def test_an_owner_that_cannot_be_weakly_referenced_or_hashed_is_treated_as_no_owner(
    owner: Any,
) -> None:
    policy = FsPolicy()
    actor = actor_of(owner)
    policy.fs_observed(target=TARGET, version="v1", actor=actor)
    assert policy.owner_count() == 0
    assert policy.observed_version(owner, TARGET.target_key) is None
    assert policy.fs_write_intent(target=TARGET, actor=actor) == CreateIfAbsent()
    with pytest.raises(FsError) as info:
        policy.fs_edit_intent(target=TARGET, actor=actor)
    assert str(info.value) == 'edit requires reading "/w/a.txt" first'


def test_a_lookup_of_an_unknown_owner_records_nothing() -> None:
    policy = FsPolicy()
    assert policy.observed_version(Owner(), TARGET.target_key) is None
    assert policy.observed_version(None, TARGET.target_key) is None
    assert policy.owner_count() == 0
