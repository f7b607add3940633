"""The one offset-out-of-range rule of every paged result, and the number it echoes."""

from __future__ import annotations

import sys

import pytest
from dsh_fs import FsError, FsErrorCode
from dsh_tool_fs.paging import check_offset, decimal_text


def test_offset_past_the_last_item_is_not_found() -> None:
    with pytest.raises(FsError) as caught:
        check_offset(3, 2, "/w/a.txt", "2 lines")
    assert str(caught.value) == 'offset 3 is out of range for "/w/a.txt" (2 lines)'
    assert caught.value.code is FsErrorCode.FS_NOT_FOUND


def test_offset_out_of_range_names_the_display_path_as_is() -> None:
    with pytest.raises(FsError) as caught:
        check_offset(2, 0, "/w/odd@", "0 lines")
    assert str(caught.value) == 'offset 2 is out of range for "/w/odd@" (0 lines)'


def test_offset_one_with_nothing_to_show_is_an_empty_page() -> None:
    check_offset(1, 0, "/w/empty", "0 lines")


def test_offset_on_the_last_item_is_in_range() -> None:
    check_offset(2, 2, "/w/a.txt", "2 lines")


def test_an_offset_beyond_the_int_to_str_limit_is_echoed_whole() -> None:
    huge = 10**5000 + 7
    assert len(decimal_text(huge)) == 5001
    assert decimal_text(huge) == "1" + "0" * 4999 + "7"
    assert decimal_text(-huge) == "-" + decimal_text(huge)
    with pytest.raises(FsError) as caught:
        check_offset(huge, 3, "/w/a.txt", "3 lines")
    message = f'offset {"1" + "0" * 4999 + "7"} is out of range for "/w/a.txt" (3 lines)'
    assert str(caught.value) == message


def test_decimal_text_is_str_below_the_limit() -> None:
    limit = sys.get_int_max_str_digits()
    for number in (0, 7, -12, 10**100, 10 ** (limit - 1)):
        assert decimal_text(number) == str(number)
