"""Fixtures shared by several test modules.

``telegram_fixtures``: ``server`` (the module's own ``fake`` Telegram served on 127.0.0.1) and ``http``
(an httpx client), for test_telegram and test_watchdog. ``sheets_api_fixtures``: ``google_clock``, ``sandbox``
(a seeded fake Google API) and ``api`` (a requests client for it), for the tests of the fake Sheets and
Drive endpoints. Registered here, before any test module imports the helpers, so pytest can still
rewrite their asserts.
"""

pytest_plugins = ("telegram_fixtures", "sheets_api_fixtures")
