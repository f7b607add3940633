"""Give the kit's own ``assert`` statements pytest's detailed failure messages.

pytest rewrites asserts only in test modules, conftests and modules registered
before they are imported; the package imports this module first.
"""

import pytest

pytest.register_assert_rewrite(
    *(
        f"dsh_fs.testing.{name}"
        for name in (
            "_base",
            "_concurrency_contract",
            "_contract",
            "_edit_contract",
            "_expect",
            "_list_contract",
            "_paths_contract",
            "_read_contract",
            "_write_contract",
        )
    )
)
