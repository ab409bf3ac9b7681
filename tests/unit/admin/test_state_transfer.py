"""`sheet-monitor state export` / `state import`: file -> Redis -> file loses nothing; a bad file exits 2
saying what, where and the fix; a target that holds a state is replaced only when asked; the run
lock is respected. Redis is the machine's, under a prefix of the test's own (``redis_location``).
"""

from __future__ import annotations

import json
import stat
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from cli_fixtures import A, invoke, seed, state_dir, write_config
from redis_fixtures import REDIS_URL

from monitor.engine.maintenance import start_maintenance
from monitor.state import changing_state, read_state
from monitor.storage import FileLocation

PASSWORD = "pw-that-must-never-show"


def redis_config(tmp_path, prefix: str):
    return write_config(tmp_path / "redis-side",
                        extra=f'\n[state]\nbackend = "redis"\nurl = "{REDIS_URL}"\nprefix = "{prefix}"\n')


def stored(location) -> dict[str, str]:
    with location.open(read_only=True) as store:
        return store.get_properties()


def test_file_to_redis_to_file_keeps_every_key_and_value(tmp_path, redis_location, monkeypatch):
    monkeypatch.setenv("SHEET_MONITOR_REDIS_PASSWORD", PASSWORD)
    on_file = write_config(tmp_path / "file-side")
    seed(on_file)  # a dead letter, an open breaker, a halted outbox, a round, a heartbeat
    original = stored(FileLocation(state_dir(on_file)))
    on_redis = redis_config(tmp_path, redis_location.prefix)

    exported = invoke(on_file, "state", "export", str(tmp_path / "a.json"))
    imported = invoke(on_redis, "state", "import", str(tmp_path / "a.json"))
    again = invoke(on_redis, "state", "export", str(tmp_path / "b.json"))
    back_on_file = write_config(tmp_path / "file-again")
    restored = invoke(back_on_file, "state", "import", str(tmp_path / "b.json"))

    for result in (exported, imported, again, restored):
        assert result.exit_code == 0, result.output
        assert PASSWORD not in result.output
    assert f"Exported {len(original)} entries" in exported.output
    assert stored(redis_location) == original
    assert json.loads((tmp_path / "b.json").read_text())["properties"] == original
    assert stored(FileLocation(state_dir(back_on_file))) == original
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o600
    # What the commands read from it is the same state: the dead letter and the breaker came along.
    assert read_state(redis_location).dlq and read_state(redis_location).open_breakers()


def test_maintenance_windows_and_those_told_move_with_the_state(tmp_path, redis_location, monkeypatch):
    # A window started from the chat silences its spreadsheets until it ends, and the alert memory
    # says it was told: after a move to Redis (and back) the same window is in force, told once.
    monkeypatch.setenv("SHEET_MONITOR_REDIS_PASSWORD", PASSWORD)
    on_file = write_config(tmp_path / "file-side")
    now = seed(on_file, datetime(2026, 3, 2, 12, 0, tzinfo=UTC))  # stored times keep milliseconds
    with changing_state(state_dir(on_file), actor="test", now=now) as session:
        window = start_maintenance(session.state, now, now + timedelta(hours=2), "@ivan", "moving", [A])
        session.state.alerts = replace(session.state.alerts, maintenance=(window,))
    on_redis = redis_config(tmp_path, redis_location.prefix)
    assert invoke(on_file, "state", "export", str(tmp_path / "a.json")).exit_code == 0
    assert invoke(on_redis, "state", "import", str(tmp_path / "a.json")).exit_code == 0
    moved = read_state(redis_location)
    assert moved.maintenance.windows == (window,) and moved.alerts.maintenance == (window,)
    assert invoke(on_redis, "state", "export", str(tmp_path / "b.json")).exit_code == 0
    assert json.loads((tmp_path / "b.json").read_text())["properties"]["maintenance"] == stored(
        FileLocation(state_dir(on_file)))["maintenance"]


def test_import_refuses_a_target_holding_a_state_unless_replace(tmp_path, redis_location):
    on_file = write_config(tmp_path / "file-side")
    seed(on_file)
    on_redis = redis_config(tmp_path, redis_location.prefix)
    assert invoke(on_file, "state", "export", str(tmp_path / "a.json")).exit_code == 0
    assert invoke(on_redis, "state", "import", str(tmp_path / "a.json")).exit_code == 0
    with redis_location.lock("run"):
        redis_location.open().set_property("extra", "{}")

    refused = invoke(on_redis, "state", "import", str(tmp_path / "a.json"))
    assert refused.exit_code == 1
    assert "already holds" in refused.stderr and "--replace" in refused.stderr
    assert "extra" in stored(redis_location)

    replaced = invoke(on_redis, "state", "import", str(tmp_path / "a.json"), "--replace")
    assert replaced.exit_code == 0, replaced.output
    assert stored(redis_location) == stored(FileLocation(state_dir(on_file)))  # "extra" is gone


def test_import_waits_for_the_run_lock_and_changes_nothing_while_a_run_holds_it(tmp_path, redis_location):
    on_file = write_config(tmp_path / "file-side")
    seed(on_file)
    on_redis = redis_config(tmp_path, redis_location.prefix)
    assert invoke(on_file, "state", "export", str(tmp_path / "a.json")).exit_code == 0
    with redis_location.lock("run"):
        result = invoke(on_redis, "state", "import", str(tmp_path / "a.json"), "--wait", "0")
    assert result.exit_code == 1 and "run lock" in result.stderr
    assert not redis_location.exists()


def bad_import(tmp_path, text: str):
    target = write_config(tmp_path / "target")
    path = tmp_path / "bad.json"
    path.write_text(text)
    result = invoke(target, "state", "import", str(path))
    assert not FileLocation(state_dir(target)).exists()  # nothing was written
    return result, path


def test_a_file_that_is_not_json_exits_2_naming_the_line_and_the_fix(tmp_path):
    result, path = bad_import(tmp_path, '{"format": "sheet-monitor-state",\n "version": 1,,}')
    assert result.exit_code == 2
    assert f"{path}:2:" in result.stderr and "not JSON" in result.stderr
    assert "sheet-monitor state export FILE" in result.stderr


def test_an_export_from_a_newer_release_is_refused(tmp_path):
    newer = json.dumps({"layout": 2, "documents": {"health": 99}})
    result, path = bad_import(tmp_path, json.dumps(
        {"format": "sheet-monitor-state", "version": 1, "properties": {"schema": newer}}))
    assert result.exit_code == 2
    assert "written by a newer sheet-monitor (health)" in result.stderr


def test_a_value_that_is_not_text_or_another_kind_of_file_is_refused(tmp_path):
    result, _ = bad_import(tmp_path, json.dumps(
        {"format": "sheet-monitor-state", "version": 1, "properties": {"heartbeat": {"run_id": "x"}}}))
    assert result.exit_code == 2 and "properties['heartbeat'] should be the stored JSON text" in result.stderr
    result, _ = bad_import(tmp_path, json.dumps({"hello": 1}))
    assert result.exit_code == 2 and "not a sheet-monitor state export" in result.stderr


def test_export_before_any_state_says_so(tmp_path):
    result = invoke(write_config(tmp_path), "state", "export", str(tmp_path / "a.json"))
    assert result.exit_code == 1 and "nothing to export" in result.stderr
