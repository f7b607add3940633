"""The search tree every backend builds for the search contract (:mod:`._contract`)."""

from __future__ import annotations

from typing import Protocol

from dsh_fs.testing import Scratch

__all__ = ["BASE_NS", "SEARCH_TREE_FILES", "SECOND", "SearchScratch", "build_search_tree"]

SECOND = 10**9
BASE_NS = 1_700_000_000 * SECOND

SEARCH_TREE_FILES: dict[str, tuple[bytes, int]] = {
    ".gitignore": (b"*.log\nbuild/\n!keep.log\n", 1),
    ".ignore": (b"secret.txt\n", 1),
    ".git/HEAD": (b"ref: refs/heads/main\n", 1),
    ".git/info/exclude": (b"*.tmp\n", 1),
    "a.txt": (b"alpha\nbeta main\n", 5),
    "b.log": (b"main\n", 6),
    "keep.log": (b"main log\n", 4),
    "secret.txt": (b"main\n", 6),
    "x.tmp": (b"main\n", 6),
    "bin.dat": (b"main\x00\n", 9),
    "build/out.py": (b"main\n", 8),
    "src/app.py": (b"def main():\n    main()\n", 7),
    "src/Util.py": (b"x = 1\r\nmain = 2\r\n", 7),
    "src/sub/deep.py": (b"# main\n", 3),
    "odd\nname.txt": (b"nothing\n", 2),
}
"""The files of :func:`build_search_tree`: path → (content, modification second)."""


class SearchScratch(Scratch, Protocol):
    """The kit's scratch tree plus a way to set modification times out of band."""

    def set_modified(self, path: str, modified_ns: int) -> None:
        """Set the modification time of the file at ``path`` (relative to ``root``)."""


def build_search_tree(
    scratch: SearchScratch, *, symlinks: bool = True, special_files: bool = True
) -> None:
    """Build the search tree; modification times are ``BASE_NS`` + the second shown::

    root/
    ├── .gitignore        "*.log", "build/", "!keep.log"        1
    ├── .ignore           "secret.txt"                          1
    ├── .git/HEAD, .git/info/exclude ("*.tmp")                  1 (never entered)
    ├── a.txt             "alpha" / "beta main"                 5
    ├── b.log             ignored (*.log)                       6
    ├── keep.log          "main log" (re-included)              4
    ├── secret.txt        ignored (.ignore)                     6
    ├── x.tmp             ignored (.git/info/exclude)           6
    ├── bin.dat           "main\\0" (binary: grep skips it)      9
    ├── build/out.py      ignored directory                     8
    ├── src/app.py        "def main():" / "    main()"          7
    ├── src/Util.py       "x = 1" / "main = 2" (CRLF)           7
    ├── src/sub/deep.py   "# main"                              3
    ├── "odd\\nname.txt"   a name the name rule quotes           2
    ├── src/link.py -> app.py, linkdir -> src, dangling -> nope  (symlinks)
    └── fifo              neither file nor directory (special files)
    """
    for path, (data, _) in SEARCH_TREE_FILES.items():
        scratch.put(path, data)
    if symlinks:
        scratch.symlink("src/link.py", "app.py")
        scratch.symlink("linkdir", "src")
        scratch.symlink("dangling", "nope")
    if special_files:
        scratch.make_other("fifo")
    for path, (_, second) in SEARCH_TREE_FILES.items():
        scratch.set_modified(path, BASE_NS + second * SECOND)
