"""The shared containment rule: roots, prefix siblings, read-only roots and the refusals."""

from __future__ import annotations

import pytest
from dsh_fs import FsError, FsErrorCode
from dsh_fs.workspace import (
    CWD_ROOT,
    Workspace,
    is_beneath,
    outside_workspace,
    read_only_workspace,
    shown_path,
)


def _canonical(path: str) -> str:
    if path.endswith("missing"):
        raise ValueError(f'root "{path}": not a directory')
    return path


def test_a_prefix_sibling_is_not_beneath_the_root() -> None:
    assert is_beneath("/srv/app", "/srv/app")
    assert is_beneath("/srv/app/a/b.txt", "/srv/app")
    assert not is_beneath("/srv/app-old/secret", "/srv/app")
    assert not is_beneath("/srv/ap", "/srv/app")
    assert is_beneath("/etc/passwd", "/")


def test_the_default_root_is_the_cwd() -> None:
    ws = Workspace.build("/w", CWD_ROOT, (), False, _canonical)
    assert ws == Workspace(roots=("/w",))
    assert ws.access("/w/a.txt") == "write"
    assert ws.access("/w-old/a.txt") is None
    assert ws.contained


def test_relative_roots_are_made_absolute_against_the_cwd_and_canonical() -> None:
    ws = Workspace.build("/w", ["sub/../lib", "/abs"], ["docs"], False, _canonical)
    assert ws.roots == ("/w/lib", "/abs")
    assert ws.read_only_roots == ("/w/docs",)


def test_a_root_the_backend_rejects_fails_the_build() -> None:
    with pytest.raises(ValueError, match="missing"):
        Workspace.build("/w", ["missing"], (), False, _canonical)


def test_no_roots_means_everything_is_inside() -> None:
    ws = Workspace.build("/w", None, (), False, _canonical)
    assert not ws.contained
    assert ws.access("/etc/passwd") == "write"
    assert Workspace(roots=None, read_only=True).access("/etc/passwd") == "read"


def test_read_only_roots_and_the_read_only_switch_grant_reads_only() -> None:
    ws = Workspace(roots=("/w",), read_only_roots=("/lib",))
    assert ws.access("/lib/x.py") == "read"
    assert ws.access("/w/x.py") == "write"
    assert Workspace(roots=("/w",), read_only=True).access("/w/x.py") == "read"
    # A read-only root inside a read-write one: the read-write root still grants writes.
    nested = Workspace(roots=("/w",), read_only_roots=("/w/vendor",))
    assert nested.access("/w/vendor/a") == "write"
    assert nested.root_of("/w/vendor/a") == "/w/vendor"


def test_check_refuses_outside_before_read_only() -> None:
    ws = Workspace(roots=("/w",), read_only_roots=("/lib",))
    ws.check("read", "/lib/a", "/lib/a", write=False)
    ws.check("write", "/w/a", "/w/a", write=True)
    with pytest.raises(FsError) as outside:
        ws.check("write", "/x/a", "/x/a", write=True)
    assert (str(outside.value), outside.value.code) == (
        'cannot write "/x/a": outside the workspace',
        FsErrorCode.FS_OUTSIDE_WORKSPACE,
    )
    with pytest.raises(FsError) as read_only:
        ws.check("edit", "/lib/a", "/lib/a", write=True)
    assert (str(read_only.value), read_only.value.code) == (
        'cannot edit "/lib/a": read-only workspace',
        FsErrorCode.FS_READ_ONLY,
    )


def test_the_refusal_names_the_display_path_cut_to_1024_characters() -> None:
    long = "/" + "a" * 2000
    assert shown_path(long) == long[:1024] + "…"
    assert shown_path("/w/a") == "/w/a"
    expected = f'cannot read "{long[:1024]}…": outside the workspace'
    assert str(outside_workspace("read", long)) == expected
    assert str(read_only_workspace("list", "/w")) == 'cannot list "/w": read-only workspace'
