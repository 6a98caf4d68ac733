"""Line continuations inside a word, as bash reads them.

bash removes each backslash-newline outside single quotes before it splits words, so
``--x\\<newline>1`` is the one word ``--x1`` and ``py\\<newline>thon`` runs ``python``. The
tree-sitter grammar reads the continuation as a blank there: two words, and ``--x 1`` would read
the same. ``joined`` removes such a continuation (a non-blank before it, a non-blank after it,
outside quotes and comments) and writes it again at the end of that line, so that every later
line keeps its number; a script with a here-document (``<<``) is left as written, since a quoted
body keeps its backslashes.
"""

from __future__ import annotations

import re

_BLANKS = " \t"
_CONTINUATION = "\\\n"
_JOIN = re.compile(r"[^ \t\n]\\\n[^ \t\n]")  # a continuation with no blank either side


# the pieces of a script outside double quotes, and inside them (one match at a time)
_OUTSIDE = re.compile(r"""'[^']*'?|\\\n|\\.|"|\n|\#[^\n]*|[^'\\"\n#]+""", re.S)
_INSIDE = re.compile(r"""\\\n|\\.|"|[^\\"]+""", re.S)
_WORD_START = frozenset(" \t\n;&|()")


def joined(text: str) -> str:
    """``text`` with each continuation that joins two parts of a word removed (see above)."""
    if _JOIN.search(text) is None or "<<" in text:
        return text  # the usual script: every continuation has a blank before or after it
    return _Joiner(text).run()


class _Joiner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[str] = []
        self.in_double = False
        self.pending = 0  # continuations removed on this line, written again where it ends

    def run(self) -> str:
        at = 0
        while at < len(self.text):
            at = self.take(at)
        self.out.append(self.restored())
        return "".join(self.out)

    def take(self, at: int) -> int:
        """Copy (or drop) the piece at ``at``; where the next one starts."""
        token = self.token(at)
        if token == _CONTINUATION and not self.in_double and _joins(self.text, at + 2, self.out):
            self.pending += 1
            return at + 2
        if token in ("\n", _CONTINUATION):
            self.out.append(self.restored())
            self.pending = 0
        self.in_double = self.in_double != (token == '"')
        self.out.append(token)
        return at + len(token)

    def restored(self) -> str:
        """The continuations removed on this line, written again at its end, each after a blank
        (the word before already ended there; the grammar misreads `$X\\` NEWLINE `\\` NEWLINE);
        inside double quotes without it (bash drops them there, a blank would stay)."""
        return (("" if self.in_double else " ") + _CONTINUATION) * self.pending

    def token(self, at: int) -> str:
        found = (_INSIDE if self.in_double else _OUTSIDE).match(self.text, at)
        token = found.group() if found is not None else self.text[at]
        if token[0] == "#" and self.out and self.out[-1][-1:] not in _WORD_START:
            return "#"  # a `#` inside a word (`a#b`) starts no comment
        return token


def _joins(text: str, after: int, out: list[str]) -> bool:
    """Does the continuation ending at ``after`` join a part of a word to the next (no blank
    either side)?"""
    before = out[-1][-1:] if out else ""
    following = text[after : after + 1]
    return before not in ("", *_BLANKS, "\n") and following not in ("", *_BLANKS, "\n")
