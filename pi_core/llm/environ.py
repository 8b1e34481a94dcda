"""Environment lookups made on every request (proxy and CA variables, wire options), read live each time.

``os.environ.get`` of an unset name raises and catches a KeyError inside ``os`` (several microseconds); a
request reads a dozen names that are usually unset. On POSIX, ``os.environ`` keeps the process environment
in a dict of encoded names and values (``_data``) that every change made through ``os.environ`` updates
(``putenv`` alone never shows in ``os.environ`` either), so a plain dict lookup answers the same.
"""

from __future__ import annotations

import os

_ENCODED: dict[str, bytes] = {}


def getenv(name: str) -> str | None:
    """``os.environ.get(name)``, without the cost of a miss."""
    environ = os.environ
    data = getattr(environ, "_data", None)
    if os.name != "posix" or type(data) is not dict:  # Windows (upper-cased str keys), or a stand-in mapping
        return environ.get(name)
    key = _ENCODED.get(name)
    if key is None:
        key = _ENCODED[name] = os.fsencode(name)
    value = data.get(key)
    return None if value is None else os.fsdecode(value)


def getenv_all(names: tuple[str, ...]) -> tuple[str | None, ...]:
    """``getenv`` of each name, in order."""
    return tuple(map(getenv, names))
