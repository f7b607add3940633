"""The two projections of the search tools, exactly as the model sees them."""

from __future__ import annotations

from dsh_tool_fs_search.glob_page import build_glob_page, render_glob
from dsh_tool_fs_search.grep_page import GrepPageBuilder, render_grep
from dsh_tool_fs_search.lines import MatchedLine


def test_a_glob_page_is_the_glob_envelope_with_its_count() -> None:
    page = build_glob_page(
        ["src/app.py", "tests/test_app.py"],
        display_path="/w",
        offset=1,
        max_results=100,
        max_bytes=51200,
        stopped=False,
        time_limit=30,
    )
    assert render_glob(page) == (
        "<path>/w</path>\n"
        "<type>glob</type>\n"
        "<content>\n"
        "src/app.py\n"
        "tests/test_app.py\n"
        "\n"
        "(2 files)\n"
        "</content>"
    )


def test_a_grep_page_groups_matches_by_file_with_a_blank_line_between() -> None:
    builder = GrepPageBuilder(offset=1, max_matches=100, max_line_length=2000, max_bytes=51200)
    for path, matches in [
        ("src/app.py", [(12, b"def main():"), (40, b"    main()")]),
        ("tests/test_app.py", [(3, b"from app import main")]),
    ]:
        builder.begin_file(path)
        for number, line in matches:
            builder.add(MatchedLine(number, line, 0, len(line)))
        builder.end_file()
    page = builder.finish("/w", stopped=False, time_limit=30)
    assert render_grep(page) == (
        "<path>/w</path>\n"
        "<type>grep</type>\n"
        "<content>\n"
        "src/app.py\n"
        "12: def main():\n"
        "40:     main()\n"
        "\n"
        "tests/test_app.py\n"
        "3: from app import main\n"
        "\n"
        "(3 matches in 2 files)\n"
        "</content>"
    )
