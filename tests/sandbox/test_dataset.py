"""The dataset generator: deterministic, shaped like store-stock sheets, broken in known ways."""

from __future__ import annotations

import csv
import json
import tomllib
from collections import Counter
from datetime import UTC, datetime, timedelta

import gspread
import pytest

from monitor.checks import CHECK_KINDS, OtherSide, Past, evaluate_all, health_of, ranges_of
from monitor.config import load_config
from monitor.core.a1 import parse_a1
from monitor.core.clock import SystemClock
from monitor.google.client import build_gspread_client
from sheet_sandbox import dataset as ds
from sheet_sandbox.auth import TokenAuthority
from sheet_sandbox.dataset_generate import _ID_ALPHABET
from sheet_sandbox.faults import validate
from sheet_sandbox.server import running_sandbox

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
KINDS = {b.kind for b in ds.BREAKAGES}
TABLE_KINDS = ("columns_moved", "header_renamed", "duplicate_keys", "missing_values", "invalid_values")


def _moment(cell) -> datetime:
    return datetime.fromisoformat(cell["datetime"].replace("Z", "+00:00"))


def test_same_seed_gives_the_same_dataset_and_another_seed_a_different_one():
    first, again, other = ds.generate(60, 7, NOW), ds.generate(60, 7, NOW), ds.generate(60, 8, NOW)
    assert first.sheets == again.sheets
    assert json.dumps(first.payloads) == json.dumps(again.payloads)
    assert first.faults == again.faults
    assert [s.id for s in first.sheets] != [s.id for s in other.sheets]


def test_ids_look_like_google_spreadsheet_keys_and_titles_like_stores():
    data = ds.generate(200, 1, NOW)
    ids = [s.id for s in data.sheets]
    assert len(set(ids)) == 200
    for sheet_id in ids:
        assert len(sheet_id) == 44 and sheet_id[0] == "1"
        assert set(sheet_id) <= set(_ID_ALPHABET)
    assert data.sheets[13].title.startswith("Store 014 — ")


def test_about_twelve_percent_are_broken_and_every_kind_appears_with_one_hang():
    data = ds.generate(750, 7, NOW)
    kinds = Counter(s.kind for s in data.sheets)
    broken = sum(count for kind, count in kinds.items() if kind not in ("healthy", "catalogue"))
    assert 0.10 * 750 <= broken <= 0.15 * 750
    assert set(kinds) == KINDS | {"healthy", "catalogue"} and kinds["catalogue"] == 1
    assert kinds["hang"] == 1
    assert all(kinds[k] >= 3 for k in KINDS - {"hang"})
    assert set(data.manifest) == {s.id for s in data.sheets if s.kind not in ("healthy", "catalogue")}


def test_small_datasets_get_the_first_kinds_first():
    kinds = {s.kind for s in ds.generate(50, 7, NOW).sheets} - {"healthy", "catalogue"}
    assert kinds == {b.kind for b in ds.BREAKAGES[:6]}


def test_healthy_stock_tabs_are_fresh_positive_and_free_of_errors():
    data = ds.generate(120, 3, NOW)
    for entry in data.healthy():
        stock = data.payloads[entry.id]["tabs"][ds.STOCK_TAB]
        assert stock[0] == list(ds.STOCK_HEADER)
        assert ds.MIN_STOCK_ROWS <= len(stock) - 1 <= ds.MAX_STOCK_ROWS
        newest = max(_moment(row[4]) for row in stock[1:])
        assert NOW - timedelta(minutes=90) <= newest <= NOW - timedelta(minutes=5)
        assert min(row[5] for row in stock[1:]) >= 5
        assert not any(isinstance(c, str) and c.startswith("#") for row in stock for c in row)
        assert set(data.payloads[entry.id]["tabs"]) == {"Stock", "Sales", "Notes"}


def test_each_data_breakage_is_visible_in_the_payload():
    data = ds.generate(400, 11, NOW)

    def stock(kind):
        return [data.payloads[e.id]["tabs"].get(ds.STOCK_TAB) for e in data.of_kind(kind)]

    for rows in stock("formula_errors"):
        codes = {c for row in rows for c in row if isinstance(c, str) and c.startswith("#")}
        assert codes == {"#REF!", "#N/A", "#DIV/0!"}
    for rows in stock("negative_stock"):
        assert min(row[5] for row in rows[1:]) < 0
    for rows in stock("low_stock"):
        assert 0 <= min(row[5] for row in rows[1:]) < 5
    for rows in stock("stale"):
        assert max(_moment(row[4]) for row in rows[1:]) < NOW - timedelta(days=1)
    for rows in stock("empty_stock"):
        assert rows == [list(ds.STOCK_HEADER)]
    for rows in stock("renamed_tab"):
        assert rows is None
    for entry in data.of_kind("renamed_tab"):
        assert ds.RENAMED_STOCK_TAB in data.payloads[entry.id]["tabs"]
    for entry in data.of_kind("missing"):
        assert entry.id not in data.payloads
    for rows in stock("columns_moved"):
        assert (rows[0][1], rows[0][6]) == ("Reorder level", "Product")
        assert all(row[1] in ds.REORDER_LEVELS for row in rows[1:])
    for rows in stock("header_renamed"):
        assert rows[0][2] == "Vendor"
    for rows in stock("duplicate_keys"):
        assert len({row[0] for row in rows[1:]}) == len(rows) - 2
    for rows in stock("missing_values"):
        assert 1 <= sum(row[2] in ("", "n/a") for row in rows[1:]) <= 2
    for rows in stock("invalid_values"):
        assert sum(isinstance(row[3], str) for row in rows[1:]) == 1


def test_fault_kinds_come_with_valid_fault_specs_for_their_spreadsheet():
    data = ds.generate(400, 11, NOW)
    by_target = {spec["spreadsheet"]: validate(spec) for spec in data.faults}
    expected = {
        "access_removed": lambda f: f["statuses"] == [403] and f["repeat"],
        "flaky": lambda f: f["statuses"] == [503, 503] and not f["repeat"],
        "server_error": lambda f: f["statuses"] == [500],
        "slow": lambda f: 1500 <= f["latency_ms"] <= 3000 and not f["statuses"],
        "hang": lambda f: f["hang"],
    }
    for kind, holds in expected.items():
        entries = data.of_kind(kind)
        assert entries
        assert all(holds(by_target[e.id]) for e in entries), kind
    assert len(by_target) == sum(len(data.of_kind(kind)) for kind in expected)


def test_healthy_and_data_broken_sheets_get_the_health_the_manifest_promises():
    """The monitor's own checks, fed the values a batchGet would return, agree with the manifest."""
    data = ds.generate(300, 5, NOW)
    checks = ds.stock_profile()
    data_kinds = ("formula_errors", "negative_stock", "low_stock", "stale", "empty_stock", "unknown_sku",
                  *TABLE_KINDS, "prices_in_kopecks", "quantities_in_grams")
    sample = data.healthy()[:40] + [e for kind in data_kinds for e in data.of_kind(kind)]
    [catalogue] = data.of_kind("catalogue")
    skus = tuple(row[0] for row in data.payloads[catalogue.id]["tabs"][ds.CATALOGUE_TAB][1:])
    cross = next(check for check in checks if check.kind == "cross_sheet")
    past = Past(others={cross.name: OtherSide(catalogue.title, skus)})
    for entry in sample:
        stock = data.payloads[entry.id]["tabs"][ds.STOCK_TAB]
        ranges = [_value_range(stock, a1) for a1 in ranges_of(checks)]
        results = evaluate_all(checks, ranges, NOW + timedelta(minutes=10), UTC, past=past)
        assert health_of(results) == entry.expect, (entry, results)


def test_breakages_after_the_first_read_get_the_health_the_manifest_promises_at_the_next():
    """A store served healthy, then edited: judged against what its first read kept."""
    data = ds.generate(300, 5, NOW)
    checks = ds.stock_profile()
    for kind in ds.AFTER_FIRST_READ:
        for entry in data.of_kind(kind):
            first = data.payloads[entry.id]["tabs"][ds.STOCK_TAB]
            then = data.edits[entry.id]["tabs"][ds.STOCK_TAB]
            before = evaluate_all(checks, {a1: _value_range(first, a1) for a1 in ranges_of(checks)}, NOW, UTC)
            assert health_of(before) == "ok"
            kept = {r.check_name: r.observed for r in before}
            past = Past(series={c.name: ((NOW, kept[c.name]),) for c in checks if c.kind == "change"},
                        headers={c.name: tuple(kept[c.name]) for c in checks if c.kind == "headers_changed"})
            later = NOW + timedelta(minutes=10)
            after = evaluate_all(checks, {a1: _value_range(then, a1) for a1 in ranges_of(checks)}, later,
                                 UTC, past=past)
            assert health_of(after) == entry.expect, (entry, after)


def _value_range(stock: list[list], a1: str) -> dict:
    """What UNFORMATTED_VALUE/SERIAL_NUMBER returns for ``a1`` on a tab holding ``stock``."""
    box = parse_a1(a1)
    first_row, last_row = box.start_row or 1, min(box.end_row or 1000, len(stock))
    first_col, last_col = (box.start_col or 1) - 1, box.end_col
    values = []
    for row in stock[first_row - 1:last_row]:
        values.append([_serial(c) if isinstance(c, dict) else c for c in row[first_col:last_col]])
    echoed = f"{box.sheet}!{a1.split('!')[1].split(':')[0]}:{a1.split(':')[1]}"
    result = {"range": echoed, "majorDimension": "ROWS"}
    if values:
        result["values"] = values
    return result


def _serial(cell: dict) -> float:
    return (_moment(cell) - datetime(1899, 12, 30, tzinfo=UTC)) / timedelta(days=1)


def test_save_and_load_round_trip_including_missing_spreadsheets(tmp_path):
    data = ds.generate(60, 2, NOW)
    ds.save(data, tmp_path / "set")
    loaded = ds.load(tmp_path / "set")
    assert loaded.sheets == data.sheets
    assert json.dumps(loaded.payloads, sort_keys=True) == json.dumps(data.payloads, sort_keys=True)
    assert loaded.faults == data.faults
    assert (loaded.seed, loaded.now) == (2, NOW)


def test_a_hand_written_dataset_folder_needs_no_manifest(tmp_path):
    mine = {"title": "Mine", "tabs": {"Stock": [["a"]]}}
    (tmp_path / "store-1.json").write_text(json.dumps(mine))
    (tmp_path / "x.json").write_text(json.dumps({"id": "abc", "title": "Other", "tabs": {}}))
    (tmp_path / "faults.json").write_text(json.dumps([{"spreadsheet": "abc", "statuses": [500]}]))
    loaded = ds.load(tmp_path)
    assert [(s.id, s.title) for s in loaded.sheets] == [("store-1", "Mine"), ("abc", "Other")]
    assert loaded.payloads["store-1"] == mine
    assert loaded.faults == [{"spreadsheet": "abc", "statuses": [500]}]


def _loadable_config(tmp_path, data) -> object:
    """The config ``write_config`` writes for ``data``, loaded as the monitor loads it."""
    creds = TokenAuthority(SystemClock()).write_credentials(tmp_path / "creds", 1, "http://127.0.0.1:1/token")
    path = ds.write_config(data, tmp_path / "monitor.toml", credentials=creds, endpoint="http://127.0.0.1:1")
    return load_config(path, {})


def test_a_hand_written_folder_is_configured_with_checks_that_fit_any_table_of_its_first_tab(tmp_path):
    (tmp_path / "set").mkdir()
    for name, first in (("a", "Stock"), ("b", "Stock"), ("c", "Q1 '26")):
        tabs = {first: [["SKU"], ["A-1"]], "Other": [["x"]]}
        (tmp_path / "set" / f"{name}.json").write_text(json.dumps({"title": name.upper(), "tabs": tabs}))
    data = ds.load(tmp_path / "set")
    assert [(e.kind, e.profile, e.broken) for e in data.sheets] == [
        ("given", "basic-1", False), ("given", "basic-1", False), ("given", "basic-2", False)]
    config = _loadable_config(tmp_path, data)
    ranges = {sheet.id: [check.range for check in sheet.checks] for sheet in config.sheets}
    assert ranges == {"a": ["Stock!A1:Z", "Stock!A2:A"], "b": ["Stock!A1:Z", "Stock!A2:A"],
                      "c": ["'Q1 ''26'!A1:Z", "'Q1 ''26'!A2:A"]}
    kinds = {check.kind for sheet in config.sheets for check in sheet.checks}
    assert kinds == {"formula_errors", "not_empty"}


def test_one_first_tab_is_one_basic_profile_and_a_store_without_its_catalogue_compares_with_none(tmp_path):
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "a.json").write_text(json.dumps({"title": "A", "tabs": {"Stock": [["SKU"]]}}))
    assert [e.profile for e in ds.load(tmp_path / "set").sheets] == ["basic"]
    # A generated dataset of one spreadsheet has no catalogue: its store's checks name no other.
    alone = ds.generate(1, 7, NOW)
    assert [e.profile for e in alone.sheets] == ["stock"]
    config = _loadable_config(tmp_path / "alone", alone)
    [sheet] = config.sheets
    assert "cross_sheet" not in {check.kind for check in sheet.checks}
    assert list(sheet.checks) == ds.stock_profile(catalogue=False)


def test_a_malformed_dataset_file_is_named_in_the_error(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        ds.load(tmp_path)
    with pytest.raises(ValueError, match="not a directory"):
        ds.load(tmp_path / "nowhere")


def _written_config(tmp_path, n, **kwargs):
    data = ds.generate(n, 7, NOW)
    creds = [tmp_path / "creds" / "sa-1.json", tmp_path / "creds" / "sa-2.json"]
    path = ds.write_config(
        data, tmp_path / "conf" / "monitor.toml", credentials=creds,
        endpoint="http://127.0.0.1:8931", **kwargs,
    )
    return data, path, tomllib.loads(path.read_text(encoding="utf-8"))


def test_written_config_is_toml_with_relative_paths_and_the_stock_profile(tmp_path):
    data, path, config = _written_config(
        tmp_path, 20, telegram_api_base="http://127.0.0.1:8932", telegram_chat_id="-100123",
        read_per_user=600, read_per_project=3000,
    )
    google = config["google"]
    assert google["credentials"] == ["../creds/sa-1.json", "../creds/sa-2.json"]
    assert google["api_endpoint"] == "http://127.0.0.1:8931"
    assert (google["read_requests_per_minute"], google["project_read_requests_per_minute"]) == (
        600, 3000)
    assert config["telegram"] == {"chat_id": "-100123", "api_base": "http://127.0.0.1:8932"}
    written = config["profiles"]["stock"]["checks"]
    assert [CHECK_KINDS[c["kind"]].model_validate(c) for c in written] == ds.stock_profile()
    assert written[1] == {"kind": "not_empty", "range": "Stock!A2:A500"}  # no defaults, no name
    assert [(s["id"], s["name"], s["profile"]) for s in config["sheets"]] == [
        (e.id, e.title, e.profile) for e in data.sheets
    ]
    assert data.sheets[-1].profile == "catalogue"


def test_every_configured_range_names_a_tab_of_healthy_sheets(tmp_path):
    data, _, config = _written_config(tmp_path, 20)
    tabs = {parse_a1(check["range"]).sheet for check in config["profiles"]["stock"]["checks"]}
    for entry in data.healthy():
        assert tabs <= set(data.payloads[entry.id]["tabs"])


def test_large_datasets_list_their_sheets_in_a_csv_next_to_the_config(tmp_path):
    data, path, config = _written_config(tmp_path, 150)
    assert "sheets" not in config and config["sheets_file"] == "sheets.csv"
    with (path.parent / "sheets.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["id"], r["name"], r["profile"], r["tags"]) for r in rows] == [
        (e.id, e.title, e.profile, e.tags[0]) for e in data.sheets
    ]


def test_without_a_fake_telegram_the_config_has_no_telegram_table(tmp_path):
    _, _, config = _written_config(tmp_path, 5)
    assert "telegram" not in config


@pytest.mark.parametrize("n", [12, 150])
def test_the_monitor_loads_the_written_config_with_every_sheet_on_the_stock_profile(tmp_path, n):
    data = ds.generate(n, 7, NOW)
    creds = TokenAuthority(SystemClock()).write_credentials(
        tmp_path / "creds", 1, "http://127.0.0.1:1/token")
    path = ds.write_config(
        data, tmp_path / "monitor.toml", credentials=creds, endpoint="http://127.0.0.1:1",
        telegram_api_base="http://127.0.0.1:2", telegram_chat_id="-1001234567890",
    )
    config = load_config(path, {"TELEGRAM_BOT_TOKEN": "123:abc"})
    assert [s.id for s in config.sheets] == [e.id for e in data.sheets]
    assert {s.profile for s in config.sheets} == {"stock", "catalogue"}
    assert {s.checks for s in config.sheets} == {tuple(ds.stock_profile()), tuple(ds.catalogue_profile())}
    assert config.google.credentials == tuple(p.resolve() for p in creds)


def test_applied_dataset_answers_the_monitor_the_way_the_manifest_says(tmp_path):
    """Through the real sandbox and gspread: one spreadsheet of each kind but slow and hang."""
    now = datetime.now(UTC)  # google-auth signs with the real clock, and data is dated from it
    data = ds.generate(200, 3, now)  # every kind at least once
    checks = ds.stock_profile()
    params = {"valueRenderOption": "UNFORMATTED_VALUE", "dateTimeRenderOption": "SERIAL_NUMBER"}
    with running_sandbox(telegram=False, latency="off") as sandbox:
        ds.apply(data, sandbox.google)
        assert set(sandbox.google.store.ids()) == set(data.payloads)
        (credentials,) = sandbox.write_credentials(tmp_path, 1)
        http = build_gspread_client(credentials, endpoint=sandbox.base_url, timeout=5).http_client

        def read(entry):
            answer = http.values_batch_get(entry.id, list(ranges_of(checks)), params=params)
            return health_of(evaluate_all(checks, answer["valueRanges"], now, UTC))

        def status_of(entry):
            with pytest.raises(gspread.exceptions.APIError) as refused:
                read(entry)
            return refused.value.response.status_code, refused.value.error["message"]

        for kind in ("healthy", "formula_errors", "stale", "negative_stock", "empty_stock",
                     "low_stock", "prices_in_kopecks", "quantities_in_grams", *TABLE_KINDS):
            entry = data.of_kind(kind)[0]
            assert read(entry) == entry.expect, kind
        assert status_of(data.of_kind("missing")[0])[0] == 404
        assert status_of(data.of_kind("access_removed")[0])[0] == 403
        code, message = status_of(data.of_kind("renamed_tab")[0])
        assert (code, message) == (400, "Unable to parse range: Stock!A1:H500")
        flaky, server_error = data.of_kind("flaky")[0], data.of_kind("server_error")[0]
        assert [status_of(flaky)[0], status_of(flaky)[0], read(flaky)] == [503, 503, "ok"]
        assert [status_of(server_error)[0], read(server_error)] == [500, "ok"]
