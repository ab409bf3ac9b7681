"""gspread imported without its browser login: imported before gspread by the modules that use it.

``import gspread`` imports google-auth-oauthlib (and through it requests-oauthlib, oauthlib, wsgiref
and http.server: ~95 modules) for ``gspread.oauth()``, a person's login in a browser. The monitor
reads with service accounts only, so a run spent ~0.2 s of its start-up and ~2.3 MB of memory on
code it never calls. For the length of gspread's own import, ``google_auth_oauthlib.flow`` is a
stand-in whose ``InstalledAppFlow`` loads the real class when it is used; then the stand-in leaves
``sys.modules``, so a later ``import google_auth_oauthlib`` anywhere gets the real package. A gspread
that asks the package for anything more is imported with the real one.
"""

from __future__ import annotations

import sys
import types
from typing import Any

_PACKAGE = "google_auth_oauthlib"
_FLOW = _PACKAGE + ".flow"


class InstalledAppFlow:
    """What gspread.auth holds as google-auth-oauthlib's ``InstalledAppFlow``: the real one, loaded
    when ``gspread.oauth()`` first asks for it (the only use gspread makes of it)."""

    @classmethod
    def from_client_config(cls, *args: Any, **kwargs: Any) -> Any:
        from google_auth_oauthlib.flow import InstalledAppFlow as real

        return real.from_client_config(*args, **kwargs)


def import_gspread() -> None:
    """Import gspread with the stand-in (nothing when gspread, or the real flow, is loaded already)."""
    if "gspread" in sys.modules or _FLOW in sys.modules:
        return
    package = types.ModuleType(_PACKAGE)
    package.__path__ = []  # a package, so that ``google_auth_oauthlib.flow`` resolves
    flow = types.ModuleType(_FLOW)
    flow.InstalledAppFlow = InstalledAppFlow
    package.flow = flow
    stand_ins = {_PACKAGE: package, _FLOW: flow}
    sys.modules.update(stand_ins)
    try:
        import gspread  # noqa: F401
    except ImportError:  # a gspread that asks for more than the flow class: import it as it is
        for name in [name for name in sys.modules if name == "gspread" or name.startswith("gspread.")]:
            del sys.modules[name]
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
    import gspread  # noqa: F401, F811  (the stand-in's import, or the real one after an ImportError)


import_gspread()
