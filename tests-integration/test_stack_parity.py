"""The same tree on the local and the memory backend gives the same projections.

Both stacks come from entry points with the policy plugin. The tree::

    <root>/
    ├── docs/            (empty directory)
    ├── src/
    │   ├── main.py
    │   └── util.py
    ├── linkdir -> src   (symlink to a directory)
    ├── a.txt            (three lines)
    ├── B.txt
    ├── win.txt          (CRLF)
    ├── empty.txt
    ├── blob.bin         (binary)
    ├── "odd\\nname"     (a name with a newline)
    └── pipe             (a FIFO / "other" entry)

Every call of one scripted session runs on both; results must be equal once
the root path is replaced by ``<root>``. The search calls (``glob``, ``grep``)
run on the tree as built, with the same modification times on both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import Session, ToolFs

pytestmark = pytest.mark.anyio

TEXT_FILES: dict[str, bytes] = {
    "src/main.py": b"import util\n\nprint(util.x)\n",
    "src/util.py": b"x = 1\n",
    "a.txt": b"alpha\nbeta\ngamma\n",
    "B.txt": b"b\n",
    "win.txt": b"one\r\ntwo\r\n",
    "empty.txt": b"",
    "blob.bin": b"\x00\x01\x02",
    "odd\nname": b"odd\n",
}

SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("list", {}),
    ("list", {"path": "src"}),
    ("list", {"path": "linkdir"}),
    ("list", {"path": "docs"}),
    ("list", {"offset": 9}),
    ("list", {"path": "a.txt"}),
    ("list", {"path": "missing"}),
    ("read", {"file_path": "a.txt"}),
    ("read", {"file_path": "a.txt", "offset": 2, "limit": 1}),
    ("read", {"file_path": "a.txt", "offset": 4}),
    ("read", {"file_path": "win.txt"}),
    ("read", {"file_path": "empty.txt"}),
    ("read", {"file_path": "blob.bin"}),
    ("read", {"file_path": "src"}),
    ("read", {"file_path": "pipe"}),
    ("read", {"file_path": "missing.txt"}),
    ("read", {"file_path": "odd\nname"}),
    ("read", {"file_path": "linkdir/util.py"}),
    ("edit", {"file_path": "B.txt", "old_string": "b", "new_string": "c"}),
    ("write", {"file_path": "B.txt", "content": "c\n"}),
    ("write", {"file_path": "new/file.txt", "content": "fresh\n"}),
    ("edit", {"file_path": "new/file.txt", "old_string": "fresh", "new_string": "FRESH"}),
    ("edit", {"file_path": "a.txt", "old_string": "a", "new_string": "A"}),
    ("edit", {"file_path": "a.txt", "old_string": "zzz", "new_string": "A"}),
    ("edit", {"file_path": "a.txt", "old_string": "a", "new_string": "A", "replace_all": True}),
    ("edit", {"file_path": "win.txt", "old_string": "two", "new_string": "2"}),
    ("write", {"file_path": "a.txt", "content": "rewritten\n"}),
    ("read", {"file_path": "util.py"}),
    ("edit", {"file_path": "util.py", "old_string": "1", "new_string": "2"}),
    ("list", {"path": "new"}),
    ("grep", {}),
    ("read", {"file_path": ""}),
]

# glob and grep (dsh-tool-fs-search, installed in the workspace) on the tree as built: the
# writes above would give the trees modification times of two different clocks.
SEARCH_SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("glob", {"pattern": "*"}),
    ("glob", {"pattern": "**/*.py"}),
    ("glob", {"pattern": "*", "path": "linkdir"}),
    ("glob", {"pattern": "*", "path": "a.txt"}),
    ("grep", {"pattern": "a"}),
    ("grep", {"pattern": "^two$", "include": "*.txt"}),
    ("grep", {"pattern": "x", "path": "src/util.py"}),
    ("grep", {"pattern": "(", "path": "src"}),
]

# Modification times (seconds after an epoch of our own) set on both trees: the search order.
MODIFIED = {rel: (1_700_000_000 + i) * 10**9 for i, rel in enumerate(TEXT_FILES)}


def build_local(root: Path) -> ToolFs:
    for rel, data in TEXT_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "docs").mkdir()
    os.symlink("src", root / "linkdir")
    os.mkfifo(root / "pipe")
    for rel, modified in MODIFIED.items():
        os.utime(root / rel, ns=(modified, modified))
    return ToolFs.from_entry_points(backend="local", plugins=("policy",), cwd=str(root))


def build_memory(root: str) -> ToolFs:
    tool = ToolFs.from_entry_points(backend="memory", plugins=("policy",), cwd=root)
    fs = tool.fs
    assert isinstance(fs, MemoryFileSystem)
    for rel, data in TEXT_FILES.items():
        fs.put_bytes(f"{root}/{rel}", data)
    fs.mkdir(f"{root}/docs")
    fs.add_symlink(f"{root}/linkdir", "src")
    fs.add_other(f"{root}/pipe")
    for rel, modified in MODIFIED.items():
        fs.set_modified_ns(f"{root}/{rel}", modified)
    return tool


def normalized(result: Any, root: str) -> Any:
    return json.loads(json.dumps(result.to_dict()).replace(json.dumps(root)[1:-1], "<root>"))


async def test_local_and_memory_give_the_same_projections(workspace: Path) -> None:
    local = build_local(workspace)
    memory = build_memory("/srv/ws")
    sessions = (Session(), Session())
    # Calls on util.py run in a second session whose cwd is src/.
    src_sessions = (Session(cwd=str(workspace / "src")), Session(cwd="/srv/ws/src"))
    for name, args in SCRIPT:
        lsess, msess = src_sessions if args.get("file_path") == "util.py" else sessions
        got_local = normalized(await local.execute(name, args, session=lsess), str(workspace))
        got_memory = normalized(await memory.execute(name, args, session=msess), "/srv/ws")
        assert got_local == got_memory, (name, args)


async def test_local_and_memory_give_the_same_search_results(workspace: Path) -> None:
    local = build_local(workspace)
    memory = build_memory("/srv/ws")
    for name, args in SEARCH_SCRIPT:
        got_local = normalized(await local.execute(name, args), str(workspace))
        got_memory = normalized(await memory.execute(name, args), "/srv/ws")
        assert got_local == got_memory, (name, args)
    found = normalized(await local.execute("glob", {"pattern": "*"}), str(workspace))
    assert found["value"]["files"] == [
        "odd\nname",
        "blob.bin",
        "empty.txt",
        "win.txt",
        "B.txt",
        "a.txt",
        "src/util.py",
        "src/main.py",
    ]


async def test_the_root_listing_is_the_same_text(workspace: Path) -> None:
    local = build_local(workspace)
    memory = build_memory("/srv/ws")
    expected = (
        "<path><root></path>\n<type>directory</type>\n<content>\n"
        "docs/\nlinkdir/\nsrc/\na.txt\nB.txt\nblob.bin\nempty.txt\n"
        '"odd\\nname"\nwin.txt\npipe@\n\n'
        "(10 entries: 3 directories, 6 files, 1 other)\n</content>"
    )
    assert normalized(await local.execute("list", {}), str(workspace))["text"] == expected
    assert normalized(await memory.execute("list", {}), "/srv/ws")["text"] == expected
