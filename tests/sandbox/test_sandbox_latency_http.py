"""Latency over real HTTP: answers really wait, and the control API switches the model at runtime."""

from __future__ import annotations

import random
import time

import pytest
import requests

from sheet_sandbox.latency import GOOGLE_MODEL

SPREADSHEET = {"title": "Stock", "tabs": {"Sheet1": [["item", "qty"], ["apple", 3]]}}
EMAIL = "monitor-1@sheet-monitor-sandbox.iam.gserviceaccount.com"


@pytest.fixture
def url(control_sandbox):
    control_sandbox.google.reset()
    control_sandbox.google.latency.configure(model="off", scale=1.0, seed=0)
    control_sandbox.google.store.put_control("s1", SPREADSHEET)
    return control_sandbox.base_url


@pytest.fixture
def token(control_sandbox):
    return control_sandbox.google.auth.mint_token(EMAIL)


def read(url: str, token: str) -> requests.Response:
    return requests.get(f"{url}/v4/spreadsheets/s1/values/Sheet1!A1:B2", timeout=5,
                        headers={"Authorization": f"Bearer {token}"})


def put_latency(url: str, body) -> requests.Response:
    return requests.put(f"{url}/_sandbox/latency", json=body, timeout=5)


def test_a_small_scale_really_holds_each_answer_for_its_draw(url, token):
    assert put_latency(url, {"model": "google", "scale": 0.25, "seed": 3}).status_code == 200
    started = time.monotonic()
    answer = read(url, token)
    elapsed = time.monotonic() - started
    drawn = 0.25 * GOOGLE_MODEL.draw(random.Random(3), len(answer.content))
    assert answer.status_code == 200
    assert 0.05 < drawn < 0.5  # a fraction of a second, as intended for a test
    assert elapsed >= drawn
    stats = requests.get(f"{url}/_sandbox/stats", timeout=5).json()["latency"]
    assert stats["delayed"] == 1 and stats["total_seconds"] == pytest.approx(drawn, abs=1e-5)


def test_with_latency_off_an_answer_comes_at_once(url, token):
    started = time.monotonic()
    assert read(url, token).status_code == 200
    assert time.monotonic() - started < 0.1
    assert requests.get(f"{url}/_sandbox/latency", timeout=5).json()["delayed"] == 0


def test_the_latency_endpoint_shows_and_changes_the_model(url, token):
    shown = requests.get(f"{url}/_sandbox/latency", timeout=5).json()
    assert shown == {"model": "off", "scale": 1.0, "seed": 0, "active": False, "delayed": 0,
                     "total_seconds": 0.0, "mean_seconds": 0.0}
    changed = put_latency(url, {"model": "google", "scale": 0.01, "seed": 5})
    assert changed.status_code == 200
    assert {k: changed.json()[k] for k in ("model", "scale", "seed", "active")} == {
        "model": "google", "scale": 0.01, "seed": 5, "active": True}
    read(url, token)
    read(url, token)
    after = requests.get(f"{url}/_sandbox/latency", timeout=5).json()
    assert after["delayed"] == 2 and after["mean_seconds"] == pytest.approx(after["total_seconds"] / 2,
                                                                           abs=1e-5)
    assert put_latency(url, {"scale": 0}).json()["active"] is False


@pytest.mark.parametrize(("body", "message"), [
    ({"model": "fast"}, 'latency "model" must be one of google, off'),
    ({"scale": -1}, 'latency "scale" must be from 0 to 100'),
    ({"scale": "0.1"}, 'latency "scale" must be a number'),
    ({"seed": 2.5}, 'latency "seed" must be an integer'),
    ({"speed": 1}, "unknown latency key 'speed'; allowed: model, scale, seed"),
    ({"scale": None}, "must not be null"),
    ({}, "give at least one of model, scale, seed"),
    ([0.1], "latency settings must be a JSON object"),
])
def test_bad_latency_settings_get_a_google_shaped_400_and_change_nothing(url, body, message):
    answer = put_latency(url, body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT" and message in error["message"]
    assert requests.get(f"{url}/_sandbox/latency", timeout=5).json()["model"] == "off"


def test_malformed_latency_json_is_a_google_400(url):
    answer = requests.put(f"{url}/_sandbox/latency", data=b"{", timeout=5)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"].startswith("Invalid JSON payload received.")


def test_the_control_api_itself_is_never_delayed(url):
    put_latency(url, {"model": "google", "scale": 100})  # Google's draws x100: tens of seconds
    started = time.monotonic()
    for _ in range(3):
        assert requests.get(f"{url}/_sandbox/stats", timeout=5).status_code == 200
    assert time.monotonic() - started < 0.5
    assert requests.get(f"{url}/_sandbox/latency", timeout=5).json()["delayed"] == 0
