"""Contract of workspace containment, through the constructor parameters.

Kept as one module: every case works on the one tree drawn below.

Every test builds its backend with ``scratch.backend(cwd, roots=…,
read_only_roots=…, read_only=…)`` over this tree (``<root>`` is
``scratch.root``)::

    <root>/
    ├── ws/                       the workspace: cwd and its one root
    │   ├── inside.txt            "inside\\n"
    │   └── sub/
    │       └── f.txt             "sub\\n"
    ├── outside/
    │   ├── secret.txt            "secret\\n"
    │   ├── bin.dat               binary
    │   └── dir/
    ├── ws-old/                   the prefix sibling of ws
    │   └── secret.txt            "old secret\\n"
    └── lib/                      a read-only root where a test asks for one
        └── doc.txt               "doc\\n"

Symlink tests add their links inside ``ws/`` (``supports_symlinks``). To
check that *every primitive* enforces the rule, not only ``resolve``, a test
resolves ``ws/d/<name>`` while ``d`` is a directory inside, then swaps ``d``
for a symlink to ``../outside`` behind the backend's back (a swap after
``resolve``), and calls the primitive with that target.

After every refusal the outside tree is compared with what it was: names
(hidden ones included) and bytes — nothing outside is created, changed or
left behind.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

import pytest

from .._errors import FsErrorCode
from .._filesystem import FileSystem
from .._types import CreateIfAbsent, EditGuard, FsEditRequest, FsTarget, ReplaceIfVersion
from ._base import ContractBase, requires
from ._expect import collect_stream, expect_fs_error, under
from ._scratch import Scratch

OUTSIDE = FsErrorCode.FS_OUTSIDE_WORKSPACE
READ_ONLY = FsErrorCode.FS_READ_ONLY

Snapshot = dict[str, object]


def build_containment_tree(scratch: Scratch) -> None:
    """The files and directories of the module's drawing (no symlink)."""
    scratch.put("ws/inside.txt", b"inside\n")
    scratch.put("ws/sub/f.txt", b"sub\n")
    scratch.put("outside/secret.txt", b"secret\n")
    scratch.put("outside/bin.dat", b"\0binary\n")
    scratch.mkdir("outside/dir")
    scratch.put("ws-old/secret.txt", b"old secret\n")
    scratch.put("lib/doc.txt", b"doc\n")


def outside_state(scratch: Scratch) -> Snapshot:
    """Names and bytes of everything outside ``ws/``: compared before and after a refusal."""
    return {
        "<root>": [name for name in scratch.names() if name != "ws"],
        "outside": scratch.names("outside"),
        "outside/dir": scratch.names("outside/dir"),
        "ws-old": scratch.names("ws-old"),
        "lib": scratch.names("lib"),
        "secret.txt": scratch.get("outside/secret.txt"),
        "bin.dat": scratch.get("outside/bin.dat"),
        "ws-old/secret.txt": scratch.get("ws-old/secret.txt"),
        "doc.txt": scratch.get("lib/doc.txt"),
    }


class ContainmentScenes(ContractBase):
    """The drawing's workspace, the swap after ``resolve``, and the check after a refusal:
    what the containment contracts of every primitive share."""

    def workspace(self, scratch: Scratch, **options: object) -> FileSystem:
        """The tree of the drawing and a backend whose cwd (and default root) is ``ws``."""
        build_containment_tree(scratch)
        return scratch.backend(under(scratch.root, "ws"), **options)  # type: ignore[arg-type]

    async def refused(
        self, scratch: Scratch, call: Awaitable[object], code: FsErrorCode, message: str
    ) -> None:
        """Require exactly this refusal, and the outside tree exactly as it was."""
        before = outside_state(scratch)
        await expect_fs_error(call, code, message)
        assert outside_state(scratch) == before, "a refused call changed the outside tree"

    async def swapped(self, scratch: Scratch, fs: FileSystem, name: str) -> FsTarget:
        """``ws/d/<name>`` resolved while ``d`` is a directory, then ``d`` -> ``../outside``."""
        self.require("supports_symlinks")
        scratch.mkdir("ws/d")
        target = await fs.resolve(f"d/{name}")
        scratch.remove("ws/d")
        scratch.symlink("ws/d", "../outside")
        return target


class ContainmentContract(ContainmentScenes):
    """Paths outside every root are refused by every primitive, before any other answer."""

    # -- lexical escapes --------------------------------------------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "path",
        [
            "../outside/secret.txt",
            "sub/../../outside/secret.txt",
            "<root>/outside/secret.txt",
            "../ws-old/secret.txt",
            "<root>/ws-old/secret.txt",
            "../outside/missing.txt",
            "../outside/dir",
            "../outside/bin.dat",
            "..",
            "/",
        ],
    )
    async def test_a_path_outside_every_root_is_refused_by_resolve(
        self, scratch: Scratch, path: str
    ) -> None:
        fs = self.workspace(scratch)
        path = path.replace("<root>", scratch.root)
        ws = under(scratch.root, "ws")
        display = _normalized(path if path.startswith("/") else f"{ws}/{path}")
        await self.refused(
            scratch,
            fs.resolve(path),
            OUTSIDE,
            f'cannot resolve "{display}": outside the workspace',
        )

    @pytest.mark.anyio
    async def test_lstat_of_a_path_outside_is_refused(self, scratch: Scratch) -> None:
        fs = self.workspace(scratch)
        await self.refused(
            scratch,
            fs.lstat("../outside/secret.txt"),
            OUTSIDE,
            f'cannot stat "{under(scratch.root, "outside/secret.txt")}": outside the workspace',
        )

    @pytest.mark.anyio
    async def test_the_workspace_itself_and_everything_beneath_it_is_inside(
        self, scratch: Scratch
    ) -> None:
        fs = self.workspace(scratch)
        ws = under(scratch.root, "ws")
        assert await fs.read_text(await fs.resolve("inside.txt")) == "inside\n"
        assert await fs.read_text(await fs.resolve(f"{ws}/sub/../sub/f.txt")) == "sub\n"
        entries = await fs.list_dir(await fs.resolve("."))
        assert {e.name: e.type for e in entries} == {"inside.txt": "file", "sub": "directory"}
        await fs.write_text(await fs.resolve("sub/new/deeper.txt"), "new\n")
        assert scratch.get("ws/sub/new/deeper.txt") == b"new\n"

    # -- NUL bytes --------------------------------------------------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("path", "shown"),
        [("bad\0name.txt", "bad\0name.txt"), ("x\0y/../inside.txt", "inside.txt")],
    )
    async def test_a_nul_byte_is_refused_before_normalization(
        self, scratch: Scratch, path: str, shown: str
    ) -> None:
        fs = self.workspace(scratch)
        display = under(under(scratch.root, "ws"), shown)
        await self.refused(
            scratch,
            fs.resolve(path),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot resolve "{display}": path contains a NUL byte',
        )

    # -- symlinks ---------------------------------------------------------------

    @pytest.mark.anyio
    @requires("supports_symlinks")
    @pytest.mark.parametrize(
        "link_target",
        [
            "../outside/secret.txt",
            "<root>/outside/secret.txt",
            "../ws-old/secret.txt",
            "../outside/missing.txt",
            "<root>/outside/missing.txt",
            "../outside/dir",
            "..",
        ],
    )
    async def test_a_symlink_leading_outside_is_refused(
        self, scratch: Scratch, link_target: str
    ) -> None:
        fs = self.workspace(scratch)
        scratch.symlink("ws/link", link_target.replace("<root>", scratch.root))
        display = under(scratch.root, "ws/link")
        await self.refused(
            scratch,
            fs.resolve("link"),
            OUTSIDE,
            f'cannot resolve "{display}": outside the workspace',
        )
        await self.refused(
            scratch,
            fs.resolve("link/x.txt"),
            OUTSIDE,
            f'cannot resolve "{display}/x.txt": outside the workspace',
        )

    @pytest.mark.anyio
    @requires("supports_symlinks")
    async def test_a_chain_of_inside_links_ending_outside_is_refused(
        self, scratch: Scratch
    ) -> None:
        """ws/first -> second -> ../outside/secret.txt"""
        fs = self.workspace(scratch)
        scratch.symlink("ws/first", "second")
        scratch.symlink("ws/second", "../outside/secret.txt")
        await self.refused(
            scratch,
            fs.resolve("first"),
            OUTSIDE,
            f'cannot resolve "{under(scratch.root, "ws/first")}": outside the workspace',
        )

    @pytest.mark.anyio
    @requires("supports_symlinks")
    @pytest.mark.parametrize("relative", [True, False])
    async def test_a_link_that_leaves_and_comes_back_in_is_refused(
        self, scratch: Scratch, relative: bool
    ) -> None:
        """ws/hop -> ../outside/back -> ../ws/inside.txt (or the absolute spellings)"""
        fs = self.workspace(scratch)
        root = scratch.root
        scratch.symlink("outside/back", "../ws/inside.txt" if relative else f"{root}/ws/inside.txt")
        scratch.symlink("ws/hop", "../outside/back" if relative else f"{root}/outside/back")
        await self.refused(
            scratch,
            fs.resolve("hop"),
            OUTSIDE,
            f'cannot resolve "{under(root, "ws/hop")}": outside the workspace',
        )

    @pytest.mark.anyio
    @requires("supports_symlinks")
    @pytest.mark.parametrize("absolute", [False, True])
    async def test_links_that_stay_inside_keep_working(
        self, scratch: Scratch, absolute: bool
    ) -> None:
        fs = self.workspace(scratch)
        ws = under(scratch.root, "ws")
        scratch.symlink("ws/link.txt", f"{ws}/inside.txt" if absolute else "inside.txt")
        scratch.symlink("ws/alias", f"{ws}/sub" if absolute else "sub")
        link = await fs.resolve("link.txt")
        assert link.target_key == (await fs.resolve("inside.txt")).target_key
        assert await fs.read_text(link) == "inside\n"
        assert [e.name for e in await fs.list_dir(await fs.resolve("alias"))] == ["f.txt"]
        await fs.write_text(link, "through the link\n")
        await fs.edit_text(await fs.resolve("alias/f.txt"), FsEditRequest("sub", "edited"))
        assert scratch.get("ws/inside.txt") == b"through the link\n"
        assert scratch.get("ws/sub/f.txt") == b"edited\n"
        entries = {e.name: e.type for e in await fs.list_dir(await fs.resolve("."))}
        assert (entries["link.txt"], entries["alias"]) == ("file", "directory")

    @pytest.mark.anyio
    @requires("supports_symlinks")
    async def test_list_shows_an_escaping_link_as_other_and_never_stats_through_it(
        self, scratch: Scratch
    ) -> None:
        fs = self.workspace(scratch)
        root = scratch.root
        scratch.symlink("ws/sub/up", "../../outside/secret.txt")
        scratch.symlink("ws/sub/abs", f"{root}/outside/dir")
        scratch.symlink("ws/sub/gone", "../../outside/missing.txt")
        scratch.symlink("ws/sub/kept", "f.txt")
        for with_stat in (False, True):
            entries = {
                e.name: e for e in await fs.list_dir(await fs.resolve("sub"), stat=with_stat)
            }
            assert {name: e.type for name, e in entries.items()} == {
                "f.txt": "file",
                "up": "other",
                "abs": "other",
                "gone": "other",
                "kept": "file",
            }
            for name in ("up", "abs", "gone"):
                assert (entries[name].version, entries[name].size) == (None, None), name
                assert entries[name].target.display_path == f"{root}/ws/sub/{name}"

    # -- every primitive enforces again (a swap after resolve) ------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["secret.txt", "missing.txt", "dir", "bin.dat"])
    async def test_reads_of_a_target_whose_parent_now_leads_outside_are_refused(
        self, scratch: Scratch, name: str
    ) -> None:
        """Outside wins over not found, not a regular file and binary."""
        fs = self.workspace(scratch)
        target = await self.swapped(scratch, fs, name)
        p = target.display_path
        calls: list[tuple[Callable[[], Awaitable[object]], str]] = [
            (lambda: fs.stat(target), f'cannot read "{p}": outside the workspace'),
            (lambda: fs.read_text(target), f'cannot read "{p}": outside the workspace'),
            (
                lambda: collect_stream(fs.stream_text(target)),
                f'cannot read "{p}": outside the workspace',
            ),
            (lambda: fs.list_dir(target), f'cannot list "{p}": outside the workspace'),
            (lambda: fs.list_dir(target, stat=True), f'cannot list "{p}": outside the workspace'),
        ]
        for call, message in calls:
            await self.refused(scratch, call(), OUTSIDE, message)

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "name", ["secret.txt", "missing.txt", "dir", "bin.dat", "new/parents/f.txt"]
    )
    @pytest.mark.parametrize("intent", ["none", "create", "replace"])
    async def test_writes_through_a_parent_that_now_leads_outside_are_refused(
        self, scratch: Scratch, name: str, intent: str
    ) -> None:
        """Outside wins over the intent, the type, and 'without reading it first'."""
        fs = self.workspace(scratch)
        target = await self.swapped(scratch, fs, name)
        expected = {
            "none": None,
            "create": CreateIfAbsent(),
            "replace": ReplaceIfVersion("some-version"),
        }[intent]
        await self.refused(
            scratch,
            fs.write_text(target, "clobbered\n", expected),
            OUTSIDE,
            f'cannot write "{target.display_path}": outside the workspace',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["secret.txt", "missing.txt", "dir", "bin.dat"])
    @pytest.mark.parametrize("guarded", [False, True])
    async def test_edits_through_a_parent_that_now_leads_outside_are_refused(
        self, scratch: Scratch, name: str, guarded: bool
    ) -> None:
        """Outside wins over not found, type, binary and a stale guard."""
        fs = self.workspace(scratch)
        target = await self.swapped(scratch, fs, name)
        await self.refused(
            scratch,
            fs.edit_text(
                target, FsEditRequest("secret", "leaked"), EditGuard("v") if guarded else None
            ),
            OUTSIDE,
            f'cannot edit "{target.display_path}": outside the workspace',
        )

    @pytest.mark.anyio
    @requires("supports_symlinks")
    @pytest.mark.parametrize("intent", ["none", "create"])
    async def test_a_write_through_a_dangling_link_pointing_outside_creates_nothing(
        self, scratch: Scratch, intent: str
    ) -> None:
        fs = self.workspace(scratch)
        target = await fs.resolve("new.txt")
        scratch.symlink("ws/new.txt", "../outside/new.txt")
        await self.refused(
            scratch,
            fs.write_text(target, "planted\n", CreateIfAbsent() if intent == "create" else None),
            OUTSIDE,
            f'cannot write "{target.display_path}": outside the workspace',
        )
        assert scratch.names("outside") == ["bin.dat", "dir", "secret.txt"]

    # -- read-only --------------------------------------------------------------

    @pytest.mark.anyio
    async def test_a_read_only_root_is_read_and_listed_but_never_written(
        self, scratch: Scratch
    ) -> None:
        lib = under(scratch.root, "lib")
        fs = self.workspace(scratch, read_only_roots=[lib])
        doc = await fs.resolve(f"{lib}/doc.txt")
        assert await fs.read_text(doc) == "doc\n"
        assert [e.name for e in await fs.list_dir(await fs.resolve(lib))] == ["doc.txt"]
        new = await fs.resolve(f"{lib}/new/new.txt")
        refusals: list[tuple[str, FsTarget, Callable[[], Awaitable[object]]]] = [
            ("write", doc, lambda: fs.write_text(doc, "changed\n")),
            ("write", doc, lambda: fs.write_text(doc, "changed\n", CreateIfAbsent())),
            ("edit", doc, lambda: fs.edit_text(doc, FsEditRequest("doc", "changed"))),
            ("write", new, lambda: fs.write_text(new, "new\n")),
            ("edit", new, lambda: fs.edit_text(new, FsEditRequest("a", "b"))),
        ]
        for verb, target, call in refusals:
            await self.refused(
                scratch,
                call(),
                READ_ONLY,
                f'cannot {verb} "{target.display_path}": read-only workspace',
            )
        await fs.write_text(await fs.resolve("inside.txt"), "still writable\n")
        assert scratch.get("ws/inside.txt") == b"still writable\n"

    @pytest.mark.anyio
    async def test_outside_wins_over_read_only(self, scratch: Scratch) -> None:
        fs = self.workspace(scratch, read_only_roots=[under(scratch.root, "lib")], read_only=True)
        secret = under(scratch.root, "outside/secret.txt")
        await self.refused(
            scratch,
            fs.resolve(secret),
            OUTSIDE,
            f'cannot resolve "{secret}": outside the workspace',
        )

    @pytest.mark.anyio
    async def test_read_only_true_refuses_every_write_and_edit_but_reads(
        self, scratch: Scratch
    ) -> None:
        fs = self.workspace(scratch, read_only=True)
        inside = await fs.resolve("inside.txt")
        missing = await fs.resolve("sub/missing.txt")
        assert await fs.read_text(inside) == "inside\n"
        for target in (inside, missing):
            p = target.display_path
            await self.refused(
                scratch,
                fs.write_text(target, "x\n"),
                READ_ONLY,
                f'cannot write "{p}": read-only workspace',
            )
            await self.refused(
                scratch,
                fs.edit_text(target, FsEditRequest("inside", "x")),
                READ_ONLY,
                f'cannot edit "{p}": read-only workspace',
            )
        assert scratch.get("ws/inside.txt") == b"inside\n"
        assert scratch.names("ws/sub") == ["f.txt"]

    @pytest.mark.anyio
    @pytest.mark.parametrize("swap", [False, True])
    async def test_a_write_outside_with_read_only_says_outside(
        self, scratch: Scratch, swap: bool
    ) -> None:
        fs = self.workspace(scratch, read_only=True)
        if swap:
            target = await self.swapped(scratch, fs, "secret.txt")
            await self.refused(
                scratch,
                fs.write_text(target, "x\n"),
                OUTSIDE,
                f'cannot write "{target.display_path}": outside the workspace',
            )
        else:
            secret = under(scratch.root, "outside/secret.txt")
            await self.refused(
                scratch,
                fs.resolve(secret),
                OUTSIDE,
                f'cannot resolve "{secret}": outside the workspace',
            )

    # -- containment off, roots, construction -----------------------------------

    @pytest.mark.anyio
    async def test_roots_none_turns_containment_off(self, scratch: Scratch) -> None:
        fs = self.workspace(scratch, roots=None)
        secret = await fs.resolve("../outside/secret.txt")
        assert await fs.read_text(secret) == "secret\n"
        await fs.write_text(await fs.resolve("../ws-old/new.txt"), "written\n")
        assert scratch.get("ws-old/new.txt") == b"written\n"

    @pytest.mark.anyio
    async def test_several_roots_are_each_inside_and_their_siblings_are_not(
        self, scratch: Scratch
    ) -> None:
        root = scratch.root
        fs = self.workspace(scratch, roots=[f"{root}/ws", f"{root}/lib"])
        await fs.write_text(await fs.resolve(f"{root}/lib/doc.txt"), "lib is writable\n")
        assert scratch.get("lib/doc.txt") == b"lib is writable\n"
        secret = f"{root}/ws-old/secret.txt"
        await self.refused(
            scratch,
            fs.resolve(secret),
            OUTSIDE,
            f'cannot resolve "{secret}": outside the workspace',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("which", ["roots", "read_only_roots", "cwd"])
    async def test_a_root_that_is_not_a_directory_fails_the_constructor_naming_it(
        self, scratch: Scratch, which: str
    ) -> None:
        build_containment_tree(scratch)
        not_a_dir = under(scratch.root, "ws/inside.txt")
        ws = under(scratch.root, "ws")
        # At construction, or — for a backend that reaches its storage only
        # when it connects (a remote one) — from connect().
        with pytest.raises(ValueError, match=re.escape(not_a_dir)):
            if which == "roots":
                fs = scratch.backend(ws, roots=[not_a_dir])
            elif which == "read_only_roots":
                fs = scratch.backend(ws, read_only_roots=[not_a_dir])
            else:
                fs = scratch.backend(not_a_dir)
            await fs.connect()

    # -- hard links -------------------------------------------------------------

    @pytest.mark.anyio
    @requires("supports_hard_links")
    @pytest.mark.parametrize("how", ["write", "edit"])
    async def test_a_hard_link_to_an_outside_file_is_read_but_replaced_not_rewritten(
        self, scratch: Scratch, how: str
    ) -> None:
        """ws/hl.txt and outside/secret.txt are one file; a change replaces the inside name."""
        fs = self.workspace(scratch)
        scratch.hard_link("ws/hl.txt", "outside/secret.txt")
        target = await fs.resolve("hl.txt")
        assert await fs.read_text(target) == "secret\n"
        if how == "write":
            await fs.write_text(target, "replaced\n")
            assert scratch.get("ws/hl.txt") == b"replaced\n"
        else:
            await fs.edit_text(target, FsEditRequest("secret", "edited"))
            assert scratch.get("ws/hl.txt") == b"edited\n"
        assert scratch.get("outside/secret.txt") == b"secret\n"
        assert scratch.names("outside") == ["bin.dat", "dir", "secret.txt"]


def _normalized(path: str) -> str:
    """``path`` with ``.``/``..`` segments folded lexically (as a display path is)."""
    parts: list[str] = []
    for name in path.split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if parts:
                parts.pop()
        else:
            parts.append(name)
    return "/" + "/".join(parts)
