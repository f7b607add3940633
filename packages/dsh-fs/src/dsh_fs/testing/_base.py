"""What every contract class shares: the capability flags and their helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Literal, TypeAlias, TypeVar

import pytest

from ._scratch import Scratch

Capability: TypeAlias = Literal[
    "supports_symlinks", "supports_special_files", "supports_hard_links"
]
"""The name of a capability flag of :class:`ContractBase`."""

NON_REGULAR_KINDS = ("directory", "other", "symlink to a directory")
"""Targets every content primitive must refuse as ``not a regular file``."""

_F = TypeVar("_F", bound=Callable[..., object])
_REQUIRES = "_dsh_fs_requires"


def requires(*flags: Capability) -> Callable[[_F], _F]:
    """Mark a contract test as needing these capabilities; it is skipped without them."""

    def mark(test: _F) -> _F:
        setattr(test, _REQUIRES, (*getattr(test, _REQUIRES, ()), *flags))
        return test

    return mark


class ContractBase:
    """Base of the contract classes.

    **Capability flags** (class attributes, in fsspec's manner). A backend
    that lacks a capability sets its flag to ``False`` in its test class;
    every test, or parametrized case, that needs it is then skipped with a
    reason naming the flag, and the kit never asks the scratch for it:

    * ``supports_symlinks`` — ``Scratch.symlink`` works and the backend
      follows symlinks;
    * ``supports_special_files`` — ``Scratch.make_other`` creates an entry
      that is neither file nor directory (a FIFO, a socket …);
    * ``supports_hard_links`` — ``Scratch.hard_link`` gives a file a second
      name.

    ``timestamp_granularity`` is not a capability but a fact the kit needs:
    rule 4 asks a version to move on a same-size change made behind the
    backend's back *beyond* the timestamp granularity, so that test waits
    longer than it. Coarse times alone do not need it: the SFTP backend sees
    whole seconds and adds a digest to the version of a recent file instead.

    **Event loops.** The contract tests are ``@pytest.mark.anyio`` tests and run under the
    ``anyio_backend`` fixture of the project that runs them. anyio's own
    default differs between anyio releases (4.5 runs trio even when it is not
    installed, recent releases every installed backend), so say which: to run
    the kit on both anyio backends, put this in the backend's ``conftest.py``
    (trio installed), or return ``"asyncio"`` from a plain fixture for one::

        @pytest.fixture(params=["asyncio", "trio"])
        def anyio_backend(request): return request.param
    """

    supports_symlinks: ClassVar[bool] = True
    supports_special_files: ClassVar[bool] = True
    supports_hard_links: ClassVar[bool] = True
    timestamp_granularity: ClassVar[float] = 0.0
    """Seconds between two states of a file the backend cannot tell apart (``0.0``: it
    always can): a test of a change behind the backend's back waits that long."""

    @pytest.fixture(autouse=True)
    def _skip_without_required_capabilities(self, request: pytest.FixtureRequest) -> None:
        for flag in getattr(request.function, _REQUIRES, ()):
            self.require(flag)

    def require(self, flag: Capability) -> None:
        """Skip the running test unless the backend declares ``flag``."""
        if not getattr(self, flag):
            pytest.skip(f"the backend declares {flag} = False")

    def make_non_regular(self, scratch: Scratch, kind: str) -> str:
        """Create an entry of ``kind`` (one of :data:`NON_REGULAR_KINDS`); return its path.

        ::

            dir/            "directory"
            thing           "other" (needs supports_special_files)
            to_dir -> dir   "symlink to a directory" (needs supports_symlinks)
        """
        scratch.mkdir("dir")
        if kind == "directory":
            return "dir"
        if kind == "other":
            self.require("supports_special_files")
            scratch.make_other("thing")
            return "thing"
        self.require("supports_symlinks")
        scratch.symlink("to_dir", "dir")
        return "to_dir"
