"""The release check's long-description link rule (``scripts/release_check.py``).

A distribution's long description is its README, shown on the index's
project page, where a relative link such as ``../../docs/security.md``
leads nowhere. The release check refuses such links; this runs the same
function on the READMEs in every test run, and checks the function itself.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = sorted(path.name for path in (REPO / "packages").iterdir() if path.is_dir())


def load_release_check() -> ModuleType:
    path = REPO / "scripts" / "release_check.py"
    spec = importlib.util.spec_from_file_location("release_check", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("release_check", module)
    spec.loader.exec_module(module)
    return module


release_check = load_release_check()


def test_relative_links_are_found_in_every_markdown_form() -> None:
    text = (
        "See [security](../../docs/security.md) and ![logo](img/logo.png).\n"
        "[ref]: docs/cli.md\n"
        '<a href="CHANGELOG.md">changes</a>\n'
    )
    assert release_check.relative_links(text) == [
        "../../docs/security.md",
        "img/logo.png",
        "docs/cli.md",
        "CHANGELOG.md",
    ]


def test_absolute_links_anchors_and_code_blocks_pass() -> None:
    text = (
        "[docs](https://github.com/dsh-fs/dsh-fs/blob/main/docs/cli.md) [mail](mailto:a@b.c)"
        " [up](#rules) [`x`](<https://example.org/a b>)\n"
        "```python\nvalue = table[key](arg)\n```\n"
    )
    assert release_check.relative_links(text) == []


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_no_long_description_has_a_relative_link(dist: str) -> None:
    with (REPO / "packages" / dist / "pyproject.toml").open("rb") as f:
        readme = tomllib.load(f)["project"]["readme"]
    text = (REPO / "packages" / dist / readme).read_text()
    assert release_check.relative_links(text) == []
