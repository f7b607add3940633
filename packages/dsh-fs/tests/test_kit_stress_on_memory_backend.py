"""Long profile (``--long``): the kit's races and cancellations, many more times."""

from __future__ import annotations

import pytest
from dsh_fs.testing import FileSystemContract, Scratch
from dsh_fs_memory import MemoryScratch

pytestmark = pytest.mark.long


class StressedContract(FileSystemContract):
    contenders = 200


@pytest.mark.anyio
@pytest.mark.parametrize(
    "test",
    [
        "test_concurrent_guarded_writes_from_one_version_let_exactly_one_win",
        "test_concurrent_guarded_edits_from_one_version_let_exactly_one_win",
        "test_concurrent_guarded_writes_and_edits_from_one_version_let_exactly_one_win",
        "test_concurrent_unguarded_edits_lose_no_update_and_run_in_arrival_order",
        "test_cancelled_waiting_mutation_does_not_run_after_the_lock_frees",
        "test_a_guarded_delete_and_guarded_writes_from_one_version_let_one_win",
        "test_a_guarded_move_and_guarded_edits_from_one_version_let_one_win",
        "test_moves_of_many_sources_to_one_free_destination_let_one_win",
        "test_concurrent_deletes_of_one_file_remove_it_once",
    ],
)
async def test_races_with_two_hundred_contenders(test: str) -> None:
    scratch: Scratch = MemoryScratch()
    await getattr(StressedContract(), test)(scratch)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "test",
    [
        "test_cancelled_write_leaves_the_old_content_or_completes",
        "test_cancelled_edit_leaves_the_old_content_or_completes",
        "test_a_cancelled_tree_delete_leaves_the_tree_whole_or_gone",
        "test_a_cancelled_move_of_a_file_leaves_both_paths_as_before_or_as_after",
        "test_a_cancelled_move_of_a_directory_leaves_it_where_it_was_or_moved_whole",
    ],
)
async def test_cancellation_at_every_step_up_to_two_hundred(test: str) -> None:
    completed = 0
    for steps in range(200):
        scratch: Scratch = MemoryScratch()
        await getattr(FileSystemContract(), test)(scratch, steps)
        completed += 1
    assert completed == 200
