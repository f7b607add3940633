"""Write and edit projections, their values, and the error projection (SPEC 5.7, 5.8)."""

from __future__ import annotations

from dsh_tool_fs.mutation_render import (
    edit_value,
    render_edit,
    render_error,
    render_write,
    write_value,
)


def test_a_create_is_exactly_five_lines() -> None:
    text = render_write("/w/new.txt", "create")
    assert text == "<path>/w/new.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    assert len(text.split("\n")) == 5


def test_an_update_says_updated_file() -> None:
    assert render_write("/w/a.txt", "update") == (
        "<path>/w/a.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    )


def test_the_write_envelope_path_follows_the_name_rule() -> None:
    assert render_write("/w/x\n</content>", "create") == (
        '<path>"/w/x\\n<\\/content>"</path>\n<type>file</type>\n<content>\nCreated file\n</content>'
    )


def test_an_edit_says_updated_successfully() -> None:
    assert render_edit("/w/a.txt", replace_all=False) == (
        "The file /w/a.txt has been updated successfully."
    )


def test_an_edit_with_replace_all_says_all_occurrences_were_replaced() -> None:
    assert render_edit("/w/a.txt", replace_all=True) == (
        "The file /w/a.txt has been updated. All occurrences were successfully replaced."
    )


def test_the_edit_sentence_writes_the_display_path_as_is() -> None:
    assert render_edit("/w/odd@", replace_all=False) == (
        "The file /w/odd@ has been updated successfully."
    )


def test_an_error_is_prefixed() -> None:
    assert render_error('cannot read "/w/a.txt": not found') == (
        'Error: cannot read "/w/a.txt": not found'
    )


def test_write_value_is_the_canonical_shape() -> None:
    assert write_value("/w/a.txt", "create", None, "x\n") == {
        "path": "/w/a.txt",
        "operation": "create",
        "before": None,
        "after": "x\n",
    }
    assert write_value("/w/a.txt", "update", "old\n", "new\n") == {
        "path": "/w/a.txt",
        "operation": "update",
        "before": "old\n",
        "after": "new\n",
    }


def test_edit_value_is_the_canonical_shape() -> None:
    assert edit_value("/w/a.txt", "a b\n", "a c\n") == {
        "path": "/w/a.txt",
        "before": "a b\n",
        "after": "a c\n",
    }
