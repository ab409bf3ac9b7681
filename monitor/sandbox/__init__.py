"""Local stand-ins for Google's Sheets v4 / Drive v3 APIs and Telegram's Bot API, over real HTTP.

The monitor never knows these are here: it reaches them through its ordinary clients with only the
endpoint swapped. This package imports nothing of the monitor but the pure helpers `monitor.clock`
and `monitor.a1`.
"""
