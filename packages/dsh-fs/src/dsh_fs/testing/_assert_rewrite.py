"""Give the kit's own ``assert`` statements pytest's detailed failure messages.

pytest rewrites asserts only in test modules, conftests and modules registered
before they are imported; the package imports this module first. The modules
are found, not listed, so a new contract module is covered without a list to
keep. (Registering ``"dsh_fs.testing"`` itself, or this module, would make
pytest warn: both are already being imported when this runs, and hold no
assert.)
"""

import os
import pkgutil

import pytest

_modules = (f"{__package__}.{m.name}" for m in pkgutil.iter_modules([os.path.dirname(__file__)]))
pytest.register_assert_rewrite(*(name for name in _modules if name != __name__))
