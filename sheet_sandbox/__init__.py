"""Local stand-ins for Google's Sheets v4 / Drive v3 APIs and Telegram's Bot API, over real HTTP.

The monitor never knows these are here: it reaches them through its ordinary clients with only the
endpoint swapped. This package imports nothing of the monitor but the pure helpers `monitor.core.clock`
and `monitor.core.a1`.
"""

__all__ = ["running_sandbox"]


def __getattr__(name: str):
    # Lazy, so importing one piece (say, the fake Telegram) does not load the whole Google emulator.
    if name == "running_sandbox":
        from .server import running_sandbox

        return running_sandbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
