"""Round-trip fidelity: what a write or an edit must keep about a file.

What users of other agent tools most often report broken, checked after both
``write`` and ``edit`` through ``ToolFs`` on the local backend:

* a symlink stays a symlink (same target text), its target gets the content;
* a hard-linked file keeps its inode, so every name sees the change;
* permission bits (the executable bit, setgid, odd modes) and owner/group;
* a CRLF file has no LF-only line after an edit; a BOM survives an edit;
* a Latin-1 or Shift-JIS file is refused ``FS_NOT_TEXT`` by read and edit and
  left byte-identical — never rewritten with replacement characters.

By design (SPEC 3.1) ``write`` stores exactly the content it is given: it does
not re-apply a CRLF line ending or a BOM, and (without the policy, or after a
read the policy accepts) it replaces a non-UTF-8 file whole. Those rows pin
that documented behaviour rather than hide it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from dsh_fs import load_plugin
from dsh_fs_local import LocalFileSystem, new_file_mode
from dsh_reliability_kit import leftovers, snapshot_tree
from dsh_tool_fs import Session, ToolFs, ToolResult

NOBODY = 65534
NOGROUP = 65534


class Agent:
    """One session of the full stack on the local backend, rooted at ``root``."""

    def __init__(self, root: Path, *, policy: bool = True, contained: bool = True) -> None:
        plugins = ("policy",) if policy else ()
        self.root = root
        if contained:
            self.toolfs = ToolFs.from_entry_points(backend="local", plugins=plugins, cwd=str(root))
        else:
            self.toolfs = ToolFs(LocalFileSystem(str(root), roots=None))
            for name in plugins:
                self.toolfs.register(load_plugin(name), name=name)
        self.session = Session(cwd=str(root))

    async def call(self, tool: str, **args: Any) -> ToolResult:
        return await self.toolfs.execute(tool, args, session=self.session)

    async def ok(self, tool: str, **args: Any) -> ToolResult:
        result = await self.call(tool, **args)
        assert not result.is_error, result.text
        return result

    async def change(self, tool: str, path: str, old: str, new: str) -> None:
        """Read ``path``, then change ``old`` to ``new`` by ``tool`` (a whole write or an edit)."""
        read = await self.ok("read", file_path=path)
        if tool == "edit":
            await self.ok("edit", file_path=path, old_string=old, new_string=new)
        else:
            assert read.value is not None
            current = (self.root / path).read_bytes().decode("utf-8-sig")
            await self.ok("write", file_path=path, content=current.replace(old, new))


TOOLS = pytest.mark.parametrize("tool", ["write", "edit"])


@pytest.mark.anyio
@TOOLS
@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("link.txt", "real.txt"),
        ("sub/link.txt", "../real.txt"),
        ("abs-link.txt", "{root}/real.txt"),
        ("chain.txt", "link.txt"),
    ],
)
async def test_symlink_stays_a_symlink(root: Path, tool: str, link: str, target: str) -> None:
    (root / "real.txt").write_text("hello\n")
    (root / "sub").mkdir()
    (root / "link.txt").symlink_to("real.txt")
    text = target.replace("{root}", str(root))
    if link != "link.txt":
        (root / link).symlink_to(text)
    await Agent(root).change(tool, link, "hello", "bye")
    assert (root / link).is_symlink()
    assert os.readlink(root / link) == text
    assert (root / "real.txt").read_text() == "bye\n"
    assert leftovers(root) == []


@pytest.mark.anyio
@TOOLS
async def test_symlinked_parent_directory_stays_a_symlink(root: Path, tool: str) -> None:
    (root / "real").mkdir()
    (root / "real" / "f.txt").write_text("hello\n")
    (root / "alias").symlink_to("real")
    await Agent(root).change(tool, "alias/f.txt", "hello", "bye")
    assert os.readlink(root / "alias") == "real"
    assert (root / "real" / "f.txt").read_text() == "bye\n"


@pytest.mark.anyio
@TOOLS
@pytest.mark.parametrize("links", [2, 3])
async def test_hard_linked_file_keeps_its_inode(root: Path, tool: str, links: int) -> None:
    """SPEC 3.1's in-place rewrite: the behaviour without containment (roots=None)."""
    (root / "a.txt").write_text("hello\n")
    for i in range(1, links):
        (root / "other").mkdir(exist_ok=True)
        os.link(root / "a.txt", root / "other" / f"name{i}.txt")
    inode = os.stat(root / "a.txt").st_ino
    await Agent(root, contained=False).change(tool, "a.txt", "hello", "bye")
    assert os.stat(root / "a.txt").st_ino == inode
    assert os.stat(root / "a.txt").st_nlink == links
    for i in range(1, links):
        assert (root / "other" / f"name{i}.txt").read_text() == "bye\n"
    assert leftovers(root) == []


@pytest.mark.anyio
@TOOLS
@pytest.mark.parametrize("mode", [0o755, 0o700, 0o640, 0o604, 0o2755, 0o444])
async def test_permission_bits_are_kept(root: Path, tool: str, mode: int) -> None:
    path = root / "f.sh"
    path.write_text("echo hello\n")
    os.chmod(path, mode)
    await Agent(root).change(tool, "f.sh", "hello", "bye")
    assert stat.S_IMODE(os.stat(path).st_mode) == mode
    assert path.read_text() == "echo bye\n"


@pytest.mark.anyio
@TOOLS
async def test_owner_and_group_are_kept(root: Path, tool: str) -> None:
    if os.geteuid() != 0:
        pytest.fail("this check needs root (CI runs as root): it chowns to nobody:nogroup")
    path = root / "owned.txt"
    path.write_text("hello\n")
    os.chown(path, NOBODY, NOGROUP)
    os.chmod(path, 0o640)
    await Agent(root).change(tool, "owned.txt", "hello", "bye")
    info = os.stat(path)
    assert (info.st_uid, info.st_gid) == (NOBODY, NOGROUP)
    assert stat.S_IMODE(info.st_mode) == 0o640
    assert path.read_text() == "bye\n"


@pytest.mark.anyio
async def test_new_file_gets_the_umask_mode_and_missing_directories(root: Path) -> None:
    agent = Agent(root)
    await agent.ok("write", file_path="a/b/c/new.txt", content="x\n")
    assert stat.S_IMODE(os.stat(root / "a/b/c/new.txt").st_mode) == new_file_mode()
    assert (root / "a/b/c/new.txt").read_bytes() == b"x\n"


CRLF = b"one\r\ntwo\r\nthree\r\n"


def _lf_only_lines(data: bytes) -> int:
    return data.count(b"\n") - data.count(b"\r\n")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("old", "new"),
    [("two", "2"), ("two", "2\n2b\n2c"), ("one\ntwo", "1\r\n2"), ("three\n", "3\nfour\n")],
)
async def test_edit_of_crlf_file_leaves_no_lf_only_line(root: Path, old: str, new: str) -> None:
    (root / "f.txt").write_bytes(CRLF)
    agent = Agent(root)
    await agent.ok("read", file_path="f.txt")
    await agent.ok("edit", file_path="f.txt", old_string=old, new_string=new)
    data = (root / "f.txt").read_bytes()
    assert _lf_only_lines(data) == 0
    assert data.replace(b"\r\n", b"\n") == CRLF.replace(b"\r\n", b"\n").replace(
        old.replace("\r\n", "\n").encode(), new.replace("\r\n", "\n").encode()
    )


@pytest.mark.anyio
async def test_write_of_crlf_content_keeps_crlf_and_write_stores_exact_content(
    root: Path,
) -> None:
    (root / "f.txt").write_bytes(CRLF)
    agent = Agent(root)
    await agent.ok("read", file_path="f.txt")
    await agent.ok("write", file_path="f.txt", content="one\r\n2\r\nthree\r\n")
    assert _lf_only_lines((root / "f.txt").read_bytes()) == 0
    # Documented (SPEC 3.1): write stores exactly what it is given, LF included.
    await agent.ok("write", file_path="f.txt", content="one\n2\n")
    assert (root / "f.txt").read_bytes() == b"one\n2\n"


BOM = b"\xef\xbb\xbf"


@pytest.mark.anyio
@pytest.mark.parametrize("body", [b"one\ntwo\n", CRLF, b"one"])
async def test_edit_keeps_the_bom(root: Path, body: bytes) -> None:
    (root / "f.txt").write_bytes(BOM + body)
    agent = Agent(root)
    read = await agent.ok("read", file_path="f.txt")
    assert read.value is not None and read.value["lines"][0]["text"] == "one"
    await agent.ok("edit", file_path="f.txt", old_string="one", new_string="ONE")
    assert (root / "f.txt").read_bytes() == BOM + body.replace(b"one", b"ONE")
    await agent.ok("edit", file_path="f.txt", old_string="ONE", new_string="\ufeffone")
    # A BOM character inside the text is content like any other.
    assert (root / "f.txt").read_bytes() == BOM + body.replace(b"one", BOM + b"one")


@pytest.mark.anyio
async def test_write_stores_exactly_the_content_bom_or_not(root: Path) -> None:
    (root / "f.txt").write_bytes(BOM + b"one\n")
    agent = Agent(root)
    await agent.ok("read", file_path="f.txt")
    await agent.ok("write", file_path="f.txt", content="two\n")
    assert (root / "f.txt").read_bytes() == b"two\n"
    await agent.ok("write", file_path="f.txt", content="\ufefftwo\n")
    assert (root / "f.txt").read_bytes() == BOM + b"two\n"


LATIN_1 = "café au lait, crème brûlée\n".encode("latin-1")
SHIFT_JIS = "日本語のテキスト\nカタカナ\n".encode("shift_jis")
LEGACY = pytest.mark.parametrize(
    "data", [pytest.param(LATIN_1, id="latin-1"), pytest.param(SHIFT_JIS, id="shift-jis")]
)


def test_the_legacy_samples_are_not_utf8() -> None:
    for data in (LATIN_1, SHIFT_JIS):
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")


@pytest.mark.anyio
@LEGACY
async def test_non_utf8_file_is_refused_by_read_and_edit_and_left_identical(
    root: Path, data: bytes
) -> None:
    path = root / "legacy.txt"
    path.write_bytes(data)
    before = snapshot_tree(root)
    agent = Agent(root)
    p = f"{root}/legacy.txt"
    read = await agent.call("read", file_path="legacy.txt")
    assert read.text == f'Error: cannot read "{p}": invalid UTF-8 text'
    assert read.error is not None and read.error.code == "FS_NOT_TEXT"
    edit = await agent.call("edit", file_path="legacy.txt", old_string="a", new_string="b")
    assert edit.text == f'Error: edit requires reading "{p}" first — read the file, then retry'
    write = await agent.call("write", file_path="legacy.txt", content="x\n")
    assert write.text == (
        f'Error: cannot overwrite existing "{p}" without reading it first'
        " — read the file, then retry"
    )
    unguarded = Agent(root, policy=False)
    edit = await unguarded.call("edit", file_path="legacy.txt", old_string="a", new_string="b")
    assert edit.text == f'Error: cannot edit "{p}": invalid UTF-8 text'
    assert edit.error is not None and edit.error.code == "FS_NOT_TEXT"
    streamed = ToolFs.from_entry_points(
        backend="local", plugins=("policy",), cwd=str(root), config={"read_stream_min_size": 1}
    )
    read = await streamed.execute("read", {"file_path": "legacy.txt"}, session=agent.session)
    assert read.text == f'Error: cannot read "{p}": invalid UTF-8 text'
    assert snapshot_tree(root) == before


@pytest.mark.anyio
@LEGACY
async def test_unguarded_write_replaces_a_non_utf8_file_whole(root: Path, data: bytes) -> None:
    """Documented: write replaces content by design; ``before`` is null (not text)."""
    (root / "legacy.txt").write_bytes(data)
    result = await Agent(root, policy=False).ok("write", file_path="legacy.txt", content="new\n")
    assert result.value is not None
    assert result.value["operation"] == "update"
    assert result.value["before"] is None
    assert (root / "legacy.txt").read_bytes() == b"new\n"
