"""Here-documents found as bash finds them, for the lines the bash grammar misreads.

bash reads a command line to its end, then the body of each here-document that line opened, in
order: ``cat <<A <<B`` takes two bodies, ``python t.py <<A; cat <<B`` one each, ``{ cat <<EOF; }
> out`` one, and the delimiter is the word after ``<<`` with its quotes removed (``E"O"F`` is
``EOF``, quoted, so the body is taken as written). The tree-sitter grammar reads one here-document
per line, ending at the line's end: it reads the second body as commands, or the whole statement
as an error (whose body the walk skipped: an edit there read as "no differences").

``scan`` finds the here-documents of a script by bash's rules (quotes, comments, arithmetic and
``<<<`` skipped); where the grammar's reading of any of them differs (``misread``), ``rewritten``
gives the script with each ``<<DELIM`` written as ``<<<`` and a placeholder word, and each body
as blank lines (every later line keeps its number): the walk reads the placeholder as the
here-document it stands for (``shellwalk.Walk.redirect``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

PLACEHOLDER = "__sweepgen_heredoc_{}__"
_PLACEHOLDER = re.compile(r"<<<__sweepgen_heredoc_(\d+)__")
_META = frozenset(" \t\n;&|()<>")
_WORD_START = frozenset(" \t\n;&|()<>{}")
_INTERESTING = re.compile(r"[\\'\"`$#(<]")
_INTERESTING_NL = re.compile(r"[\\'\"`$#(<\n]")  # a newline ends a line that opened bodies


@dataclass(frozen=True)
class Heredoc:
    start: int  # where `<<` is
    word_end: int  # where the delimiter word ends
    delimiter: str  # quotes removed
    quoted: bool  # a quote or backslash in the word: the body is taken as written
    strip_tabs: bool  # `<<-`
    body: str  # as bash reads it: the lines up to the delimiter's, each with its newline
    body_start: int
    end: int  # after the delimiter's line
    end_line_start: int  # where the delimiter's line starts (``end`` where there is none)
    spelling: str  # `<<-'EOF'`, as written


def scan(text: str) -> list[Heredoc]:
    """Every here-document of ``text`` outside quotes and comments, in order."""
    return _Scanner(text).run()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[Heredoc] = []
        self.pending: list[tuple[int, int, str, bool, bool]] = []

    def run(self) -> list[Heredoc]:
        at = 0
        while at < len(self.text):
            # only these characters start what the scan reads: the text between is skipped at once
            found = (_INTERESTING_NL if self.pending else _INTERESTING).search(self.text, at)
            if found is None:
                break
            at = self.step(found.start())
        return self.found

    def step(self, at: int) -> int:
        skipped = self.skipped(at)
        if skipped is not None:
            return skipped
        if self.text.startswith("<<<", at):
            return at + 3
        if self.text.startswith("<<", at):
            return self.operator(at)
        if self.text[at] == "\n" and self.pending:
            return self.bodies(at + 1)
        return at + 1

    def skipped(self, at: int) -> int | None:
        """Past what bash reads no ``<<`` in: an escape, quotes, a comment, an arithmetic ``((``."""
        text, char = self.text, self.text[at]
        if char == "\\":
            return at + 2
        if char in "'`":
            return _after(text, char, at + 1)
        if char == '"' or text.startswith("$'", at):
            return _after_escaped(text, char if char == '"' else "'", at + 1 + (char == "$"))
        return self.comment_or_arithmetic(at)

    def comment_or_arithmetic(self, at: int) -> int | None:
        text = self.text
        starts_word = at == 0 or text[at - 1] in _WORD_START
        if text[at] == "#" and starts_word:
            end = text.find("\n", at)
            return len(text) if end < 0 else end
        if text.startswith("((", at) and (starts_word or text[at - 1] == "$"):
            return _after_arithmetic(text, at + 2)
        return None

    def operator(self, at: int) -> int:
        """``<<`` or ``<<-`` and its delimiter word; its body is read where the line ends."""
        text = self.text
        begin = at + 2
        strip = text.startswith("-", begin)
        begin += strip
        while begin < len(text) and text[begin] in " \t":
            begin += 1
        end, delimiter, quoted = _word(text, begin)
        if end == begin:
            return begin  # no word: bash refuses it, the grammar's reading stands
        self.pending.append((at, end, delimiter, quoted, strip))
        return end

    def bodies(self, at: int) -> int:
        """The bodies of the here-documents the line just ended opened, one after another."""
        text = self.text
        for start, word_end, delimiter, quoted, strip in self.pending:
            body, end, end_line = _body(text, at, delimiter, strip)
            self.found.append(
                Heredoc(
                    start, word_end, delimiter, quoted, strip, body, at, end, end_line, text[start:word_end]
                )
            )
            at = end
        self.pending = []
        return at


def _body(text: str, at: int, delimiter: str, strip: bool) -> tuple[str, int, int]:
    """A body starting at ``at``: its text (tabs taken off each line by ``<<-``), where it ends
    (after the delimiter's line), and where that line starts (the end of the text without one)."""
    lines: list[str] = []
    while at < len(text):
        stop = text.find("\n", at)
        line_end = len(text) if stop < 0 else stop + 1
        line = text[at:line_end].rstrip("\n")
        line = line.lstrip("\t") if strip else line
        if line == delimiter:
            return "".join(lines), line_end, at
        lines.append(line + "\n" if stop >= 0 else line)
        at = line_end
    return "".join(lines), at, len(text)


def _word(text: str, at: int) -> tuple[int, str, bool]:
    """The delimiter word at ``at``: where it ends, its quotes removed, whether it had any."""
    out: list[str] = []
    quoted = False
    while at < len(text) and text[at] not in _META:
        char = text[at]
        if char in "'\"":
            end = text.find(char, at + 1)
            end = len(text) if end < 0 else end
            out.append(text[at + 1 : end])
            quoted, at = True, end + 1
        elif char == "\\":
            out.append(text[at + 1 : at + 2])
            quoted, at = True, at + 2
        else:
            out.append(char)
            at += 1
    return at, "".join(out), quoted


def _after(text: str, close: str, at: int) -> int:
    end = text.find(close, at)
    return len(text) if end < 0 else end + 1


def _after_escaped(text: str, close: str, at: int) -> int:
    """Past a double-quoted or ``$'...'`` string, whose backslash escapes the next character."""
    found = _ESCAPED[close].match(text, at)
    return len(text) if found is None else found.end()


_ESCAPED = {close: re.compile(rf"(?:[^{close}\\]|\\.)*{close}", re.S) for close in "\"'"}


def _after_arithmetic(text: str, at: int) -> int:
    depth = 2
    while at < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[at], 0)
        at += 1
    return at


def misread(root: Any, raw: str, found: list[Heredoc]) -> bool:
    """Does the grammar read any of ``found`` (scanned in ``raw``, the script's bytes one
    character each, so that offsets are the grammar's) otherwise than bash: no here-document
    starting there, one whose delimiter line or body end is elsewhere, an error inside it, or the
    rest of the line read into it?"""
    return any(
        _misread_one(_redirect_at(root, heredoc.start), raw, heredoc)
        for heredoc in found
        if not _quoted_there(root, heredoc.start)
    )


def _quoted_there(root: Any, at: int) -> bool:
    """Does the grammar read byte ``at`` inside a string, comment or here-document body? There the
    scan, not the grammar, is taken to have lost track of quoting (a `"` in a body inside
    `"$(cat <<EOF ...)"`): its `<<` is no here-document, and the script is read as before."""
    node = root.descendant_for_byte_range(at, at + 2)
    while node is not None:
        if node.type in _QUOTING:
            return True
        node = node.parent
    return False


_QUOTING = frozenset(
    {"string", "raw_string", "ansi_c_string", "translated_string", "comment", "heredoc_body"}
)


def _misread_one(node: Any, raw: str, heredoc: Heredoc) -> bool:
    if node is None or node.has_error or _end_of(node, raw) != heredoc.end_line_start:
        return True
    return _body_cut(node, raw, heredoc) or _holds_more(node)


def _body_cut(node: Any, raw: str, heredoc: Heredoc) -> bool:
    """Does the grammar end the body elsewhere than before the delimiter's line (``<<E"O"F``:
    before its last newline; under ``<<-`` it may end after the line's tabs)?"""
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    if body is None or not heredoc.body:
        return False
    tabs = raw[heredoc.end_line_start : body.end_byte] if heredoc.strip_tabs else None
    return body.end_byte != heredoc.end_line_start and not (tabs and tabs.strip("\t") == "")


def decoded(heredoc: Heredoc) -> Heredoc:
    """``heredoc`` scanned in the script's bytes (one character each), with its texts as the
    script's text (UTF-8)."""
    return replace(
        heredoc,
        delimiter=_utf8(heredoc.delimiter),
        body=_utf8(heredoc.body),
        spelling=_utf8(heredoc.spelling),
    )


def _utf8(raw: str) -> str:
    return raw.encode("latin-1").decode("utf-8", "surrogateescape")


def _holds_more(node: Any) -> bool:
    """Does the grammar put the rest of the line inside the here-document's node (``cat <<EOF |
    python t.py``, ``<<EOF --x 1``): words, a pipeline or a list, which it then reads as text?"""
    kept = ("heredoc_start", "heredoc_body", "heredoc_end", "file_redirect")
    return any(
        (child.is_named and child.type not in kept)
        or (child.type == "file_redirect" and _targets(child) != 1)
        for child in node.children
    )


def _targets(redirect: Any) -> int:
    """How many words the grammar gives a file redirection as its target (one, to bash)."""
    return sum(redirect.field_name_for_child(i) == "destination" for i in range(redirect.child_count))


def _end_of(node: Any, raw: str) -> int | None:
    """Where the grammar puts the line of a here-document's delimiter."""
    end = next((c for c in node.children if c.type == "heredoc_end"), None)
    return None if end is None else raw.rfind("\n", 0, end.start_byte) + 1


def _redirect_at(root: Any, at: int) -> Any:
    """The grammar's here-document redirection starting at byte ``at`` (its ``<<``), if any: found
    from the leaf there upwards, never by walking the whole tree."""
    node = root.descendant_for_byte_range(at, at + 2)
    while node is not None and node.start_byte == at and node.type != "heredoc_redirect":
        node = node.parent
    return node if node is not None and node.type == "heredoc_redirect" and node.start_byte == at else None


def rewritten(text: str, found: list[Heredoc], first: int) -> str:
    """``text`` with each here-document written as ``<<<`` and its placeholder (numbered from
    ``first``), its body and delimiter line as blank lines."""
    edits: list[tuple[int, int, str]] = []
    for number, heredoc in enumerate(found, first):
        edits.append((heredoc.start, heredoc.word_end, "<<<" + PLACEHOLDER.format(number)))
        edits.append(
            (heredoc.body_start, heredoc.end, "\n" * text.count("\n", heredoc.body_start, heredoc.end))
        )
    out: list[str] = []
    at = 0
    for begin, end, replacement in sorted(edits):
        out += [text[at:begin], replacement]
        at = end
    return "".join(out) + text[at:]


def restored(source: str, table: dict[int, Heredoc]) -> str:
    """``source`` (a statement's text) with each placeholder written back as the here-document it
    stands for: a statement kept as source shows its bodies, so an edit there is a change."""
    if "<<<__sweepgen_heredoc_" not in source:
        return source
    return _PLACEHOLDER.sub(lambda m: _shown(table.get(int(m.group(1)))) or m.group(), source)


def _shown(heredoc: Heredoc | None) -> str:
    """A here-document as source: its operator and delimiter as written, then its body quoted,
    so that layout-free source (``shellwalk.normalise``) keeps every blank and ``#`` of it."""
    if heredoc is None:
        return ""
    return f"{heredoc.spelling} {shlex.quote(heredoc.body)}"


def placeholder_number(word: str) -> int | None:
    found = re.fullmatch(r"__sweepgen_heredoc_(\d+)__", word)
    return int(found.group(1)) if found else None
