"""Trying the monitor on the sandbox: `GET /_sandbox/spreadsheets` lists what it serves with titles and
what a dataset broke in each (to tell the monitor's verdicts from the sandbox's intent), and the config
`--write-config` writes runs as cron would, its budget under the interval."""

from __future__ import annotations

import requests

from monitor.config import load_config
from sheet_sandbox import dataset as datasets
from sheet_sandbox.server import running_sandbox


def test_the_listing_names_titles_breakages_and_faults_of_a_loaded_dataset():
    dataset = datasets.generate(40, seed=3)
    with running_sandbox(telegram=False, latency="off") as sandbox:
        datasets.apply(dataset, sandbox.google)
        listed = requests.get(f"{sandbox.base_url}/_sandbox/spreadsheets", timeout=5).json()["spreadsheets"]
    by_id = {row["id"]: row for row in listed}
    assert set(by_id) == {entry.id for entry in dataset.sheets}  # the missing ones too
    for entry in dataset.sheets:
        row = by_id[entry.id]
        assert row["title"] == entry.title
        assert row["breakage"] == {"kind": entry.kind, "expect": entry.expect, "note": entry.note}
        assert row["stored"] is (entry.kind != "missing")
    removed = next(entry for entry in dataset.sheets if entry.kind == "access_removed")
    assert by_id[removed.id]["faults"] >= 1  # the 403 is a fault in force on it
    healthy = next(entry for entry in dataset.sheets if entry.kind == "healthy")
    assert by_id[healthy.id]["faults"] == 0
    assert [row["stored"] for row in listed].index(False) > 0  # stored first, then the missing ones


def test_the_written_config_gives_a_run_a_budget_under_the_cron_interval(tmp_path):
    dataset = datasets.generate(5, seed=3)
    with running_sandbox(telegram=False, latency="off") as sandbox:
        credentials = sandbox.write_credentials(tmp_path / "secrets", 1)
        path = datasets.write_config(dataset, tmp_path / "monitor.toml", credentials=credentials,
                                     endpoint=sandbox.base_url)
    config = load_config(path, {})
    assert config.run.budget < config.run.round_interval
    assert str(config.run.budget) == "0:04:30" and str(config.run.round_interval) == "0:05:00"
    assert not [warning for warning in config.warnings if "budget" in warning]
