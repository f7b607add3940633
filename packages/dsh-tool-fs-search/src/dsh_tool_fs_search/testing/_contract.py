"""The search contract (see :mod:`dsh_tool_fs_search.testing`)."""

from __future__ import annotations

import posixpath
from typing import Any

import anyio
import pytest
from dsh_fs.testing import ContractBase
from dsh_tool_fs import TOOLS, ToolFs, ToolResult

from ..glob_tool import GLOB
from ..grep_tool import GREP
from ._tree import SearchScratch, build_search_tree

__all__ = ["SearchContract"]

GREP_MAIN = (
    "src/app.py\n1: def main():\n2:     main()\n\n"
    "src/Util.py\n2: main = 2\n\n"
    "a.txt\n2: beta main\n\n"
    "keep.log\n1: main log\n\n"
    "src/sub/deep.py\n1: # main"
)
"""The body of ``grep main`` over the search tree."""

STREAMING = pytest.mark.parametrize("stream_min", [10485760, 1], ids=["read_text", "stream_text"])
"""Run a grep test with whole reads and with every file streamed: the results are the same."""


class SearchContract(ContractBase):
    """``glob`` and ``grep`` over the search tree, with the exact model-facing texts."""

    def tree(self, scratch: SearchScratch) -> None:
        build_search_tree(
            scratch, symlinks=self.supports_symlinks, special_files=self.supports_special_files
        )

    def toolfs(self, scratch: SearchScratch, **config: Any) -> ToolFs:
        """The four tools plus glob and grep over the scratch backend."""
        return ToolFs(scratch.fs, config=config or None, tools=(*TOOLS, GLOB, GREP))

    async def call(
        self, scratch: SearchScratch, tool: str, args: dict[str, Any], **config: Any
    ) -> ToolResult:
        with anyio.fail_after(30):
            return await self.toolfs(scratch, **config).execute(tool, args)

    def envelope(self, path: str, kind: str, content: str) -> str:
        return f"<path>{path}</path>\n<type>{kind}</type>\n<content>\n{content}\n</content>"

    # -- glob ---------------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_glob_lists_every_searched_file_newest_first(
        self, scratch: SearchScratch
    ) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "glob", {"pattern": "*"})
        body = (
            'bin.dat\nsrc/app.py\nsrc/Util.py\na.txt\nkeep.log\nsrc/sub/deep.py\n"odd\\nname.txt"\n'
            ".gitignore\n.ignore\n\n(9 files)"
        )
        assert result.text == self.envelope(scratch.root, "glob", body)
        assert result.value is not None
        assert result.value["files"][6] == "odd\nname.txt"
        assert result.value["totalFiles"] == 9

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("pattern", "body"),
        [
            ("**/*.py", "src/app.py\nsrc/Util.py\nsrc/sub/deep.py\n\n(3 files)"),
            ("*.py", "src/app.py\nsrc/Util.py\nsrc/sub/deep.py\n\n(3 files)"),
            ("src/*.py", "src/app.py\nsrc/Util.py\n\n(2 files)"),
            ("src/**", "src/app.py\nsrc/Util.py\nsrc/sub/deep.py\n\n(3 files)"),
            ("*.{txt,log}", 'a.txt\nkeep.log\n"odd\\nname.txt"\n\n(3 files)'),
            ("[ab]*", "bin.dat\nsrc/app.py\na.txt\n\n(3 files)"),
            ("/deep.py", "(No files found)"),
            ("*.md", "(No files found)"),
        ],
    )
    async def test_glob_matches_gitignore_style_patterns(
        self, scratch: SearchScratch, pattern: str, body: str
    ) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "glob", {"pattern": pattern})
        assert result.text == self.envelope(scratch.root, "glob", body)

    @pytest.mark.anyio
    async def test_glob_pages_with_offset(self, scratch: SearchScratch) -> None:
        self.tree(scratch)
        first = await self.call(scratch, "glob", {"pattern": "*.py"}, glob_max_results=2)
        assert first.text == self.envelope(
            scratch.root,
            "glob",
            "src/app.py\nsrc/Util.py\n\n(Showing files 1-2 of 3. Use offset=3 to continue.)",
        )
        last = await self.call(
            scratch, "glob", {"pattern": "*.py", "offset": 3}, glob_max_results=2
        )
        assert last.text == self.envelope(
            scratch.root, "glob", "src/sub/deep.py\n\n(Showing files 3-3 of 3.)"
        )
        past = await self.call(scratch, "glob", {"pattern": "*.py", "offset": 4})
        assert past.text == f'Error: offset 4 is out of range for "{scratch.root}" (3 files)'
        assert past.error is not None and past.error.code == "FS_NOT_FOUND"

    @pytest.mark.anyio
    async def test_glob_caps_the_page_at_read_max_bytes(self, scratch: SearchScratch) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "glob", {"pattern": "*.py"}, read_max_bytes=20)
        assert result.text == self.envelope(
            scratch.root,
            "glob",
            "src/app.py\n\n(Showing files 1-1 of 3. Use offset=2 to continue.)",
        )

    @pytest.mark.anyio
    async def test_glob_of_an_ignored_directory_given_as_path_searches_it(
        self, scratch: SearchScratch
    ) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "glob", {"pattern": "*", "path": "build"})
        assert result.text == self.envelope(f"{scratch.root}/build", "glob", "out.py\n\n(1 file)")

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("path", "message"),
        [
            ("a.txt", 'cannot glob "{root}/a.txt": not a directory'),
            ("missing", 'cannot glob "{root}/missing": not found'),
            ("../outside", 'cannot glob "{outside}": outside the workspace'),
        ],
    )
    async def test_glob_of_something_else_than_a_directory_is_an_error(
        self, scratch: SearchScratch, path: str, message: str
    ) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "glob", {"pattern": "*", "path": path})
        outside = posixpath.normpath(posixpath.join(scratch.root, "../outside"))
        assert result.text == "Error: " + message.format(root=scratch.root, outside=outside)

    # -- grep ---------------------------------------------------------------------------

    @pytest.mark.anyio
    @STREAMING
    async def test_grep_shows_matching_lines_grouped_by_file_newest_first(
        self, scratch: SearchScratch, stream_min: int
    ) -> None:
        self.tree(scratch)
        result = await self.call(
            scratch, "grep", {"pattern": "main"}, read_stream_min_size=stream_min
        )
        assert result.text == self.envelope(
            scratch.root, "grep", GREP_MAIN + "\n\n(6 matches in 5 files)"
        )
        assert result.value is not None
        first = {"path": "src/app.py", "line": 1, "text": "def main():"}
        assert result.value["matches"][0] == first
        assert (result.value["totalMatches"], result.value["totalFiles"]) == (6, 5)

    @pytest.mark.anyio
    @STREAMING
    async def test_grep_pages_with_offset(self, scratch: SearchScratch, stream_min: int) -> None:
        self.tree(scratch)
        config = {"grep_max_matches": 2, "read_stream_min_size": stream_min}
        pages = [
            await self.call(scratch, "grep", {"pattern": "main", "offset": o}, **config)
            for o in (1, 3, 5)
        ]
        assert [page.text for page in pages] == [
            self.envelope(
                scratch.root,
                "grep",
                "src/app.py\n1: def main():\n2:     main()\n\n"
                "(Showing matches 1-2 of 6 in 5 files. Use offset=3 to continue.)",
            ),
            self.envelope(
                scratch.root,
                "grep",
                "src/Util.py\n2: main = 2\n\na.txt\n2: beta main\n\n"
                "(Showing matches 3-4 of 6 in 5 files. Use offset=5 to continue.)",
            ),
            self.envelope(
                scratch.root,
                "grep",
                "keep.log\n1: main log\n\nsrc/sub/deep.py\n1: # main\n\n"
                "(Showing matches 5-6 of 6 in 5 files.)",
            ),
        ]
        past = await self.call(scratch, "grep", {"pattern": "main", "offset": 7}, **config)
        assert past.text == f'Error: offset 7 is out of range for "{scratch.root}" (6 matches)'

    @pytest.mark.anyio
    async def test_grep_caps_the_page_at_read_max_bytes(self, scratch: SearchScratch) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "grep", {"pattern": "main"}, read_max_bytes=30)
        assert result.text == self.envelope(
            scratch.root,
            "grep",
            "src/app.py\n1: def main():\n\n"
            "(Output capped. Showing matches 1-1 of 6 in 5 files. Use offset=2 to continue.)",
        )

    @pytest.mark.anyio
    async def test_grep_cuts_long_lines_with_the_read_suffix(self, scratch: SearchScratch) -> None:
        self.tree(scratch)
        result = await self.call(
            scratch, "grep", {"pattern": "def", "path": "src"}, read_max_line_length=5
        )
        assert result.text == self.envelope(
            f"{scratch.root}/src",
            "grep",
            "app.py\n1: def m... (line truncated to 5 chars)\n\n(1 match in 1 file)",
        )

    @pytest.mark.anyio
    @STREAMING
    @pytest.mark.parametrize(
        ("line", "pattern", "shown"),
        [
            (
                "a" * 30 + "needle" + "b" * 30,
                "needle",
                "...aaneedlebb... (line truncated to 10 chars around the first match)",
            ),
            (
                "a" * 30 + "needle",
                "needle$",
                "...aaaaneedle (line truncated to 10 chars around the first match)",
            ),
            (
                "é" * 20 + "b" * 30 + "c",
                "b+",
                "...bbbbbbbbbb... (line truncated to 10 chars around the first match)",
            ),
            ("abcdefghijklmnop", "d.f", "abcdefghij... (line truncated to 10 chars)"),
        ],
        ids=["middle", "end", "longer-than-the-cut", "within-the-start"],
    )
    async def test_grep_shows_a_long_line_around_its_first_match(
        self, scratch: SearchScratch, stream_min: int, line: str, pattern: str, shown: str
    ) -> None:
        scratch.put("long.txt", f"short\n{line}\n".encode())
        result = await self.call(
            scratch,
            "grep",
            {"pattern": pattern},
            read_max_line_length=10,
            read_stream_min_size=stream_min,
        )
        assert result.text == self.envelope(
            scratch.root, "grep", f"long.txt\n2: {shown}\n\n(1 match in 1 file)"
        )
        assert result.value is not None
        assert result.value["matches"][0]["text"] == shown

    @pytest.mark.anyio
    @STREAMING
    async def test_grep_of_one_file_heads_the_group_with_its_name(
        self, scratch: SearchScratch, stream_min: int
    ) -> None:
        self.tree(scratch)
        result = await self.call(
            scratch,
            "grep",
            {"pattern": "1$", "path": "src/Util.py"},
            read_stream_min_size=stream_min,
        )
        assert result.text == self.envelope(
            f"{scratch.root}/src/Util.py", "grep", "Util.py\n1: x = 1\n\n(1 match in 1 file)"
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("args", "body"),
        [
            ({"pattern": "MAIN"}, "(No matches)"),
            ({"pattern": "MAIN", "ignore_case": True}, GREP_MAIN + "\n\n(6 matches in 5 files)"),
            (
                {"pattern": "main", "include": "*.log"},
                "keep.log\n1: main log\n\n(1 match in 1 file)",
            ),
            (
                {"pattern": "^main", "include": "src/**"},
                "src/Util.py\n2: main = 2\n\n(1 match in 1 file)",
            ),
            ({"pattern": "main", "path": "build"}, "out.py\n1: main\n\n(1 match in 1 file)"),
            ({"pattern": "a\\nb"}, "(No matches)"),
        ],
    )
    async def test_grep_options(
        self, scratch: SearchScratch, args: dict[str, Any], body: str
    ) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "grep", args)
        path = scratch.root + ("/build" if "path" in args else "")
        assert result.text == self.envelope(path, "grep", body)

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("args", "message"),
        [
            ({"pattern": ""}, "pattern must be a non-empty string"),
            ({"pattern": "(x"}, "pattern is not a valid regular expression: missing ): (x"),
            (
                {"pattern": "(?<=a)b"},
                "pattern is not a valid regular expression: invalid perl operator: (?<=",
            ),
            ({"pattern": "x", "include": ""}, "include must be a non-empty string when given"),
            ({"pattern": "x", "path": " "}, "path must be a non-empty string when given"),
            ({"pattern": "x", "offset": 0}, "offset must be a positive integer"),
            ({"pattern": "x", "ignore_case": 1}, "ignore_case must be a boolean"),
        ],
    )
    async def test_grep_validates_its_arguments_first(
        self, scratch: SearchScratch, args: dict[str, Any], message: str
    ) -> None:
        result = await self.call(scratch, "grep", args)
        assert result.text == f"Error: {message}"
        assert result.error is not None
        assert (result.error.name, result.error.code) == ("ToolArgumentError", "INVALID_ARGUMENTS")

    @pytest.mark.anyio
    async def test_glob_validates_its_pattern(self, scratch: SearchScratch) -> None:
        result = await self.call(scratch, "glob", {"pattern": ""})
        assert result.text == "Error: pattern must be a non-empty string"
        missing = await self.call(scratch, "glob", {})
        assert missing.text == "Error: pattern is required"

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("path", "message"),
        [
            ("missing", 'cannot grep "{root}/missing": not found'),
            ("../outside", 'cannot grep "{outside}": outside the workspace'),
        ],
    )
    async def test_grep_of_a_missing_or_outside_path_is_an_error(
        self, scratch: SearchScratch, path: str, message: str
    ) -> None:
        self.tree(scratch)
        result = await self.call(scratch, "grep", {"pattern": "x", "path": path})
        outside = posixpath.normpath(posixpath.join(scratch.root, "../outside"))
        assert result.text == "Error: " + message.format(root=scratch.root, outside=outside)

    @pytest.mark.anyio
    @pytest.mark.parametrize("stream_min", [10485760, 1], ids=["read_text", "stream_text"])
    async def test_grep_skips_a_file_whose_invalid_utf8_comes_after_its_matches(
        self, scratch: SearchScratch, stream_min: int
    ) -> None:
        """A 3 MB file (several stream chunks) with a match first and a bad byte last."""
        scratch.put("late.txt", b"needle\n" + b"filler line\n" * 250_000 + b"\xff\n")
        scratch.put("good.txt", b"needle\n")
        result = await self.call(
            scratch, "grep", {"pattern": "needle"}, read_stream_min_size=stream_min
        )
        assert result.text == self.envelope(
            scratch.root, "grep", "good.txt\n1: needle\n\n(1 match in 1 file)"
        )

    @pytest.mark.anyio
    async def test_links_out_of_the_workspace_are_neither_walked_nor_searched(
        self, scratch: SearchScratch
    ) -> None:
        """
        outside/secret.txt       "needle"   (beside the workspace root)
        root/own.txt             "needle"
        root/to_secret -> ../outside/secret.txt
        root/to_outside -> ../outside
        """
        self.require("supports_symlinks")
        scratch.put("../outside/secret.txt", b"needle\n")
        scratch.put("own.txt", b"needle\n")
        scratch.symlink("to_secret", "../outside/secret.txt")
        scratch.symlink("to_outside", "../outside")
        found = await self.call(scratch, "grep", {"pattern": "needle"})
        assert found.text == self.envelope(
            scratch.root, "grep", "own.txt\n1: needle\n\n(1 match in 1 file)"
        )
        listed = await self.call(scratch, "glob", {"pattern": "**"})
        assert listed.text == self.envelope(scratch.root, "glob", "own.txt\n\n(1 file)")
        for tool, path in (("grep", "to_secret"), ("grep", "to_outside"), ("glob", "to_outside")):
            refused = await self.call(scratch, tool, {"pattern": "needle", "path": path})
            assert refused.text == (
                f'Error: cannot {tool} "{scratch.root}/{path}": outside the workspace'
            )

    @pytest.mark.anyio
    async def test_grep_is_linear_on_a_pattern_that_backtracks_exponentially(
        self, scratch: SearchScratch
    ) -> None:
        """``(a+)+$`` against 100,000 ``a`` and a ``b``: minutes for a backtracking engine."""
        scratch.put("evil.txt", b"a" * 100_000 + b"b\n")
        with anyio.fail_after(10):
            result = await self.call(scratch, "grep", {"pattern": "(a+)+$"})
        assert result.text == self.envelope(scratch.root, "grep", "(No matches)")
