"""The doc tests can fail: the root conftest's Sybil setup run on broken examples.

``README.md`` and the docs beneath ``docs/`` (not the generated
``docs/reference/``) are collected by the root ``conftest.py``
(docs/maintaining/writing-docs.md describes the convention). Here a copy of that
conftest runs, through ``pytester``, on a document whose examples are each
wrong in one way; every one of them must fail, and the sound ones pass.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FENCE = "```"
BROKEN = f"""# Broken examples

{FENCE}console
$ printf 'one\\n'
two
{FENCE}

{FENCE}console
$ false
{FENCE}

{FENCE}console
$ printf 'silent?\\n'
{FENCE}

{FENCE}bash
true
exit 3
{FENCE}

{FENCE}python
assert 1 + 1 == 3
{FENCE}

{FENCE}
no language
{FENCE}

{FENCE}yaml
a: 1
{FENCE}

{FENCE}json
{{"mcpServers": {{"x": {{"command": "no-such-command-dsh-fs", "args": []}}}}}}
{FENCE}

{FENCE}toml
not = [valid
{FENCE}
"""

SOUND = f"""# Sound examples

{FENCE}console
$ printf 'one\\n' > a.txt
$ cat a.txt
one
{FENCE}

{FENCE}python
from pathlib import Path

assert Path("a.txt").read_text() == "one\\n"
{FENCE}

<!-- skip: next "shows a skip" -->

{FENCE}bash
exit 1
{FENCE}

{FENCE}text
not run
{FENCE}
"""


@pytest.fixture
def docs_project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(ROOT / "conftest.py", pytester.path / "conftest.py")
    (pytester.path / "README.md").write_text(BROKEN)
    (pytester.path / "docs" / "using").mkdir(parents=True)
    (pytester.path / "docs" / "using" / "sound.md").write_text(SOUND)
    return pytester


def test_every_broken_example_fails_and_the_sound_ones_pass(docs_project: pytest.Pytester) -> None:
    result = docs_project.runpytest("-p", "no:cacheprovider", "-rfs", "README.md", "docs")
    # the skip directive is an example of its own, and passes
    result.assert_outcomes(failed=9, passed=3, skipped=1)
    failures = "\n".join(result.outlines)
    for line in (3, 8, 12, 16, 21, 25, 29, 33, 37):
        assert f"FAILED README.md::line:{line}," in failures
    assert "expected:\ntwo\ngot:\none" in failures
    assert "exited 1" in failures
    assert "expected:\ngot:\nsilent?" in failures
    assert "the script exited 3" in failures
    assert "a fence with language ''" in failures
    assert "a fence with language 'yaml'" in failures
    assert "'no-such-command-dsh-fs' is not on PATH" in failures
    assert "shows a skip" in failures


def test_a_skipped_block_is_reported_at_its_document_and_line(
    docs_project: pytest.Pytester,
) -> None:
    result = docs_project.runpytest("-p", "no:cacheprovider", "-rs", "docs")
    result.assert_outcomes(passed=3, skipped=1)
    assert "SKIPPED [1] docs/using/sound.md:17: shows a skip" in result.outlines


def test_the_readme_and_docs_are_collected_not_the_reference(
    docs_project: pytest.Pytester,
) -> None:
    (docs_project.path / "packages" / "p").mkdir(parents=True)
    (docs_project.path / "packages" / "p" / "README.md").write_text(BROKEN)
    (docs_project.path / "docs" / "extending").mkdir()
    (docs_project.path / "docs" / "extending" / "more.md").write_text(SOUND)
    (docs_project.path / "docs" / "reference").mkdir()
    (docs_project.path / "docs" / "reference" / "tools.md").write_text(BROKEN)
    result = docs_project.runpytest("-p", "no:cacheprovider", "--co", "-q", ".")
    collected = [line for line in result.outlines if "::line:" in line]
    assert {line.split("::")[0] for line in collected} == {
        "README.md",
        "docs/using/sound.md",
        "docs/extending/more.md",
    }
