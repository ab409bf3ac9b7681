"""An anomaly check end to end: `sheet-monitor run` as cron starts it, against the sandbox over real
HTTP and the fake Telegram, with three weeks of a store's row counts already learnt in its state.

A store that loses a third of its rows (too few for its change check's 40 %, far too many for what
its own history says is normal) is told in one alert that names the range and what was usual.
"""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime, timedelta

from sandbox_fixtures import clean_env, served_dataset

from monitor.checks import AnomalyCheck, Buckets, bucket_number
from monitor.core.clock import SystemClock
from monitor.engine.history import SheetHistory
from monitor.state import changing_state
from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.telegram import FakeTelegram

TELEGRAM_TOKEN, TELEGRAM_CHAT = "123456:sandbox-token", -1001234567890
CHECK = AnomalyCheck(range="Stock!A2:A", metric="row_count", seasonality="day_of_week", min_history="14d")
WRITTEN = '  { kind = "anomaly", range = "Stock!A2:A", metric = "row_count", seasonality = "day_of_week", ' \
          'min_history = "14d" },\n'


def learnt(rows: int, now: datetime) -> Buckets:
    """Three weeks of daily row counts near ``rows``, up to yesterday (on UTC's clock; the store's own
    zone is a few hours off at most, which moves the days a bucket, never the weekdays' counts)."""
    today = bucket_number(now, UTC, "day")
    first = today - 22
    return Buckets(first, tuple(float(rows + (day % 5) - 2) for day in range(first, today - 1)))


def test_a_drop_in_a_stores_rows_is_told_once_naming_the_range_and_the_usual(tmp_path):
    telegram = FakeTelegram(SystemClock())
    telegram.add_token(TELEGRAM_TOKEN)
    telegram.add_chat(TELEGRAM_CHAT)
    with HTTPServerThread(telegram) as server, served_dataset(
            tmp_path, 3, faults=False, feed_delay="off", run_section={"round_interval": "1s"}) as served:
        text = served.config_path.read_text()
        text = text.replace("[profiles.stock]\nchecks = [\n", "[profiles.stock]\nchecks = [\n" + WRITTEN)
        text += f'\n[telegram]\nchat_id = "{TELEGRAM_CHAT}"\napi_base = "{server.base_url}"\nlisten = false\n'
        served.config_path.write_text(text)
        stores = [entry.id for entry in served.dataset.sheets if entry.profile == "stock"]
        rows = {store: len(served.dataset.payloads[store]["tabs"]["Stock"]) - 1 for store in stores}
        now = datetime.now(UTC)
        with changing_state(served.state_dir, actor="admin-test", now=now) as session:
            for store in stores:
                kept = {CHECK.name: learnt(rows[store], now)}
                session.state.history[store] = SheetHistory(now, buckets=kept)
        env = {**clean_env(), "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN}

        def run() -> None:
            subprocess.run(served.run_argv("--budget", "20"), cwd=served.folder, env=env, check=True,
                           capture_output=True, timeout=90)

        run()
        healthy = served.state()
        assert all(healthy.health[store].health == "ok" for store in stores), \
            {store: healthy.health[store].findings for store in stores}
        told_before = len(telegram.messages(TELEGRAM_CHAT))

        dropped = stores[0]
        payload = served.dataset.payloads[dropped]
        stock = payload["tabs"]["Stock"]
        kept = stock[: 1 + (len(stock) - 1) * 2 // 3]  # a third of the rows gone
        dropped_payload = {**payload, "tabs": {**payload["tabs"], "Stock": kept}}
        served.sandbox.google.store.put_control(dropped, dropped_payload)
        # The next round is due a second after the first began: a run started sooner (a fast machine
        # ends the first within it) would find the round done and read nothing.
        due = healthy.round.started_at + timedelta(seconds=1)
        time.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()))
        run()

        alerts = [message.plain_text for message in telegram.messages(TELEGRAM_CHAT)[told_before:]]
        about = [alert for alert in alerts if "usually" in alert]
        assert len(about) == 1, alerts
        [alert] = about
        assert payload["title"] in alert
        # On the tab's line the range is its cells: "Stock: 255 rows in A2:A, usually 381–384 on a ..."
        assert f"Stock: {len(kept) - 1} rows in A2:A, usually " in alert
        assert served.dataset.payloads[stores[1]]["title"] not in alert  # the other store is fine
        [finding] = served.state().health[dropped].findings
        assert finding.check == CHECK.name and finding.kind == "anomaly"
