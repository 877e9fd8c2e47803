"""Bundle and subject text shown on a terminal: never a control sequence, never a forged line."""

from __future__ import annotations


def terminal_text(value: object) -> str:
    """A bundle value safe to print: every non-printable character as a visible escape (no terminal control)."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in text)
