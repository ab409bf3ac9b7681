"""sheet-monitor: watches Google Sheets and tells the team in Telegram."""

__version__ = "0.1.0"
