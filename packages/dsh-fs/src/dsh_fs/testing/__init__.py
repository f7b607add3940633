"""The backend conformance kit: the contract of ``dsh_fs.FileSystem`` as pytest tests.

placeholder — filled in by the conformance-kit work.
"""

from ._scratch import Scratch

__all__ = ["Scratch"]
