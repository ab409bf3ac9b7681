"""How documents are stored (monitor.state.schema): fields at their default left out, read back whole."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from monitor.engine.health import SheetHealth, Tab
from monitor.engine.tasks import Task
from monitor.state.schema import HEALTH, TASK, DocumentError

AT = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def test_a_healthy_spreadsheets_record_stores_only_what_is_not_a_default():
    record = SheetHealth(since=AT, last_checked_at=AT, read_at=AT, checks="c7ac", time_zone="Etc/GMT",
                         tabs=(Tab("Stock", 0),))
    stored = json.loads(HEALTH.encode(record))
    assert set(stored) == {"since", "last_checked_at", "read_at", "checks", "time_zone", "tabs"}
    assert HEALTH.decode(HEALTH.encode(record)) == record


def test_a_record_stored_whole_by_an_earlier_release_reads_the_same():
    record = SheetHealth(since=AT, findings=(), time_zone="Asia/Novosibirsk")
    whole = json.dumps({**json.loads(HEALTH.adapter.dump_json(record)), "down_since": None})
    assert len(whole) > len(HEALTH.encode(record))
    assert HEALTH.decode(whole) == record


def test_a_task_without_its_required_fields_is_still_damage():
    task = Task("r1-000001", "sheet", "r1", AT)
    stored = json.loads(TASK.encode(task))
    assert stored == {"id": "r1-000001", "target": "sheet", "round_id": "r1",
                      "created_at": "2026-01-05T09:30:00.000Z"}
    with pytest.raises(DocumentError, match="target"):
        TASK.decode(json.dumps({key: value for key, value in stored.items() if key != "target"}))
