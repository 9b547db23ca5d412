"""gRPC canonical status codes and the one exception type of this package."""
from __future__ import annotations

import enum
import unicodedata

#: The most of a message str(LarderError) shows, in UTF-8 bytes after escaping.
MAX_SHOWN_BYTES = 4096


class StatusCode(enum.IntEnum):
    """A gRPC canonical status code, with gRPC's names and numbers."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class LarderError(Exception):
    """A failed call: a canonical status code and a message for the user.

    Raised for error replies from the server and for client-side failures
    (DEADLINE_EXCEEDED on a local timeout, UNAVAILABLE when the connection is
    lost). `raw_code` keeps a number this client does not know (then `code` is
    UNKNOWN). `message` is the text as received; str() and repr() show it safe
    for a terminal (see shown_text).
    """

    def __init__(self, code: int, message: str = "") -> None:
        try:
            self.code = StatusCode(code)
        except ValueError:
            self.code = StatusCode.UNKNOWN
        self.raw_code = int(code)
        self.message = message
        name = self.code.name if self.code == code else f"CODE_{code}"
        super().__init__(f"{name}: {shown_text(message)}" if message else name)

    def __reduce__(self) -> tuple[type[LarderError], tuple[int, str]]:  # keep picklable despite the custom __init__
        return (type(self), (self.raw_code, self.message))


def _needs_escape(char: str) -> bool:
    """Control characters (C0, DEL, C1), format characters (bidirectional overrides and
    isolates, and the like; not ZWNJ and ZWJ, which scripts and emoji need), line and paragraph
    separators, unassigned code points and lone surrogates: what the Swift client escapes."""
    value = ord(char)
    if value < 0x20 or 0x7F <= value <= 0x9F:
        return True
    if value < 0x7F:
        return False
    category = unicodedata.category(char)
    if category == "Cf":
        return value not in (0x200C, 0x200D)
    return category in ("Cc", "Zl", "Zp", "Cn", "Cs")


_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    value = ord(char)
    return f"\\x{value:02x}" if value < 0x100 else f"\\u{value:04x}" if value < 0x10000 else f"\\U{value:08x}"


def shown_text(text: str, max_bytes: int = MAX_SHOWN_BYTES) -> str:
    """`text` (a message from the server, say) safe to print: every character that could drive
    a terminal or reorder what follows it (ESC, CR, LF, NUL, U+202E, ...) written as Python
    writes it in a string literal (\\x1b, \\u202e), and cut at `max_bytes` UTF-8 bytes of
    that, with "… (N bytes)" after the cut (N: the length of `text` in UTF-8)."""
    if text.isascii() and text.isprintable() and len(text) <= max_bytes:
        return text
    pieces: list[str] = []
    used = 0
    for char in text:
        piece = _escape(char) if _needs_escape(char) else char
        size = len(piece) if piece.isascii() else len(piece.encode("utf-8", "surrogatepass"))
        if used + size > max_bytes:
            total = len(text.encode("utf-8", "surrogatepass"))
            return "".join(pieces) + f"… ({total} bytes)"
        pieces.append(piece)
        used += size
    return "".join(pieces)
