"""docs/reference/ is what the code says: regenerating it changes nothing.

The reference (every tool's schema, every message, every footer, every error
code) is written by ``scripts/reference.py`` from the installed tools and the
real stack. This test renders it again and compares it with the committed
files, so a changed message or schema fails here until the reference is
regenerated (``python scripts/reference.py``) and the change is reviewed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "reference.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dsh_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


RENDERED: dict[str, str] = _generator().render()


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_reference_file_is_up_to_date(name: str) -> None:
    committed = ROOT / "docs" / "reference" / name
    assert committed.exists(), f"docs/reference/{name} is missing: run python scripts/reference.py"
    assert committed.read_text(encoding="utf-8") == RENDERED[name], (
        f"docs/reference/{name} is stale: run python scripts/reference.py and review the diff"
    )


def test_reference_has_no_file_the_generator_does_not_write() -> None:
    present = {path.name for path in (ROOT / "docs" / "reference").iterdir()}
    assert present == set(RENDERED)


def test_every_error_code_has_a_meaning() -> None:
    from dsh_fs import FsErrorCode

    errors = RENDERED["errors.md"]
    assert all(f"| `{code}` |" in errors for code in FsErrorCode)
