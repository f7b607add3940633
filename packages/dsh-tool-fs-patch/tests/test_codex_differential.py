"""Differential test: every patch is applied by the real Codex ``apply_patch`` and by ours.

Codex (``@openai/codex``, pinned in :mod:`codex_reference`, installed from
npm once per machine) applies each patch in one temporary directory; ours
(``ToolFs`` without plugins, on the memory and the local backend, on asyncio
and on trio) in another, from the same files. Then:

- Codex applied it: ours applies it too, with Codex's summary, and every file
  is byte for byte what Codex wrote;
- Codex refused it: ours refuses it too, with Codex's words, and no file
  changed (all or nothing).

Where the package README's "Deliberate differences from Codex" allow a
difference, a named normalisation (:data:`NORMALISATIONS`, each naming its
README bullet) accepts exactly that difference and nothing else.

One file over 450 lines: the cases, the two runners and the normalisations
are one comparison, read together when a new case or difference is added.

The reference is installed with npm (once: into ``$DSH_FS_CODEX_DIR``, else
``<tmp>/dsh-fs-codex-<version>``; about 420 MB unpacked). Without npm (or
offline) the test is skipped locally, but it fails under CI (``CI=true``),
where npm and the registry are part of the machine.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from codex_reference import CODEX_VERSION, CodexOutcome, install_codex, run_codex
from dsh_fs_local.testing import LocalScratch
from dsh_fs_memory import MemoryScratch
from dsh_tool_fs import TOOLS, Session, ToolFs
from dsh_tool_fs_patch import APPLY_PATCH, AddFile, PatchSyntaxError, UpdateFile, parse_patch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

README = Path(__file__).parent.parent / "README.md"

NORMALISATIONS = {
    "all or nothing": "**All or nothing.**",
    "final newline kept": "**Bytes kept.**",
    "dominant line ending": "**Bytes kept.**",
    "bom": "**A BOM is not text.**",
    "changed once": "**A file is changed once per patch.**",
    "paths as written": "**Paths in location failures**",
    "one-line messages": "**Error messages are one line**",
    "parse error prefix": "**Parse failures as the model sees them.**",
    "missing files": "**Missing files**",
}
"""Each difference the comparison may accept, and the README bullet that documents it."""


# -- running both ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def codex() -> Path:
    """The native Codex binary of the pinned release, installed once per machine (in
    ``$DSH_FS_CODEX_DIR``, else in the system's temporary directory)."""
    default = Path(tempfile.gettempdir()) / f"dsh-fs-codex-{CODEX_VERSION}"
    cache = Path(os.environ.get("DSH_FS_CODEX_DIR") or default)
    try:
        return install_codex(cache)
    except (RuntimeError, OSError) as exc:
        reason = f"the reference Codex apply_patch cannot be installed: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


@dataclass(frozen=True)
class Ours:
    """What our apply_patch did: its answer, the error's message, every file after it."""

    text: str
    error: str | None
    files: dict[str, bytes]
    root: str


def candidate_paths(files: dict[str, bytes], patch: str, codex: CodexOutcome) -> set[str]:
    """Every path either side may have touched: the files before and after Codex, and
    every path the patch names."""
    named = re.findall(
        r"^\s*\*\*\* (?:Add File|Delete File|Update File|Move to): (.*)$", patch, re.M
    )
    return {*files, *codex.files, *(p.strip() for p in named)}


async def run_ours(
    backend: str, files: dict[str, bytes], patch: str, paths: set[str], work: Path
) -> Ours:
    scratch: LocalScratch | MemoryScratch
    if backend == "memory":
        scratch = MemoryScratch()
    else:
        scratch = LocalScratch(Path(tempfile.mkdtemp(prefix="ours-", dir=work)))
    for path, data in files.items():
        scratch.put(path, data)
    toolfs = ToolFs(scratch.fs, plugins=(), tools=(*TOOLS, APPLY_PATCH))
    result = await toolfs.execute("apply_patch", {"input": patch}, session=Session(scratch.root))
    after = {p: got for p in sorted(paths) if (got := scratch.get(p)) is not None}
    if result.is_error:
        assert result.error is not None
        assert result.text == f"Error: {result.error.message}"
        return Ours(result.text, result.error.message, after, scratch.root)
    return Ours(result.text, None, after, scratch.root)


# -- comparing ----------------------------------------------------------------------------------


def origins(files: dict[str, bytes], patch: str) -> dict[str, bytes]:
    """For every file an update writes, the bytes it was made from (a move's: its source's)."""
    found: dict[str, bytes] = {}
    for op in parse_patch(patch):
        if isinstance(op, UpdateFile) and op.path in files:
            found[op.move_to or op.path] = files[op.path]
    return found


def same_file(ours: bytes, codex: bytes, origin: bytes | None, used: set[str]) -> bool:
    """Whether ``ours`` is what Codex wrote, up to the documented differences."""
    if ours == codex or origin is None:
        return ours == codex
    needed: set[str] = set()
    if origin and not origin.endswith(b"\n") and codex.endswith(b"\n"):
        needed.add("final newline kept")  # Codex ends the file with its newline; we do not
        ours += b"\r\n" if codex.endswith(b"\r\n") else b"\n"
    if ours != codex and b"\r\n" in origin and re.search(rb"(?<!\r)\n", origin):
        needed.add("dominant line ending")  # new lines: the first line's ending or the most
        ours, codex = ours.replace(b"\r\n", b"\n"), codex.replace(b"\r\n", b"\n")
    if ours != codex:
        return False
    used |= needed
    return True


def codex_message(codex: CodexOutcome, ours_root: str, used: set[str]) -> str:
    """Codex's failure as our message words it, up to the documented differences."""
    message = codex.stderr.removesuffix("\n")  # the one newline Codex ends it with
    if match := re.fullmatch(r"Invalid patch: (.*)", message, re.S):
        used.add("parse error prefix")
        message = f"invalid patch: {match[1]}"
    elif match := re.fullmatch(r"Invalid patch hunk on line (\d+): (.*)", message, re.S):
        used.add("parse error prefix")
        message = f"invalid hunk at line {match[1]}, {match[2]}"
    prefix = f"{codex.root}/"
    missing = {
        "Failed to read file to update ": "edit",
        "Failed to delete file ": "delete",
    }
    for start, verb in missing.items():
        if match := re.fullmatch(
            re.escape(start + prefix) + r"(.*?)(: No such file or directory \(os error 2\))?",
            message,
        ):
            used.add("missing files")
            return f'cannot {verb} "{ours_root.rstrip("/")}/{match[1]}": not found'
    if prefix in message:
        used.add("paths as written")
        message = message.replace(prefix, "")
    if re.search(r"[\x00-\x1f]", message):
        used.add("one-line messages")
        message = "".join(json.dumps(c)[1:-1] if c < " " else c for c in message)
    return message


def compare(files: dict[str, bytes], patch: str, codex: CodexOutcome, ours: Ours) -> set[str]:
    """Assert that ours did what Codex did, up to the documented differences; return the
    normalisations that were needed."""
    used: set[str] = set()
    if ours.error is not None and "the patch changes it more than once" in ours.error:
        assert ours.files == files, "a refused patch changed files"
        return {"changed once"}
    if codex.code == 0:
        assert ours.error is None, f"Codex applied it; ours: {ours.text}\nCodex: {codex.stdout}"
        assert ours.text == codex.stdout.rstrip("\n")
        assert set(ours.files) == set(codex.files), (ours.files, codex.files)
        made_from = origins(files, patch)
        for path, data in codex.files.items():
            assert same_file(ours.files[path], data, made_from.get(path), used), (
                f"{path}: ours {ours.files[path]!r} Codex {data!r}"
            )
        return used
    assert ours.error is not None, f"Codex refused it ({codex.stderr!r}); ours: {ours.text}"
    if codex.files != files:
        used.add("all or nothing")
    assert ours.files == files, "a refused patch changed files"
    assert ours.error == codex_message(codex, ours.root, used)
    return used


BOM = b"\xef\xbb\xbf"


def without_bom(files: dict[str, bytes], patch: str, ours: Ours, used: set[str]) -> Ours:
    """``ours`` with the BOM taken off every file that had one and keeps it (Codex is given
    the files without theirs: with it, it does not find their first line)."""
    try:
        made_from = origins(files, patch)
        added = {op.path for op in parse_patch(patch) if isinstance(op, AddFile)}
    except PatchSyntaxError:
        made_from, added = {}, set()
    after = dict(ours.files)
    for path, data in ours.files.items():
        origin = made_from.get(path, files.get(path))
        if origin is None or not origin.startswith(BOM):
            continue
        if data.startswith(BOM):
            used.add("bom")
            after[path] = data[len(BOM) :]
        else:
            assert path in added, f"{path} lost its BOM"
    return Ours(ours.text, ours.error, after, ours.root)


def differential(codex_binary: Path, files: dict[str, bytes], patch: str) -> set[str]:
    """Apply ``patch`` to ``files`` with Codex and with ours on each backend; compare."""
    work = Path(tempfile.mkdtemp(prefix="codex-diff-"))
    used: set[str] = set()
    try:
        plain = {path: data.removeprefix(BOM) for path, data in files.items()}
        codex = run_codex(codex_binary, plain, patch, work)
        paths = candidate_paths(files, patch, codex)
        for backend, loop in itertools.product(("memory", "local"), ("asyncio", "trio")):
            ours = anyio.run(run_ours, backend, files, patch, paths, work, backend=loop)
            if plain != files:
                ours = without_bom(files, patch, ours, used)
            used |= compare(plain, patch, codex, ours)
        return used
    finally:
        shutil.rmtree(work, ignore_errors=True)


def envelope(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


# -- the hand-written corpus ------------------------------------------------------------------

THREE = b"alpha\nbeta\ngamma\n"
CODE = b"def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, bytes]
    patch: str
    expect: frozenset[str] = frozenset()
    """The normalisations this case needs (it demonstrates those differences)."""


def case(name: str, files: dict[str, bytes], *lines: str, expect: tuple[str, ...] = ()) -> Case:
    return Case(name, files, envelope(*lines), frozenset(expect))


CASES = [
    case("add a file", {}, "*** Add File: new.txt", "+one", "+two"),
    case("add a file in a new directory", {}, "*** Add File: d/e/new.txt", "+x"),
    case("add an empty file", {}, "*** Add File: empty.txt"),
    case("add over an existing file", {"a.txt": THREE}, "*** Add File: a.txt", "+new"),
    case("delete a file", {"a.txt": THREE}, "*** Delete File: a.txt"),
    case("update one line", {"a.txt": THREE}, "*** Update File: a.txt", "@@", " alpha",
         "-beta", "+BETA", " gamma"),
    case("update without @@", {"a.txt": THREE}, "*** Update File: a.txt", "-beta", "+b"),
    case("pure addition appends", {"a.txt": THREE}, "*** Update File: a.txt", "@@", "+delta"),
    case("insert after context", {"a.txt": THREE}, "*** Update File: a.txt", "@@", " alpha",
         "+inserted"),
    case("remove the last line", {"a.txt": THREE}, "*** Update File: a.txt", "@@", " beta",
         "-gamma"),
    case("two chunks", {"c.py": CODE}, "*** Update File: c.py", "@@ def f():", "-    x = 1",
         "+    x = 2", "@@ def g():", "-    x = 1", "+    x = 3"),
    case("anchor picks the second function", {"c.py": CODE}, "*** Update File: c.py",
         "@@ def g():", "     x = 1", "-    return x", "+    return -x"),
    case("forward only: the first match wins", {"c.py": CODE}, "*** Update File: c.py", "@@",
         "-    return x", "+    return 0"),
    case("end of file", {"c.py": CODE}, "*** Update File: c.py", "@@", "-    return x",
         "+    return None", "*** End of File"),
    case("move a file", {"a.txt": THREE}, "*** Update File: a.txt", "*** Move to: b/moved.txt",
         "@@", "-beta", "+b"),
    case("move onto an existing file", {"a.txt": THREE, "b.txt": b"old\n"},
         "*** Update File: a.txt", "*** Move to: b.txt", "@@", "-beta", "+b"),
    case("several operations", {"a.txt": THREE, "c.py": CODE}, "*** Add File: n.md", "+# n",
         "*** Delete File: c.py", "*** Update File: a.txt", "-gamma", "+G"),
    case("markers padded with whitespace", {"a.txt": THREE}, "  *** Update File: a.txt  ",
         "@@", "-beta", "+b"),
    case("trailing whitespace in the patch's context", {"a.txt": THREE},
         "*** Update File: a.txt", "@@", " alpha   ", "-beta", "+b"),
    case("trailing whitespace in the file", {"a.txt": b"alpha  \nbeta\n"},
         "*** Update File: a.txt", "@@", " alpha", "-beta", "+b"),
    case("indentation differs", {"a.txt": b"    alpha\nbeta\n"}, "*** Update File: a.txt", "@@",
         " alpha", "-beta", "+b"),
    case("typographic dash and quotes", {"a.txt": "a \u2014 \u201cq\u201d\nbeta\n".encode()},
         "*** Update File: a.txt", "@@", ' a - "q"', "-beta", "+b"),
    case("a blank line in a chunk is empty context", {"a.txt": b"one\n\ntwo\n"},
         "*** Update File: a.txt", "@@", " one", "", "-two", "+2"),
    case("CRLF file", {"w.txt": b"alpha\r\nbeta\r\ngamma\r\n"}, "*** Update File: w.txt", "@@",
         " alpha", "-beta", "+b", "+c"),
    case("no final newline", {"n.txt": b"alpha\nbeta"}, "*** Update File: n.txt", "@@",
         "-alpha", "+A", expect=("final newline kept",)),
    case("no final newline, last line changed", {"n.txt": b"alpha\nbeta"},
         "*** Update File: n.txt", "@@", " alpha", "-beta", "+B", expect=("final newline kept",)),
    case("mixed line endings", {"m.txt": b"a\r\nb\nc\nd\n"}, "*** Update File: m.txt", "@@",
         " b", "+new", expect=("dominant line ending",)),
    case("a BOM file's first line", {"b.txt": b"\xef\xbb\xbfalpha\nbeta\n"},
         "*** Update File: b.txt", "@@", "-alpha", "+A", expect=("bom",)),
    case("a BOM file's last line", {"b.txt": b"\xef\xbb\xbfalpha\nbeta\n"},
         "*** Update File: b.txt", "@@", " alpha", "-beta", "+B", expect=("bom",)),
    case("CRLF file whose first ending is CRLF", {"m.txt": b"a\r\nb\nc\n"},
         "*** Update File: m.txt", "@@", "-c", "+C", expect=("dominant line ending",)),
    case("a final empty line stays", {"e.txt": b"alpha\n\n"}, "*** Update File: e.txt",
         "@@", "-alpha", "+A"),
    case("pure addition after a final empty line", {"e.txt": b"alpha\n\n"},
         "*** Update File: e.txt", "@@", "+omega"),
    case("blank lines after End of File", {"a.txt": THREE}, "*** Update File: a.txt", "@@",
         "-gamma", "+G", "*** End of File", "", "   ", "*** Delete File: a2.txt",
         expect=("missing files", "all or nothing")),
    case("a line of spaces opens an update", {"a.txt": b"  \nalpha\n"},
         "*** Update File: a.txt", "   ", "-alpha", "+A"),
    case("a padded Move to is context", {"a.txt": THREE}, "*** Update File: a.txt",
         "  *** Move to: b.txt", "@@", "-beta", "+b",
         expect=("paths as written", "one-line messages")),
    case("a Move to path's trailing spaces", {"a.txt": THREE}, "*** Update File: a.txt",
         "*** Move to: b.txt  ", "@@", "-beta", "+b"),
    case("context lines after the change", {"c.py": CODE}, "*** Update File: c.py",
         "@@ def g():", "-    x = 1", "+    y = 1", "     return x"),
    # refusals
    case("empty patch", {}),
    case("a tab opens an update", {"a.txt": THREE}, "*** Update File: a.txt", "\t", "@@",
         "-beta", expect=("parse error prefix", "one-line messages")),
    case("a tab after a chunk", {"a.txt": THREE}, "*** Update File: a.txt", "@@", "-beta",
         "+b", "\t", "@@", "-gamma", expect=("parse error prefix", "one-line messages")),
    case("stacked anchors", {"c.py": CODE}, "*** Update File: c.py", "@@ def g():",
         "@@     x = 1", "-    return x", expect=("parse error prefix",)),
    case("end of file before the anchor", {"a.txt": b"alpha\nalpha\n"},
         "*** Update File: a.txt", "@@ alpha", " alpha", " alpha", "*** End of File",
         expect=("paths as written", "one-line messages")),
    case("an Add File with a non-+ line", {}, "*** Add File: x.txt", "+x", "y",
         expect=("parse error prefix",)),
    case("update of a missing file", {}, "*** Update File: nope.txt", "@@", "-x", "+y",
         expect=("missing files",)),
    case("delete of a missing file", {}, "*** Delete File: nope.txt", expect=("missing files",)),
    case("lines not found", {"a.txt": THREE}, "*** Update File: a.txt", "@@", "-zeta", "+z",
         expect=("paths as written", "one-line messages")),
    case("anchor not found", {"a.txt": THREE}, "*** Update File: a.txt", "@@ nowhere", "-beta",
         "+b", expect=("paths as written",)),
    case("end of file not at the end", {"a.txt": THREE}, "*** Update File: a.txt", "@@",
         "-beta", "+b", "*** End of File", expect=("paths as written", "one-line messages")),
    case("a bad hunk header", {}, "*** Frobnicate File: a.txt", expect=("parse error prefix",)),
    case("a bad line in a chunk", {"a.txt": THREE}, "*** Update File: a.txt", "@@", "beta",
         expect=("parse error prefix",)),
    case("a file added, then updated", {}, "*** Add File: a.txt", "+one",
         "*** Update File: a.txt", "@@", "-one", "+two", expect=("changed once",)),
    case("an empty update", {"a.txt": THREE}, "*** Update File: a.txt",
         expect=("parse error prefix",)),
    case("later failure leaves earlier files", {"a.txt": THREE}, "*** Add File: new.txt", "+n",
         "*** Update File: a.txt", "@@", "-zeta", "+z",
         expect=("all or nothing", "paths as written", "one-line messages")),
]  # fmt: skip

RAW_CASES = [
    Case("no Begin Patch", {}, "hello", frozenset({"parse error prefix"})),
    Case("no End Patch", {}, "*** Begin Patch\n*** Add File: x\n+x",
         frozenset({"parse error prefix"})),
    Case("heredoc wrapper", {"a.txt": THREE},
         "<<'EOF'\n" + envelope("*** Update File: a.txt", "-beta", "+b") + "\nEOF\n"),
    Case("CRLF patch", {"a.txt": THREE},
         envelope("*** Update File: a.txt", "-beta", "+b").replace("\n", "\r\n")),
    Case("surrounding blank lines", {}, "\n\n" + envelope("*** Add File: x.txt", "+x") + "\n\n"),
]  # fmt: skip


@pytest.mark.parametrize("item", CASES + RAW_CASES, ids=lambda c: c.name)
def test_ours_does_what_codex_does(codex: Path, item: Case) -> None:
    assert differential(codex, item.files, item.patch) == item.expect


def test_every_normalisation_names_a_documented_difference() -> None:
    readme = README.read_text()
    differences = readme.split("## Deliberate differences from Codex", 1)[1]
    for name, bullet in NORMALISATIONS.items():
        assert f"- {bullet}" in differences, name
    used = {name for item in CASES + RAW_CASES for name in item.expect}
    assert used <= set(NORMALISATIONS)


# -- generated patches ----------------------------------------------------------------------

WORDS = ["alpha", "beta", "x = 1", "return x", "", "}", "  indented", "a - b", "'q'"]
LENIENT = {
    "a - b": "a \u2013 b",
    "'q'": "\u2018q\u2019",
    "  indented": "indented",
    "x = 1": "x = 1  ",
}


@st.composite
def small_file(draw: st.DrawFn) -> bytes:
    """A few lines of :data:`WORDS`: LF or CRLF, now and then mixed, a BOM or no final
    newline."""
    lines = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))
    ending = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    endings = [ending] * len(lines)
    if draw(st.integers(0, 9)) == 0:
        endings = draw(
            st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines), max_size=len(lines))
        )
    if draw(st.integers(0, 4)) == 0:
        endings[-1] = ""
    text = "".join(line + end for line, end in zip(lines, endings, strict=True))
    bom = "\ufeff" if draw(st.integers(0, 9)) == 0 else ""
    return (bom + text).encode()


@st.composite
def update_section(draw: st.DrawFn, path: str, data: bytes) -> list[str]:
    """An update of ``path``: one or two chunks taken from its lines, sometimes leniently."""
    lines = data.decode().removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    out = [f"*** Update File: {path}"]
    if draw(st.booleans()):
        out.append(f"*** Move to: moved/{path}")
    at = 0
    for number in range(draw(st.integers(1, 2))):
        if at >= len(lines):
            break
        start = draw(st.integers(at, len(lines) - 1))
        size = draw(st.integers(0, min(3, len(lines) - start)))
        before = lines[max(at, start - draw(st.integers(0, 2))) : start]
        after_end = min(len(lines), start + size + draw(st.integers(0, 2)))
        after = lines[start + size : after_end]
        anchor = draw(st.sampled_from([None, *lines[at:start]])) if start > at else None
        out.append("@@" if anchor is None else f"@@ {anchor}")
        if anchor is None and number == 0 and draw(st.booleans()):
            out.pop()  # the first chunk's @@ is optional
        lenient = draw(st.booleans())

        def context(line: str, lenient: bool = lenient) -> str:
            return " " + (LENIENT.get(line, line) if lenient else line)

        out += [context(line) for line in before]
        out += ["-" + line for line in lines[start : start + size]]
        out += ["+" + w for w in draw(st.lists(st.sampled_from(WORDS), max_size=3))]
        out += [context(line) for line in after]
        if after_end == len(lines) and draw(st.booleans()):
            out.append("*** End of File")
        at = after_end
    if draw(st.integers(0, 9)) == 0:
        out.insert(
            len(out) if len(out) < 3 else 2 if "Move to" in out[1] else 1, "-no such line"
        )  # a chunk that fails
    return out


@st.composite
def patch_case(draw: st.DrawFn) -> tuple[dict[str, bytes], str]:
    names = draw(st.lists(st.sampled_from(["a.txt", "b.py", "d/c.md"]), min_size=1, unique=True))
    files = {name: draw(small_file()) for name in names}
    sections: list[str] = []
    for name in names:
        kind = draw(st.sampled_from(["update", "update", "update", "delete", "add", "keep"]))
        if kind == "update":
            sections += draw(update_section(name, files[name]))
        elif kind == "delete":
            sections.append(f"*** Delete File: {name}")
        elif kind == "add":  # over the existing file
            sections += [f"*** Add File: {name}", *draw(st.lists(st.sampled_from(WORDS)).map(
                lambda words: ["+" + w for w in words]))]  # fmt: skip
    if draw(st.booleans()):
        sections += [
            "*** Add File: new.txt",
            *("+" + w for w in draw(st.lists(st.sampled_from(WORDS)))),
        ]
    if draw(st.integers(0, 9)) == 0:
        sections += ["*** Update File: missing.txt", "@@", "-x", "+y"]
    if draw(st.integers(0, 9)) == 0:
        sections.insert(draw(st.integers(0, len(sections))), draw(st.sampled_from(["bogus", "@@"])))
    text = envelope(*sections)
    if draw(st.integers(0, 9)) == 0:
        text = f"<<EOF\n{text}\nEOF"
    if draw(st.integers(0, 9)) == 0:
        text = text.replace("\n", "\r\n")  # a patch written with CRLF
    return files, text


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(generated=patch_case())
def test_generated_patches_do_what_codex_does(
    codex: Path, generated: tuple[dict[str, bytes], str]
) -> None:
    files, patch = generated
    used = differential(codex, files, patch)
    for name in sorted(used) or ["the same bytes and words"]:
        event(name)
    assert used <= set(NORMALISATIONS)
