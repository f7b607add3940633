"""dsh-fs-policy: read-before-edit and version-guarded writes, purely through hooks.

``FsPolicy`` is a plain pluggy plugin object. It never touches a filesystem:
it remembers which version of which target each owner (the ``session`` of the
hook's ``actor``) has observed, and turns that memory into the write intent
and edit guard the backend enforces inside its per-target lock.
"""

from ._policy import FsPolicy

__version__ = "0.2.0"

__all__ = ["FsPolicy"]
