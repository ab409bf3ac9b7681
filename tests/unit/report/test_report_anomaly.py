"""The status page draws an anomaly finding's recent values with the band its baseline allowed."""

from __future__ import annotations

from datetime import UTC, datetime

from cli_fixtures import sheet_id, write_config

from monitor.checks import Buckets, bucket_number
from monitor.config import load_config
from monitor.engine.health import FAIL, Finding, record_verdict
from monitor.engine.history import SheetHistory
from monitor.report.page import render_page
from monitor.report.page_data import build_report
from monitor.state import State

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
SHOP = sheet_id(7)
NAME = "anomaly row_count Orders!A2:A"


def test_an_anomaly_finding_is_drawn_with_its_band(tmp_path):
    extra = ('\n[profiles.orders]\n'
             'checks = [{ kind = "anomaly", range = "Orders!A2:A", seasonality = "none", '
             'min_history = "7d" }]\n'
             f'\n[[sheets]]\nid = "{SHOP}"\nname = "Shop"\nprofile = "orders"\n')
    config = load_config(write_config(tmp_path, extra=extra), {})
    today = bucket_number(NOW, UTC, "day")
    state = State()
    state.history[SHOP] = SheetHistory(NOW, buckets={NAME: Buckets(today - 20, (150.0,) * 20 + (40.0,),
                                                                   (today,))})
    finding = Finding(NAME, "anomaly", "fail", "40 rows in Orders!A2:A, usually 150 (14 days): 73 % below")
    state.health[SHOP], _ = record_verdict(None, FAIL, NOW, (finding,))
    data = build_report(config, state, NOW)
    [problem] = [listed for listed in data["problems"]["listed"] if listed["id"] == SHOP]
    [series] = problem["series"]
    assert series["check"] == NAME and len(series["points"]) == 21
    last = series["points"][-1]
    assert last["value"] == 40 and last["low"] < 150 < last["high"] and last["low"] > 40
    assert series["points"][0]["low"] is None  # no baseline before there was a history
    page = render_page(data)
    assert f"{NAME}: the value and its band</figcaption>" in page
    assert page.count('class="band"') == 2  # the band's two edges
