"""The shared mutation preconditions: messages, codes and their order."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from dsh_fs import CreateIfAbsent, EditGuard, FsError, FsErrorCode, ReplaceIfVersion
from dsh_fs.preconditions import (
    check_edit,
    check_write,
    not_directory,
    not_found,
    not_regular,
    parent_not_directory,
)

P = "/w/a.txt"


def _fails(call: Callable[..., None], *args: object) -> tuple[str, FsErrorCode]:
    with pytest.raises(FsError) as info:
        call(*args)
    return str(info.value), info.value.code


def test_write_to_a_non_regular_file_fails_before_any_intent() -> None:
    for intent in (None, CreateIfAbsent(), ReplaceIfVersion("other")):
        assert _fails(check_write, P, ("directory", "v1"), intent) == (
            'cannot write "/w/a.txt": not a regular file',
            FsErrorCode.FS_NOT_REGULAR_FILE,
        )


def test_replace_if_version_of_a_vanished_or_changed_file_is_stale() -> None:
    assert _fails(check_write, P, None, ReplaceIfVersion("v1")) == (
        'cannot write "/w/a.txt": file no longer exists',
        FsErrorCode.FS_STALE_VERSION,
    )
    assert _fails(check_write, P, ("file", "v2"), ReplaceIfVersion("v1")) == (
        'cannot write "/w/a.txt": file changed since it was read',
        FsErrorCode.FS_STALE_VERSION,
    )


def test_create_if_absent_over_an_existing_file_is_not_observed() -> None:
    assert _fails(check_write, P, ("file", "v1"), CreateIfAbsent()) == (
        'cannot overwrite existing "/w/a.txt" without reading it first',
        FsErrorCode.FS_NOT_OBSERVED,
    )


def test_writes_that_meet_their_intent_pass() -> None:
    check_write(P, None, None)
    check_write(P, ("file", "v1"), None)
    check_write(P, None, CreateIfAbsent())
    check_write(P, ("file", "v1"), ReplaceIfVersion("v1"))


def test_unguarded_edit_of_an_absent_file_is_not_found() -> None:
    assert _fails(check_edit, P, None, None) == (
        'cannot edit "/w/a.txt": not found',
        FsErrorCode.FS_NOT_FOUND,
    )


def test_guarded_edit_of_a_vanished_file_says_it_no_longer_exists() -> None:
    assert _fails(check_edit, P, None, EditGuard("v1")) == (
        'cannot edit "/w/a.txt": file no longer exists',
        FsErrorCode.FS_STALE_VERSION,
    )


@pytest.mark.parametrize(
    ("build", "message", "code"),
    [
        (not_found, 'cannot list "/w/a.txt": not found', FsErrorCode.FS_NOT_FOUND),
        (not_directory, 'cannot list "/w/a.txt": not a directory', FsErrorCode.FS_NOT_DIRECTORY),
        (
            parent_not_directory,
            'cannot list "/w/a.txt": a parent path segment is not a directory',
            FsErrorCode.FS_NOT_FOUND,
        ),
        (
            not_regular,
            'cannot list "/w/a.txt": not a regular file',
            FsErrorCode.FS_NOT_REGULAR_FILE,
        ),
    ],
)
def test_shared_refusals_are_spelled_once(
    build: Callable[[str, str], FsError], message: str, code: FsErrorCode
) -> None:
    err = build("list", P)
    assert (str(err), err.code) == (message, code)


def test_edit_checks_the_type_before_the_guard() -> None:
    assert _fails(check_edit, P, ("other", "v2"), EditGuard("v1")) == (
        'cannot edit "/w/a.txt": not a regular file',
        FsErrorCode.FS_NOT_REGULAR_FILE,
    )
    assert _fails(check_edit, P, ("file", "v2"), EditGuard("v1")) == (
        'cannot edit "/w/a.txt": file changed since it was read',
        FsErrorCode.FS_STALE_VERSION,
    )
    check_edit(P, ("file", "v1"), EditGuard("v1"))
    check_edit(P, ("file", "v1"), None)
