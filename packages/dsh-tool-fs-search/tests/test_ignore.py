"""Git's ignore rules: three kinds of file, layered per directory (pathspec's semantics)."""

from __future__ import annotations

from dsh_tool_fs_search.ignore import EXCLUDE_FILE, GITIGNORE_FILE, IGNORE_FILE, IgnoreRules


def test_a_gitignore_applies_with_gits_semantics() -> None:
    rules = IgnoreRules().below("", {GITIGNORE_FILE: "# comment\n*.log\n!keep.log\nbuild/\n/top\n"})
    assert rules.ignores("a.log", is_dir=False)
    assert rules.ignores("deep/a.log", is_dir=False)
    assert not rules.ignores("keep.log", is_dir=False)  # negation
    assert rules.ignores("x/build", is_dir=True)
    assert not rules.ignores("build", is_dir=False)  # a directory-only pattern
    assert rules.ignores("top", is_dir=False)
    assert not rules.ignores("x/top", is_dir=False)  # anchored to its directory
    assert not rules.ignores("comment", is_dir=False)


def test_a_deeper_gitignore_decides_first_for_its_directory() -> None:
    rules = (
        IgnoreRules()
        .below("", {GITIGNORE_FILE: "*.log\n"})
        .below("sub/", {GITIGNORE_FILE: "!*.log\n/local.txt\n"})
    )
    assert rules.ignores("a.log", is_dir=False)
    assert not rules.ignores("sub/a.log", is_dir=False)
    assert rules.ignores("sub/local.txt", is_dir=False)  # anchored to sub/, not the root
    assert not rules.ignores("local.txt", is_dir=False)


def test_an_ignore_file_beats_every_gitignore_and_exclude_comes_last() -> None:
    rules = (
        IgnoreRules()
        .below("", {IGNORE_FILE: "!wanted.log\n", EXCLUDE_FILE: "*.tmp\n!keep.tmp\n"})
        .below("sub/", {GITIGNORE_FILE: "*.log\nkeep.tmp\n"})
    )
    assert not rules.ignores("sub/wanted.log", is_dir=False)  # .ignore above wins
    assert rules.ignores("sub/other.log", is_dir=False)
    assert rules.ignores("sub/keep.tmp", is_dir=False)  # .gitignore beats exclude
    assert rules.ignores("x.tmp", is_dir=False)


def test_no_rules_ignore_nothing() -> None:
    assert not IgnoreRules().ignores("a.log", is_dir=False)
    assert IgnoreRules().below("", {GITIGNORE_FILE: "\n# only a comment\n"}) == IgnoreRules()
