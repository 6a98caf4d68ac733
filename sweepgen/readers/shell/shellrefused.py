"""What the bash grammar reads but bash itself refuses as a syntax error.

tree-sitter's bash grammar is more lenient than bash: it reads `python t.py ;;` (a case clause's
terminator outside a `case`), `if X; then fi` (an empty body), `done` on its own line (a reserved
word where a command starts) without an error node. bash stops at such a line: a script runs the
commands before it and none from it on. The reader cannot see that in the tree, so each such place
is found here, cheaply (a regular expression over the source, each hit confirmed in the tree), and
the first one is shown as ``@syntax_error``: such a script is never "no differences" against one
bash runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_TERMINATOR = re.compile(rb";;&|;;|;&")
# a reserved word that closes or continues a compound command, where a command's name stands
# (not `}`: the grammar reads `! { a; }` with `{` and `}` as commands, where bash reads a group)
_RESERVED = re.compile(rb"(?<![^\s;&|(])(?:done|fi|then|else|elif|esac|do|in|\]\])(?=[\s;&|)]|$)")
# an opening keyword followed, through blanks, `;` and comments only, by its closing one
_EMPTY = re.compile(
    rb"(?<![\w$])(?:then|do|else|\{)(?=[\s;])(?:[\s;]|#[^\n]*)*(?:fi|done|elif|else|\})(?![\w-])"
)
_BODIES = {"then": ("if_statement", "elif_clause"), "do": ("do_group",), "else": ("else_clause",)}
_BODIES["{"] = ("compound_statement",)
_CASE_OR_ERROR = ("case_item", "ERROR")  # an error node is kept as source already
# a group's `{` glued to what follows (`{1`), or its `}` glued to a word (`}declare`, `}#c`): bash
# reads a word there, not the reserved word, and the group never closes
_GLUED_BRACE = re.compile(rb"(?<!\$)\{(?=\S)|\}(?=[^\s;&|<>)])")


def refused(root: Any, source: bytes) -> tuple[int, str] | None:
    """(0-based row, what) of the first place bash refuses, or None."""
    found = [
        hit
        for check in (_misplaced_terminator, _reserved_command, _empty_body, _glued_brace)
        if (hit := check(root, source))
    ]
    return min(found, default=None)


def _misplaced_terminator(root: Any, source: bytes) -> tuple[int, str] | None:
    return _token_where(
        root, source, _TERMINATOR, lambda parent: parent not in _CASE_OR_ERROR, "outside a case clause"
    )


def _token_where(
    root: Any, source: bytes, tokens: re.Pattern[bytes], refused: Callable[[str | None], bool], what: str
) -> tuple[int, str] | None:
    """The first token ``tokens`` finds that the tree holds as that token, under a parent of a type
    ``refused`` accepts: (its row, the token and ``what``)."""
    for match in tokens.finditer(source):
        node = root.descendant_for_byte_range(match.start(), match.end())
        if node is not None and node.type == match.group().decode() and refused(_parent_type(node)):
            return (node.start_point[0], f"`{node.type}` {what}")
    return None


def _reserved_command(root: Any, source: bytes) -> tuple[int, str] | None:
    for match in _RESERVED.finditer(source):
        node = root.descendant_for_byte_range(match.start(), match.end())
        if _starts_a_command(node):
            return (node.start_point[0], f"`{match.group().decode()}` where a command starts")
    return None


def _starts_a_command(node: Any) -> bool:
    """A word that is a command's name with nothing before it (after `X=1` it is a plain name)."""
    if node is None or node.type != "word" or _parent_type(node) != "command_name":
        return False
    command = node.parent.parent
    return command is not None and command.children[0] == node.parent


def _empty_body(root: Any, source: bytes) -> tuple[int, str] | None:
    for match in _EMPTY.finditer(source):
        opening = match.group().split()[0].split(b";")[0].decode()
        node = root.descendant_for_byte_range(match.start(), match.start() + len(opening))
        if node is not None and node.type == opening and _parent_type(node) in _BODIES[opening]:
            return (node.start_point[0], f"an empty body after `{opening}`")
    return None


def _glued_brace(root: Any, source: bytes) -> tuple[int, str] | None:
    return _token_where(
        root,
        source,
        _GLUED_BRACE,
        lambda parent: parent == "compound_statement",
        "glued to the word beside it",
    )


def _parent_type(node: Any) -> str | None:
    return node.parent.type if node.parent is not None else None
