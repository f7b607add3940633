"""The LangChain tests share their scripted chat model through :mod:`dsh_fs_langchain_doubles`.

pytest runs with ``--import-mode=importlib``, which puts no test directory on
``sys.path``: this conftest puts this one there, so the tests can import it.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
