"""`sheet-monitor demo`: the real monitor against the built-in sandbox, start to finish in about a minute.

Generates spreadsheets (some broken on purpose), serves them from the sandbox with a fake Telegram,
writes a config and credentials into a temporary folder, performs runs until one full round is done,
then prints what the team would have received in Telegram and a status table, and compares the
monitor's verdicts with what the dataset is known to contain.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from monitor.admin.plan import config_plan
from monitor.app.run import run_once
from monitor.checks import Health
from monitor.config import load_config
from monitor.core.wording import counted
from monitor.notify.buttons import buttons_in_text
from monitor.state import read_state
from monitor.storage.configured import state_location
from sheet_sandbox import dataset as datasets
from sheet_sandbox.server import running_sandbox

# Google allows 60 reads a minute per service account; at that pace 750 spreadsheets take 12.5
# minutes with one account. The demo raises the sandbox's quota (and the config's pacing with it)
# so that a round fits in about a minute, and says so.
DEMO_READS_PER_MINUTE = 600
DEMO_CREDENTIALS = 3
# The sandbox holds each answer as long as Google would (~0.4 s, see sheet_sandbox/latency.py): the
# run keeps as many reads in flight as the raised quota can use at that latency (~13), so the demo
# shows real Google's answer times and still ends in under a minute.
DEMO_LATENCY_SCALE = 1.0
DEMO_REQUEST_TIMEOUT = "5s"  # above the slowest generated spreadsheet (3 s)
DEMO_CHAT_ID = -1001234567890
DEMO_TOKEN = "1000000001:demo-token-for-the-sandbox-only"
RUN_BUDGET = timedelta(seconds=90)


def run_demo(*, sheets: int, budget_seconds: float, seed: int, out: IO[str], report_to: Path | None = None
             ) -> None:
    say = lambda text="": print(text, file=out, flush=True)  # noqa: E731 - a local printer
    started = time.monotonic()
    dataset = datasets.generate(sheets, seed)
    project_quota = DEMO_READS_PER_MINUTE * DEMO_CREDENTIALS
    with (
        tempfile.TemporaryDirectory(prefix="sheet-monitor-demo-") as tmp,
        running_sandbox(read_per_user=DEMO_READS_PER_MINUTE, read_per_project=project_quota,
                        latency=DEMO_LATENCY_SCALE) as sandbox,
    ):
        folder = Path(tmp)
        datasets.apply(dataset, sandbox.google)
        sandbox.telegram.add_token(DEMO_TOKEN)
        sandbox.telegram.add_chat(DEMO_CHAT_ID, title="Operations (demo)")
        credentials = sandbox.write_credentials(folder / "secrets", DEMO_CREDENTIALS)
        config_path = datasets.write_config(
            dataset,
            folder / "monitor.toml",
            credentials=credentials,
            endpoint=sandbox.base_url,
            telegram_api_base=sandbox.telegram_url,
            telegram_chat_id=str(DEMO_CHAT_ID),
            read_per_user=DEMO_READS_PER_MINUTE,
            read_per_project=project_quota,
            request_timeout=DEMO_REQUEST_TIMEOUT,
            # Its runs end with their round's work: the demo shows one round's runs after another,
            # not a run watching Drive's feed for the rest of a cron budget.
            run={"change_poll": "off"},
        )
        config = load_config(config_path, {"TELEGRAM_BOT_TOKEN": DEMO_TOKEN})

        say(f"sheet-monitor demo: {sheets} generated spreadsheets (seed {seed}) on the built-in sandbox.")
        _print_setup(config, sandbox.google.latency.describe(), sandbox.google.feed_delay.describe(), say)

        runs, first_run_at = 0, datetime.now(UTC)
        while time.monotonic() - started < budget_seconds:
            runs += 1
            left = budget_seconds - (time.monotonic() - started)
            # The round's runs read the chat while they work (so their alerts have buttons) and end
            # with it; one run stays and listens afterwards, for the press shown below.
            result = run_once(config, budget=min(RUN_BUDGET, timedelta(seconds=max(left, 5))), stay=False)
            report = result.report
            state = read_state(state_location(config))
            stats, counts = state.heartbeat.stats, report.counts
            say(
                f"run {runs}: {counts.tasks} reads (up to {stats.concurrency or 0} at once, "
                f"{stats.mean_read_seconds or 0:.2f} s each on average), {counts.tasks_done} checked, "
                f"{counts.dead_lettered} dead-lettered, {counts.retries_scheduled} retries, "
                f"{report.duration_seconds:.1f} s ({report.stop_reason})"
            )
            if state is not None and state.round is not None and state.round.is_complete():
                break

        say()
        _print_telegram(sandbox.telegram.messages(DEMO_CHAT_ID), say)
        _print_status(read_state(state_location(config)), dataset, say)
        _show_a_press(config, sandbox.telegram, say)
        if report_to is not None:
            from monitor.app.demo_report import save_demo_report

            save_demo_report(config, first_run_at, RUN_BUDGET, report_to, seed, say)
        say(f"\nDone in {time.monotonic() - started:.0f} s. Config and state were in {folder} (now removed).")
    _print_next_steps(say)


PRESS_BUDGET = timedelta(seconds=10)  # a run that listens to the chat while it may be pressed
DEMO_PERSON = {"id": 70001, "first_name": "Olga", "username": "olga"}


def _show_a_press(config, telegram, say) -> None:
    """Someone answers from the chat: a run listens, Olga presses *Mute 1 day* under the first
    spreadsheet of the message with buttons, and the run mutes it, says so and changes the buttons."""
    alerts = [message for message in telegram.messages(DEMO_CHAT_ID) if message.reply_markup]
    say()
    if not alerts:
        say("Nothing failed, so no message has buttons: there is no press to show.")
        return
    alert = alerts[0]
    rows = alert.reply_markup["inline_keyboard"]
    listening = threading.Thread(target=run_once, args=(config,), kwargs={"budget": PRESS_BUDGET},
                                 daemon=True)
    before = len(telegram.messages(DEMO_CHAT_ID))
    listening.start()
    ends = time.monotonic() + PRESS_BUDGET.total_seconds()
    while telegram.waiting_polls() == 0 and time.monotonic() < ends:
        time.sleep(0.05)
    pressed = next(button for button in rows[0] if button["callback_data"].startswith("d:"))
    telegram.press(DEMO_CHAT_ID, alert.message_id, callback_data=pressed["callback_data"], user=DEMO_PERSON)
    say(f"A press in the chat: @{DEMO_PERSON['username']} presses [{pressed['text']}] on the row of "
        f"[{rows[0][0]['text']}] under the message above. The run listening to the chat:")
    listening.join(PRESS_BUDGET.total_seconds() + 10)
    for message in telegram.messages(DEMO_CHAT_ID)[before:]:
        say(f"  {message.plain_text}")
    for answer in telegram.callback_answers():
        say(f"  (Olga's phone shows: {answer['text']})")
    edited = [edit for edit in telegram.edits(DEMO_CHAT_ID) if edit.message_id == alert.message_id]
    if edited:
        say("  The row's buttons are now: " + buttons_in_text(_texts(edited[-1].after.reply_markup)[:1]))


# What a person who liked the demo does next; README.md's "Using it on your spreadsheets" in short.
NEXT_STEPS = """
Next, on your own spreadsheets (README.md, "Using it on your spreadsheets"):
  1. Create a Google Cloud service account with the Sheets and Drive APIs enabled, download its JSON
     key, and share the spreadsheets, or the Drive folder that holds them, with its e-mail (Viewer).
  2. sheet-monitor suggest "<the folder's or a spreadsheet's URL>" --credentials KEY.json > suggested.toml
     proposes checks from what the spreadsheets hold; sheet-monitor init --suggested suggested.toml
     --credentials KEY.json writes monitor.toml with them, the two cron lines and systemd units.
  3. sheet-monitor check-config --access; sheet-monitor check "<a spreadsheet's URL>"; sheet-monitor run.
  4. Install the two cron lines init wrote in sheet-monitor.cron (the runs, and sheet-watchdog).
The same path on the sandbox, from a Drive folder to cron in five commands: README.md, "From a Drive
folder to cron, in five commands"."""


def _print_next_steps(say) -> None:
    say(NEXT_STEPS)


def _print_setup(config, latency: str, feed_delay: str, say) -> None:
    say(
        f"  Shortened for the demo: quota raised to {DEMO_READS_PER_MINUTE} reads/min per account "
        f"(Google allows 60) with {DEMO_CREDENTIALS} accounts, request timeout {DEMO_REQUEST_TIMEOUT}."
    )
    say(f"  Answers are delayed by the {latency} (Google: ~0.4 s).")
    say(f"  Drive shows edits late, by {feed_delay}.")
    # A first round learns each spreadsheet's time zone in the request that reads its values.
    first = config_plan(config)["reads_per_round"]
    say(f"  With Google's real quota this first round ({first} reads: values, each with its time zone) "
        f"would take {first / (60 * DEMO_CREDENTIALS):.1f} min.")
    say()


def _print_telegram(messages, say) -> None:
    say(f"What the team received in Telegram ({counted(len(messages), 'message')}):")
    for message in messages:
        say("-" * 72)
        say(message.plain_text)
        if message.reply_markup:
            say("Buttons: " + buttons_in_text(_texts(message.reply_markup)))
    say("-" * 72)
    say()


def _texts(reply_markup: dict) -> list[list[str]]:
    return [[button["text"] for button in row] for row in reply_markup["inline_keyboard"]]


def _print_status(state, dataset, say) -> None:
    shown = Counter(record.shown for record in state.health.values())
    say("Status")
    say(f"  {'health':<10}{'spreadsheets':>12}")
    for health in ("ok", "warn", "fail", "error", "skipped", "unknown"):
        if shown.get(health):
            say(f"  {health:<10}{shown[health]:>12}")
    rnd = state.round
    if rnd is not None:
        say(f"  round {rnd.id}: {rnd.finished()} of {len(rnd)} done")
    say(f"  dead-letter queue: {len(state.dlq)}   open breakers: {len(state.open_breakers())}")

    # Breakages made after a first read (rows dropped, a column renamed) pass this first round.
    expected = {entry.id: "ok" if entry.kind in datasets.AFTER_FIRST_READ else entry.expect
                for entry in dataset.sheets}
    verdicts = {sid: _verdict(record) for sid, record in state.health.items()}
    misses = [sid for sid, expect in expected.items() if verdicts.get(sid) != expect]
    say(f"  verdicts matching the dataset's known breakage: {len(expected) - len(misses)} of {len(expected)}"
        " (an open breaker counts as 'could not be read')")
    for sid in misses[:5]:
        say(f"    {sid}: expected {expected[sid]}, monitor says {verdicts.get(sid, 'never checked')}")


def _verdict(record) -> str:
    # A spreadsheet whose breaker opened was never read successfully this round: for the team it is
    # as unreadable as a dead-lettered one (they were told by a "breaker opened" alert).
    if record.skipped == "breaker_open" and record.health is Health.UNKNOWN:
        return "error"
    return record.health
