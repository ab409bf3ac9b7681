"""Shared by the operator commands' tests and the damaged-state tests: a monitor config, the real CLI
through click's CliRunner, and a state as a run leaves it, written and read the way every process does
(``monitor.state``), never by hand.

Plain helpers, not fixtures: each test module declares the fixtures it needs over them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner, Result
from config_fixtures import pem_key

from monitor.cli import output
from monitor.cli.main import cli
from monitor.core.errors import ErrorInfo
from monitor.engine.breaker import OPEN, BreakerState
from monitor.engine.health import ERROR, OK, SheetHealth, record_skip
from monitor.engine.heartbeat import Heartbeat, RunOutcome, RunStats, StopReason
from monitor.engine.run_counts import RunCounts
from monitor.engine.tasks import Round
from monitor.notify.documents import Halt, Outbox, PendingMessage
from monitor.state import State, changing_state, read_state
from monitor.storage import STATE_FILE_NAME


def sheet_id(n: int) -> str:
    return f"1adminSheet{n:04d}".ljust(44, "x")


A, B, C, D = sheet_id(1), sheet_id(2), sheet_id(3), sheet_id(4)
FORBIDDEN = ErrorInfo("permanent", "The caller does not have permission", 403, "PERMISSION_DENIED")


def write_config(folder: Path, ids=(A, B, C), credentials: list[Path] | None = None,
                 endpoint: str | None = None, extra: str = "", run: tuple[str, ...] = ()) -> Path:
    """``folder/monitor.toml``: the spreadsheets ``ids`` ("Store 1", ...) with a formula-error and a
    threshold check, state in ``folder/state``; one service-account file unless ``credentials``;
    ``run``: more lines of its [run] section. Its runs end with their round's work (``change_poll``
    off), as the tests wait on them, unless ``run`` sets ``change_poll``."""
    folder.mkdir(parents=True, exist_ok=True)
    if credentials is None:
        credentials = [folder / "sa-1.json"]
        credentials[0].write_text(json.dumps({
            "type": "service_account", "client_email": "a@example.iam.gserviceaccount.com",
            "private_key": pem_key(), "token_uri": "https://oauth2.example/token"}))
    lines = [
        "[run]", 'state_dir = "state"', 'budget = "4m"', 'round_interval = "5m"', *run,
        *([] if any(line.startswith("change_poll") for line in run) else ['change_poll = "off"']), "",
        "[google]", f"credentials = {json.dumps([str(p) for p in credentials])}",
        'request_timeout = "5s"',
    ]
    if endpoint:
        lines.append(f'api_endpoint = "{endpoint}"')
    lines += ["", "[profiles.stock]", "checks = [",
              '  { kind = "formula_errors", range = "Stock!A1:C20" },',
              '  { kind = "threshold", range = "Stock!C2:C20", aggregate = "min", '
              'warn = "< 5", fail = "< 0" },',
              "]", ""]
    for n, sid in enumerate(ids, start=1):
        lines += ["[[sheets]]", f'id = "{sid}"', f'name = "Store {n}"', 'profile = "stock"', ""]
    path = folder / "monitor.toml"
    path.write_text("\n".join(lines) + extra)
    return path


def state_dir(config: Path) -> Path:
    return config.parent / "state"


def state_file(config: Path) -> Path:
    return state_dir(config) / STATE_FILE_NAME


def invoke(config: Path, *args: str) -> Result:
    """``sheet-monitor ARGS --config CONFIG``; an exception the CLI lets escape fails the test."""
    return CliRunner().invoke(cli, [*args, "--config", str(config)], catch_exceptions=False)


def json_of(result: Result) -> dict:
    data = json.loads(result.stdout)
    assert data["version"] == output.JSON_VERSION
    return data


def saved_state(config: Path) -> State:
    """The state as the next process would read it."""
    state = read_state(state_dir(config))
    assert state is not None, "no state was saved"
    return state


def seed(config: Path, now: datetime | None = None) -> datetime:
    """A state as runs would leave it: A dead-lettered (403), B fine, C skipped behind an open breaker;
    the last run finished ok, one message waits in an outbox Telegram refuses. Returns ``now``."""
    now = now or datetime.now(UTC)
    with changing_state(state_dir(config), actor="test-seed", now=now) as session:
        state = session.state
        state.round = rnd = Round.build([A, B, C], now - timedelta(minutes=1))
        for task in list(rnd.tasks.values()):
            rnd.start(task)
            if task.target == A:
                rnd.record_failure(task, now, FORBIDDEN, 1)
                rnd.fail(task)
                state.dlq.record(A, "Store 1", task, FORBIDDEN, now)
            elif task.target == C:
                rnd.skip(task, now, "breaker_open")
            else:
                rnd.succeed(task, now)
        state.health[A] = SheetHealth(ERROR, since=now, last_checked_at=now, down_since=now)
        state.health[B] = SheetHealth(OK, since=now, last_checked_at=now)
        state.health[C] = record_skip(SheetHealth(OK, since=now, last_checked_at=now), "breaker_open")
        state.breakers[C] = BreakerState(OPEN, 3, opened_at=now, cooldown_seconds=900.0, first_opened_at=now)
        state.heartbeat = Heartbeat(
            run_id="run-x", started_at=now - timedelta(seconds=50), budget_seconds=240,
            finished_at=now - timedelta(seconds=10), outcome=RunOutcome.OK,
            stats=RunStats(RunCounts(tasks=3, tasks_done=2, dead_lettered=1,
                                     reads_by_credential={"/x/sa-1.json": 3}),
                           duration_seconds=40.0, stop_reason=StopReason.ROUND_DONE))
        state.outbox = Outbox(pending=(PendingMessage("k1", "x", now),),
                              halted=Halt(now, 401, "Unauthorized"))
    return now


def sandbox_config_head(sandbox, folder: Path, chat: int | str) -> str:
    """The [run], [google] and [telegram] tables of a config on ``sandbox`` (one key, written under
    ``folder``, and its fake Telegram's ``chat``): what a test's own profiles and sheets follow."""
    [key] = sandbox.write_credentials(folder / "keys", 1)
    return f"""
[run]
state_dir = "state"
budget = "4m"
change_poll = "off"  # the runs end with their round's work: the tests wait on them

[google]
credentials = ["{key}"]
api_endpoint = "{sandbox.base_url}"
request_timeout = "5s"

[telegram]
chat_id = "{chat}"
api_base = "{sandbox.telegram_url}"
listen = false  # the runs do not stay to answer the chat (tests/test_chat_*.py do)
"""


# A profile of one threshold on a "Stock" tab's quantities: below 5 warns, below 0 fails.
STOCK_PROFILE = """
[profiles.stock]
checks = [
  { kind = "threshold", range = "Stock!C2:C20", aggregate = "min", warn = "< 5", fail = "< 0" },
]
"""


def stock_sheets(names: dict[str, str]) -> str:
    """A ``[[sheets]]`` entry on STOCK_PROFILE for each spreadsheet id of ``names``, named after it."""
    return "".join(f'\n[[sheets]]\nid = "{sid}"\nname = "{name}"\nprofile = "stock"\n'
                   for sid, name in names.items())
