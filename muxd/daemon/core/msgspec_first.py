"""msgspec, imported for the daemon before any other module imports it, without typing_extensions.

Where typing_extensions is installed, msgspec imports it at its own import to read that module's
spellings of typing's names (get_type_hints, Required, NotRequired): ~2-3 ms of a cold start's
first reply spent on a 3,000-line module. The daemon's messages are Structs typed with typing's
own names, which msgspec reads as well without it. Hidden for msgspec's import only: whatever
imports typing_extensions later gets it. A process that has either module already (a test, a
client) is left as it is.
"""

from __future__ import annotations

import sys

if "msgspec" not in sys.modules and "typing_extensions" not in sys.modules:
    sys.modules["typing_extensions"] = None  # type: ignore[assignment] - `import` raises ImportError
    try:
        import msgspec  # noqa: F401
    except ImportError:  # a msgspec that needs it after all: loaded as anywhere else, below
        for name in [name for name in sys.modules if name == "msgspec" or name.startswith("msgspec.")]:
            del sys.modules[name]
    finally:
        del sys.modules["typing_extensions"]
    import msgspec  # noqa: F401,F811 - a no-op when the import above went through
