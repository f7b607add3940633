"""``FsError`` and ``FsErrorCode``: the one failure type of the stack."""

from __future__ import annotations

import copy
import pickle

import pytest
from dsh_fs import FsError, FsErrorCode


def test_error_codes_are_exactly_the_documented_set() -> None:
    assert [code.value for code in FsErrorCode] == [
        "FS_NOT_FOUND",
        "FS_NOT_DIRECTORY",
        "FS_NOT_TEXT",
        "FS_NOT_REGULAR_FILE",
        "FS_PERMISSION_DENIED",
        "FS_IO_ERROR",
        "FS_STALE_VERSION",
        "FS_NOT_OBSERVED",
        "FS_AMBIGUOUS_EDIT",
        "FS_EDIT_NOT_FOUND",
        "FS_ABORTED",
        "FS_OUTSIDE_WORKSPACE",
        "FS_READ_ONLY",
        "FS_TOO_LARGE",
        "FS_NOT_EMPTY",
        "FS_ALREADY_EXISTS",
    ]
    assert all(code == code.name for code in FsErrorCode)


def test_str_of_an_error_is_its_message_and_code_is_kept() -> None:
    err = FsError('cannot read "/w/a.txt": not found', FsErrorCode.FS_NOT_FOUND)
    assert str(err) == 'cannot read "/w/a.txt": not found'
    assert err.message == str(err)
    assert err.code is FsErrorCode.FS_NOT_FOUND
    assert err.args == ('cannot read "/w/a.txt": not found',)


def test_code_given_as_a_plain_string_becomes_the_enum_member() -> None:
    err = FsError("x", "FS_IO_ERROR")  # type: ignore[arg-type]
    assert err.code is FsErrorCode.FS_IO_ERROR


def test_unknown_code_is_refused() -> None:
    with pytest.raises(ValueError):
        FsError("x", "FS_SOMETHING_ELSE")  # type: ignore[arg-type]


def test_cannot_builds_the_usual_message_shape() -> None:
    err = FsError.cannot("write", "/w/d", "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE)
    assert isinstance(err, FsError)
    assert str(err) == 'cannot write "/w/d": not a regular file'
    assert err.code is FsErrorCode.FS_NOT_REGULAR_FILE


def test_repr_names_message_and_code() -> None:
    err = FsError("boom", FsErrorCode.FS_IO_ERROR)
    assert repr(err) == "FsError('boom', FS_IO_ERROR)"


def test_error_survives_pickling_and_copying() -> None:
    err = FsError.cannot("edit", "/w/é.txt", "binary file", FsErrorCode.FS_NOT_TEXT)
    for clone in (pickle.loads(pickle.dumps(err)), copy.copy(err), copy.deepcopy(err)):
        assert type(clone) is FsError
        assert (str(clone), clone.code) == ('cannot edit "/w/é.txt": binary file', err.code)


def test_subclass_survives_pickling_as_itself() -> None:
    class Special(FsError):
        pass

    globals()["Special"] = Special
    Special.__qualname__ = "Special"
    clone = pickle.loads(pickle.dumps(Special("m", FsErrorCode.FS_ABORTED)))
    assert type(clone) is Special
    assert clone.code is FsErrorCode.FS_ABORTED


def test_original_exception_is_chained_as_cause() -> None:
    try:
        try:
            raise FileNotFoundError(2, "No such file")
        except OSError as exc:
            raise FsError('cannot read "/x": not found', FsErrorCode.FS_NOT_FOUND) from exc
    except FsError as err:
        assert isinstance(err.__cause__, FileNotFoundError)
