"""Display names (a seat's, a tournament entrant's): shown to every player and spectator, in
web pages, terminals and logs, so they hold printable text only.

Refused: control characters (Unicode category Cc: NUL, escapes, tabs, new lines), format
characters (Cf: bidi overrides and isolates that reorder what follows them, zero-width spaces,
byte-order marks), line and paragraph separators (Zl, Zp) and lone surrogates (Cs, which have
no UTF-8). The two joiners U+200C and U+200D stay: Persian and Indic spellings and emoji
sequences need them, and they reorder nothing.
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 64
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
JOINERS = frozenset({"\u200c", "\u200d"})


def name_error(name: object) -> str | None:
    """Why ``name`` cannot be a display name (a message for the field's errors), or None."""
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME:
        return f"a string of 1 to {MAX_NAME} characters"
    return characters_error(name)


def characters_error(name: str) -> str | None:
    """Why the characters of ``name`` cannot be in a display name, or None (its length
    aside)."""
    for ch in name:
        if ch not in JOINERS and unicodedata.category(ch) in REFUSED_CATEGORIES:
            return f"no control or format characters (U+{ord(ch):04X} is one)"
    return None
