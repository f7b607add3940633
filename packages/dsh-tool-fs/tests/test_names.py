"""The name rule (SPEC 5.9): no output can be forged by a file name."""

from __future__ import annotations

import json
import os
import re
import unicodedata

import pytest
from dsh_tool_fs.names import needs_quoting, quote_name
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    "name",
    [
        "a.txt",
        "src",
        "/w/project/README.md",
        "naïve café.txt",
        "日本語",
        "space in name",
        "@start",
        "mid@dle",
        'mid"quote',
        "a<b",
        "a/b",
        "<content>",
        "",
    ],
)
def test_ordinary_names_stay_verbatim(name: str) -> None:
    assert quote_name(name) == name


def test_a_newline_is_escaped() -> None:
    assert quote_name("a\nb") == '"a\\nb"'


def test_a_closing_content_tag_is_escaped() -> None:
    assert quote_name("</content>") == '"<\\/content>"'


def test_a_closing_path_tag_is_escaped() -> None:
    assert quote_name("x</path>") == '"x<\\/path>"'


def test_every_closing_tag_start_is_escaped() -> None:
    assert quote_name("</a></b>") == '"<\\/a><\\/b>"'


def test_a_trailing_at_sign_is_quoted() -> None:
    assert quote_name("sock@") == '"sock@"'


def test_a_leading_double_quote_is_quoted_and_escaped() -> None:
    assert quote_name('"quoted"') == '"\\"quoted\\""'


def test_a_backslash_is_quoted_and_escaped() -> None:
    assert quote_name("a\\b") == '"a\\\\b"'


def test_an_undecodable_byte_is_a_lone_surrogate_written_as_lowercase_u_escape() -> None:
    name = os.fsdecode(b"caf\xff")
    assert name == "caf\udcff"
    assert quote_name(name) == '"caf\\udcff"'


def test_short_escapes_are_used_where_json_has_them() -> None:
    assert quote_name("\t\r\b\f\n") == '"\\t\\r\\b\\f\\n"'


def test_other_control_characters_use_lowercase_u_escapes() -> None:
    assert quote_name("a\x00\x1b\x1f") == '"a\\u0000\\u001b\\u001f"'


def test_del_and_c1_controls_are_escaped() -> None:
    assert quote_name("a\x7f") == '"a\\u007f"'
    assert quote_name("a\x85b\x9f") == '"a\\u0085b\\u009f"'


def test_other_non_ascii_is_kept_inside_a_quoted_name() -> None:
    assert quote_name("café\n") == '"café\\n"'


def test_right_to_left_override_is_format_not_control_and_stays_verbatim() -> None:
    name = "evil\u202etxt.exe"
    assert unicodedata.category("\u202e") == "Cf"
    assert quote_name(name) == name


def test_a_quoted_path_is_one_json_literal() -> None:
    path = "/w/dir\n(3 entries: 1 directory)\n</content>"
    assert quote_name(path) == '"/w/dir\\n(3 entries: 1 directory)\\n<\\/content>"'


# --- properties -------------------------------------------------------------------------

names = st.text(
    alphabet=st.one_of(
        st.characters(codec=None),
        st.sampled_from(["\n", "\r", "\\", '"', "@", "<", "/", "\x7f", "\x85", "\udcff"]),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    max_size=20,
)


def _no_surrogate_pair(name: str) -> bool:
    """No high surrogate right before a low one: JSON spells such a pair only as one
    astral character (see the test below); os.fsdecode never makes a high one."""
    return not re.search("[\ud800-\udbff][\udc00-\udfff]", name)


def test_a_high_then_low_lone_surrogate_reads_back_as_the_character_they_pair_to() -> None:
    rendered = quote_name("\ud800\udcff")
    assert rendered == '"\\ud800\\udcff"'
    assert json.loads(rendered) == "\U000100ff"  # JSON has no other spelling for the two


@settings(max_examples=500)
@given(name=names.filter(_no_surrogate_pair))
def test_quoted_names_parse_back_and_cannot_forge_output(name: str) -> None:
    rendered = quote_name(name)
    assert "\n" not in rendered
    assert "\r" not in rendered
    assert "</" not in rendered
    if rendered != name:
        assert rendered.startswith('"') and rendered.endswith('"')
        assert json.loads(rendered) == name


@settings(max_examples=300)
@given(name=names)
def test_quoting_happens_exactly_for_the_listed_features(name: str) -> None:
    special = (
        name.startswith('"')
        or name.endswith("@")
        or "\\" in name
        or "</" in name
        or any(unicodedata.category(c) in ("Cc", "Cs") for c in name)
    )
    assert needs_quoting(name) == special
    assert (quote_name(name) != name) == special
