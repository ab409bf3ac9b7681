"""`sheet-monitor demo` end to end, in a fresh interpreter (it configures logging for the process)."""

from __future__ import annotations

import re
import subprocess
import sys

from paths import REPO


def test_the_demo_prints_the_telegram_messages_and_a_status_matching_the_dataset(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "monitor.cli", "demo", "--sheets", "20", "--budget", "30"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr
    assert "What the team received in Telegram" in result.stdout
    assert "Answers are delayed by the Google latency model at full scale: median 380 ms" in result.stdout
    assert "Drive shows edits late, by Google's change-feed delay at full scale" in result.stdout
    assert re.search(r"run 1: \d+ reads \(up to \d+ at once, \d+\.\d\d s each on average\)", result.stdout)
    assert "round " in result.stdout and "20 of 20 done" in result.stdout
    # Someone answers from the chat: the press, what the run said, the phone's answer, the new buttons.
    assert re.search(r"Buttons: \[✔ Store .+\] \[🔕 1d\]", result.stdout)  # under the alert
    assert "A press in the chat: @olga presses [🔕 1d]" in result.stdout
    press = result.stdout[result.stdout.index("A press in the chat"):result.stdout.index("Next, on your own")]
    assert re.search(r"  🔕 Muted for 1 day by @olga: Store .+", press), press
    assert "(Olga's phone shows: 🔕 Muted for 1 day" in press, press
    assert "The row's buttons are now: " in press and "[🔔]" in press, press
    matched = re.search(r"verdicts matching the dataset's known breakage: (\d+) of (\d+)", result.stdout)
    assert matched and matched.group(1) == matched.group(2) == "20"
    # It ends with how to go on: on one's own spreadsheets (checks proposed, the cron lines written),
    # or the same path on the sandbox, as the README walks it.
    going_on = result.stdout[result.stdout.index("Next, on your own"):]
    assert "sheet-monitor suggest" in going_on and "sheet-monitor init --suggested" in going_on
    assert 'sheet-monitor check "<a spreadsheet\'s URL>"' in going_on
    assert " ".join(going_on.split()).endswith('README.md, "From a Drive folder to cron, in five commands".')
    readme = (REPO / "README.md").read_text()
    assert "## From a Drive folder to cron, in five commands" in readme  # the section it names
    assert not any(tmp_path.iterdir())  # everything lived in a temporary folder, now removed


def test_the_demo_saves_its_status_page_and_a_screenshot_and_says_where(tmp_path):
    from monitor.report.browser import chromium_path

    result = subprocess.run(
        [sys.executable, "-m", "monitor.cli", "demo", "--sheets", "20", "--budget", "30", "--report", "seen"],
        cwd=tmp_path, capture_output=True, text=True, timeout=90,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr
    page, shot = tmp_path / "seen" / "status.html", tmp_path / "seen" / "status.png"
    assert f"Status page: {page}" in result.stdout and "is generated" in result.stdout
    assert "<h1>sheet-monitor status</h1>" in page.read_text()
    if chromium_path() is not None:
        assert f"Its screenshot: {shot}" in result.stdout and shot.read_bytes()[:4] == b"\x89PNG"
