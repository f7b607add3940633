"""``python -m dsh_tool_fs.cli``: the ``dsh-fs`` command."""

import sys

from .commands import main

sys.exit(main())
