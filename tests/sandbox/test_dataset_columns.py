"""Tables broken in people's hands, served by the sandbox and judged through gspread by header."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.checks import evaluate_all, health_of, ranges_of
from monitor.google.client import build_gspread_client
from sheet_sandbox import dataset as ds
from sheet_sandbox.server import running_sandbox

TABLE_KINDS = ("columns_moved", "header_renamed", "duplicate_keys", "missing_values", "invalid_values")
PARAMS = {"valueRenderOption": "UNFORMATTED_VALUE", "dateTimeRenderOption": "SERIAL_NUMBER"}


def test_each_table_breakage_gets_the_verdict_and_the_finding_its_manifest_says(tmp_path):
    now = datetime.now(UTC)  # google-auth signs with the real clock, and data is dated from it
    data = ds.generate(200, 4, now)  # every kind at least once
    checks = ds.stock_profile()
    with running_sandbox(telegram=False, latency="off") as sandbox:
        ds.apply(data, sandbox.google)
        (credentials,) = sandbox.write_credentials(tmp_path, 1)
        http = build_gspread_client(credentials, endpoint=sandbox.base_url, timeout=5).http_client

        def findings(entry):
            answer = http.values_batch_get(entry.id, list(ranges_of(checks)), params=PARAMS)
            results = evaluate_all(checks, answer["valueRanges"], now, UTC)
            return health_of(results), {r.check_name: r.message for r in results if r.is_finding}

        assert findings(data.healthy()[0]) == ("ok", {})
        seen = {}
        for kind in TABLE_KINDS:
            entry = data.of_kind(kind)[0]
            health, messages = findings(entry)
            assert health == entry.expect, (entry, messages)
            seen[kind] = messages
    detail = {kind: data.of_kind(kind)[0].note.rpartition("(")[2].rstrip(")") for kind in TABLE_KINDS}
    assert seen["columns_moved"] == {}
    assert seen["header_renamed"] == {
        "headers Stock!A1:H500": "1 column missing from the header row (Stock!1:1): Supplier; found: SKU, "
                                 "Product, Vendor, Price, Updated, Quantity, Reorder level, Value",
        "missing Supplier Stock!A1:H500": "column 'Supplier' not found in the header row (Stock!1:1); "
                                          "found: SKU, Product, Vendor, Price, Updated, Quantity, "
                                          "Reorder level, Value"}
    again, first = detail["duplicate_keys"].split("=")
    assert seen["duplicate_keys"]["duplicates SKU Stock!A1:H500"].startswith("SKU repeated in 1 of ")
    assert f"Stock!{again} = {first} (> 0)" in seen["duplicate_keys"]["duplicates SKU Stock!A1:H500"]
    blanks = detail["missing_values"].split(", ")
    missing = seen["missing_values"]["missing Supplier Stock!A1:H500"]
    assert missing.startswith(f"Supplier missing in {len(blanks)} of ") and missing.endswith("(> 0)")
    cell = detail["invalid_values"].split("=")[0]
    assert f"Stock!{cell} " in seen["invalid_values"]["invalid Price Stock!A1:H500"]
    assert "(not a number)" in seen["invalid_values"]["invalid Price Stock!A1:H500"]
