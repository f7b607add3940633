"""Fuzzing: random tool calls and outside changes against a model of the files.

A hypothesis ``RuleBasedStateMachine`` drives two sessions of the full stack
(``ToolFs`` + ``FsPolicy`` on the local backend) over a small tree::

    root/
      a.txt          (may be absent)
      b.txt          (may be absent)
      link.txt  ->  a.txt   (always a symlink; dangling while a.txt is absent)
      d/
        c.txt        (may be absent)
        e/           (appears when something writes d/e/f.txt)
          f.txt

Rules: ``read`` (random offset/limit), ``write``, ``edit`` (random
old/new/replace_all), ``list`` — by either session, through either name of
a.txt — interleaved with outside changes (rewrite in place or by rename,
delete, touch). The model is a dict of file contents, a generation counter
per file, and per session the generation it last observed of each file,
or that its read found the file absent (what the policy should allow).
Every call's exact model-facing text is predicted from the model; after
every step the disk must equal the model and hold no temporary file.

Outside changes set a unique mtime, and the machine waits 11 ms after every
successful mutation, so each generation has a distinct ``stat`` version
(SPEC 2.3 rule 4 holds beyond the timestamp granularity; see the README).

Profiles: CI runs ``derandomize=True`` with 40 examples of up to 30 steps;
``--long`` runs 1,000 examples of up to 60 steps; ``DSH_FUZZ_EXAMPLES=<n>``
overrides the number of examples of either.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from dsh_reliability_kit import leftovers
from dsh_tool_fs import Session, ToolFs, ToolResult
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

FILES = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt"]
NAMES = [*FILES, "link.txt"]
"""Paths the model may pass; ``link.txt`` is another name of ``a.txt``."""
DIRS = [".", "d", "d/e"]
SESSIONS = ["A", "B"]
TEXT = st.text(alphabet="ab\né", max_size=24)
NEEDLES = st.sampled_from(["a", "b", "ab", "ba", "a\n", "\n", "aa", "é", "x", ""])
SETTLE = 0.011
"""Seconds to wait after a mutation: beyond the filesystem's timestamp tick."""
ABSENT = -1
"""What a session observed of a file its read found absent (the policy records absence)."""


def key_of(name: str) -> str:
    return "a.txt" if name == "link.txt" else name


def expected_window(content: str, offset: int, limit: int) -> tuple[list[str], int]:
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    if content == "":
        lines = []
    return lines[offset - 1 : offset - 1 + limit], len(lines)


class ToolsVersusModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(os.path.realpath(tempfile.mkdtemp(prefix="dsh-rel-fuzz-")))
        (self.root / "d").mkdir()
        (self.root / "link.txt").symlink_to("a.txt")
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal("asyncio")
        self.portal = self._portal_cm.__enter__()
        self.toolfs = ToolFs.from_entry_points(
            backend="local", plugins=("policy",), cwd=str(self.root)
        )
        self.sessions = {name: Session(cwd=str(self.root)) for name in SESSIONS}
        self.files: dict[str, str | None] = dict.fromkeys(FILES)
        self.generation: dict[str, int] = dict.fromkeys(FILES, 0)
        self.observed: dict[tuple[str, str], int] = {}
        self.has_e = False
        self.outside_clock = 1_000_000_000_000_000_000
        self.calls = 0

    def teardown(self) -> None:
        self._portal_cm.__exit__(None, None, None)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers -------------------------------------------------------------------

    def call(self, session: str, tool: str, args: dict[str, Any]) -> ToolResult:
        self.calls += 1
        return self.portal.call(
            lambda: self.toolfs.execute(tool, args, session=self.sessions[session])
        )

    def p(self, name: str) -> str:
        return str(self.root / name) if name != "." else str(self.root)

    def mutated(self, session: str, key: str, content: str) -> None:
        self.files[key] = content
        self.generation[key] += 1
        self.observed[(session, key)] = self.generation[key]
        if key == "d/e/f.txt":
            self.has_e = True
        time.sleep(SETTLE)

    def outside(self, key: str) -> None:
        """An outside change: a new generation with a unique mtime."""
        self.generation[key] += 1
        self.outside_clock += 1_000_000
        path = self.root / key
        if path.exists():
            os.utime(path, ns=(self.outside_clock, self.outside_clock))

    # -- tool calls -------------------------------------------------------------------

    @rule(
        session=st.sampled_from(SESSIONS),
        name=st.sampled_from(NAMES),
        offset=st.one_of(st.none(), st.integers(1, 6)),
        limit=st.one_of(st.none(), st.integers(1, 4)),
    )
    def read(self, session: str, name: str, offset: int | None, limit: int | None) -> None:
        key = key_of(name)
        args: dict[str, Any] = {"file_path": name}
        if offset is not None:
            args["offset"] = offset
        if limit is not None:
            args["limit"] = limit
        result = self.call(session, "read", args)
        content = self.files[key]
        if content is None:
            assert result.text == f'Error: cannot read "{self.p(name)}": not found'
            self.observed[(session, key)] = ABSENT
            return
        start = offset or 1
        lines, total = expected_window(content, start, limit or 2000)
        if start > total and not (start == 1 and total == 0):
            assert result.text == (
                f'Error: offset {start} is out of range for "{self.p(name)}" ({total} lines)'
            )
            return
        assert result.value is not None, result.text
        assert [line["text"] for line in result.value["lines"]] == lines
        assert result.value["totalLines"] == total
        self.observed[(session, key)] = self.generation[key]

    @rule(session=st.sampled_from(SESSIONS), name=st.sampled_from(NAMES), content=TEXT)
    def write(self, session: str, name: str, content: str) -> None:
        key = key_of(name)
        result = self.call(session, "write", {"file_path": name, "content": content})
        seen = self.observed.get((session, key))
        if seen == ABSENT:  # the read found nothing: a create, as if never seen
            seen = None
        exists = self.files[key] is not None
        p = self.p(name)
        if seen is None and exists:
            expected = (
                f'Error: cannot overwrite existing "{p}" without reading it first'
                " — read the file, then retry"
            )
        elif seen is not None and not exists:
            expected = (
                f'Error: cannot write "{p}": file no longer exists — re-read the file, then retry'
            )
        elif seen is not None and seen != self.generation[key]:
            expected = (
                f'Error: cannot write "{p}": file changed since it was read'
                " — re-read the file, then retry"
            )
        else:
            status = "Updated file" if exists else "Created file"
            expected = f"<path>{p}</path>\n<type>file</type>\n<content>\n{status}\n</content>"
            self.mutated(session, key, content)
        assert result.text == expected

    @rule(
        session=st.sampled_from(SESSIONS),
        name=st.sampled_from(NAMES),
        old=NEEDLES,
        new=NEEDLES,
        replace_all=st.booleans(),
    )
    def edit(self, session: str, name: str, old: str, new: str, replace_all: bool) -> None:
        key = key_of(name)
        args: dict[str, Any] = {"file_path": name, "old_string": old, "new_string": new}
        if replace_all:
            args["replace_all"] = True
        result = self.call(session, "edit", args)
        p = self.p(name)
        seen = self.observed.get((session, key))
        content = self.files[key]
        if old == "":
            expected = "Error: old_string must be a non-empty string"
        elif old == new:
            expected = "Error: old_string and new_string must differ"
        elif seen is None:
            expected = f'Error: edit requires reading "{p}" first — read the file, then retry'
        elif seen == ABSENT:
            expected = f'Error: cannot edit "{p}": not found'
        elif content is None:
            expected = (
                f'Error: cannot edit "{p}": file no longer exists — re-read the file, then retry'
            )
        elif seen != self.generation[key]:
            expected = (
                f'Error: cannot edit "{p}": file changed since it was read'
                " — re-read the file, then retry"
            )
        elif content.count(old) == 0:
            expected = f'Error: old_string was not found in "{p}"'
        elif content.count(old) > 1 and not replace_all:
            expected = (
                f'Error: old_string matched {content.count(old)} times in "{p}"; '
                "provide a more specific old_string or set replace_all to true"
            )
        else:
            if replace_all:
                expected = (
                    f"The file {p} has been updated. All occurrences were successfully replaced."
                )
            else:
                expected = f"The file {p} has been updated successfully."
            self.mutated(session, key, content.replace(old, new, -1 if replace_all else 1))
        assert result.text == expected

    @rule(session=st.sampled_from(SESSIONS), directory=st.sampled_from(DIRS))
    def list(self, session: str, directory: str) -> None:
        result = self.call(session, "list", {"path": directory})
        if directory == "d/e" and not self.has_e:
            assert result.text == f'Error: cannot list "{self.p(directory)}": not found'
            return
        expected: list[dict[str, str]] = []
        if directory == ".":
            expected.append({"name": "d", "type": "directory"})
            expected += [
                {"name": n, "type": "file"} for n in ("a.txt", "b.txt") if self.files[n] is not None
            ]
            # The link's type follows it: a dangling link is "other".
            link_type = "file" if self.files["a.txt"] is not None else "other"
            expected.append({"name": "link.txt", "type": link_type})
        elif directory == "d":
            if self.has_e:
                expected.append({"name": "e", "type": "directory"})
            if self.files["d/c.txt"] is not None:
                expected.append({"name": "c.txt", "type": "file"})
        elif self.files["d/e/f.txt"] is not None:
            expected.append({"name": "f.txt", "type": "file"})
        assert result.value is not None, result.text
        order = {"directory": 0, "file": 1, "other": 2}
        expected.sort(key=lambda e: (order[e["type"]], e["name"].casefold(), e["name"]))
        assert result.value["entries"] == expected

    # -- outside changes ----------------------------------------------------------------

    @rule(key=st.sampled_from(FILES), content=TEXT, by_rename=st.booleans())
    def outside_rewrite(self, key: str, content: str, by_rename: bool) -> None:
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        if key == "d/e/f.txt":
            self.has_e = True
        if by_rename:
            temp = path.with_name("outside-editor.swp")
            temp.write_bytes(content.encode())
            os.replace(temp, path)
        else:
            path.write_bytes(content.encode())
        self.files[key] = content
        self.outside(key)

    @rule(key=st.sampled_from(FILES))
    def outside_delete(self, key: str) -> None:
        if self.files[key] is not None:
            (self.root / key).unlink()
            self.files[key] = None
            self.outside(key)

    @rule(key=st.sampled_from(FILES))
    def outside_touch(self, key: str) -> None:
        if self.files[key] is not None:
            self.outside(key)

    # -- what must always hold ------------------------------------------------------------

    @invariant()
    def disk_equals_model(self) -> None:
        for key, content in self.files.items():
            path = self.root / key
            if content is None:
                assert not path.exists(), key
            else:
                assert path.read_bytes() == content.encode(), key
        assert (self.root / "link.txt").is_symlink()
        assert leftovers(self.root) == []


def _examples(long: bool) -> int:
    override = os.environ.get("DSH_FUZZ_EXAMPLES")
    if override:
        return int(override)
    return 1000 if long else 40


@pytest.mark.parametrize("profile", ["ci", pytest.param("long", marks=pytest.mark.long)])
def test_random_tool_calls_and_outside_changes_match_the_model(
    profile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    long = profile == "long"
    runs: list[int] = []

    class Counted(ToolsVersusModel):
        def teardown(self) -> None:
            runs.append(self.calls)
            super().teardown()

    run_state_machine_as_test(
        Counted,
        settings=settings(
            max_examples=_examples(long),
            stateful_step_count=60 if long else 30,
            derandomize=not long,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
    with capsys.disabled():
        print(f"\nfuzz ({profile}): {len(runs)} examples, {sum(runs)} tool calls")
