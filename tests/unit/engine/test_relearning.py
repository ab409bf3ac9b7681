"""After a lost state: which events wait for the round's list, which round ends it, and the host's
memory of the generation it saw (pure, or a file in a temporary folder)."""

from __future__ import annotations

from datetime import timedelta

from notify_helpers import NOW, came_back, health_changed, went_bad

from monitor.core.errors import ErrorInfo
from monitor.engine.events import DeadLettered, FallingBehind
from monitor.engine.health import FAIL, UNKNOWN
from monitor.engine.tasks import Round
from monitor.notify.documents import AlertMemory
from monitor.notify.relearning import held_back, relearned, relearning_round, start_relearning
from monitor.storage.generations import FILE_NAME, GenerationMemory

A, B = "sheet-a", "sheet-b"


def test_only_first_verdicts_wait_while_relearning_and_nothing_waits_otherwise():
    first = health_changed(A, UNKNOWN, FAIL)
    worse = went_bad(B)  # ok -> fail: seen since the loss, a change people must hear now
    dead = DeadLettered(at=NOW, run_id="r", spreadsheet_id=B, name="B", attempts=1,
                        error=ErrorInfo("permanent", "The caller does not have permission", 403))
    behind = FallingBehind(at=NOW, run_id="r", round_id="r1", round_started_at=NOW, done=1, total=3)
    events = [first, worse, came_back(A), dead, behind]

    told, held = held_back(events, start_relearning(AlertMemory(), NOW))
    assert held == [first, dead] and told == [worse, came_back(A), behind]
    assert held_back(events, AlertMemory()) == (events, [])


def test_the_first_round_begun_after_the_loss_ends_the_relearning_once_complete():
    memory = start_relearning(AlertMemory(), NOW)
    older = Round.build([A], NOW - timedelta(minutes=1))
    assert relearning_round(memory, older) is memory  # a round from before the loss does not count
    rnd = Round.build([A, B], NOW + timedelta(seconds=1))
    memory = relearning_round(memory, rnd)
    assert memory.relearning.round == rnd.id and not relearned(memory, rnd)
    for task in list(rnd.tasks.values()):
        rnd.start(task)
        rnd.succeed(task, NOW)
    assert relearned(memory, rnd)
    assert relearning_round(memory, Round.build([A], NOW + timedelta(hours=1))) is memory  # kept


def test_the_host_remembers_each_redis_generation_on_its_own(tmp_path):
    one, two = GenerationMemory(tmp_path, "Redis a:1 db 0 (prefix 'x')"), GenerationMemory(tmp_path, "b")
    assert one.remembered() is None
    one.remember("g1")
    two.remember("g2")
    assert one.remembered() == "g1" and two.remembered() == "g2"
    assert (tmp_path / FILE_NAME).stat().st_mode & 0o777 == 0o600


def test_an_unreadable_memory_is_no_memory_and_an_unwritable_folder_costs_only_the_check(tmp_path, caplog):
    (tmp_path / FILE_NAME).write_text("{not json")
    assert GenerationMemory(tmp_path, "here").remembered() is None
    (tmp_path / "a-file").write_text("")  # a state folder that cannot be made (even by root)
    GenerationMemory(tmp_path / "a-file", "here").remember("g1")  # logs, never raises
    assert "redis_generation_not_kept" in caplog.text
