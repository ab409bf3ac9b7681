"""Fixtures shared by several test modules.

``telegram_fixtures``: ``server`` (the module's own ``fake`` Telegram served on 127.0.0.1) and ``http``
(an httpx client), for test_telegram and test_watchdog. Registered here, before any test module
imports the helpers, so pytest can still rewrite its asserts.
"""

pytest_plugins = ("telegram_fixtures",)
