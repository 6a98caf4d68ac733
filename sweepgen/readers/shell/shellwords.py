"""Bash word expansion, as far as it can be known without running anything.

A word is expanded against the variables a script has bound so far: ``$VAR``, ``${VAR}`` and every
parameter expansion form (``sweepgen.readers.shell.shellparams``), ``${ARR[@]}`` arrays, quotes,
backslashes and integer ``$(( ))`` arithmetic over known values. What depends on the running system
(``$(cmd)``, ``$((x+1))`` with ``x`` unknown, ``$HOME``, ``$1``) leaves the word *unknown*: it keeps
the source text of that part, with the inputs the script knows substituted, so the reader can keep
it as a not-evaluated node rather than guess.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from sweepgen.readers.shell.shellparams import expand_parameter
from sweepgen.readers.shell.shellvalues import (
    UNKNOWN,
    Partial,
    Unknown,
    Value,
    Vars,
    blank_split,
    joined,
    partial,
)

__all__ = ["UNKNOWN", "Field", "Partial", "Unknown", "Value", "Vars", "joined", "partial"]


@dataclass
class Field:
    """One word after expansion; ``known`` is False when some part of it kept its source text."""

    text: str
    known: bool = True
    line: int = 0


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")


def lookup(
    expr: str, variables: Vars, quoted: bool, kept: Callable[[str], str] | None = None
) -> tuple[Value | None, bool]:
    """The value of ``${expr}``: (value, known). An array read whole comes back as a list; what is
    not known comes back as ``Partial`` text carrying its inputs (``sweepgen.readers.shell.shellparams``).
    ``kept``: how a ``$(...)`` in an operand (``${X:-$(cmd $N)}``) left as source is written."""
    bound = variables.get(expr)
    if type(bound) is str:  # `$NAME` of a known word, the usual case: no parameter machinery
        return bound, True
    return expand_parameter(
        expr,
        variables,
        quoted,
        lambda text: expand_quoted(text, variables, kept=kept),
        lambda text: arithmetic(text, variables),
    )


_LITERAL_SPECIAL = re.compile(r"([\\$`*?~\"])")


def escape_literal(text: str) -> str:
    """Literal text as it is written beside source the reader kept (`'$A'$B` is ``\\$A$B``, never
    ``$A$B``): in a partly known word a literal ``$``, backquote, backslash, ``~`` or pattern
    character is escaped, so that it never reads the same as an expansion left as source; so is a
    literal ``"``, so that it never reads as the quotes kept around a quoted expansion (``quoted``)."""
    return _LITERAL_SPECIAL.sub(r"\\\1", text)


def quoted(text: str) -> str:
    """A double-quoted word not known, as kept: in its quotes, since unquoted bash would split it at
    blanks and expand patterns in what it holds (`--name "$1"` is one word, `--name $1` maybe two)."""
    return f'"{text}"'


def expand_quoted(  # noqa: C901, PLR0912, PLR0915 - a character scanner: one branch per escape and expansion form
    text: str, variables: Vars, *, heredoc: bool = False, kept: Callable[[str], str] | None = None
) -> tuple[str, bool]:
    """The inside of a double-quoted string (or an unquoted here-document body), expanded.
    ``kept``: how a ``$(...)``, ``$((...))`` or backquote left as source is written (with the values
    it reads, where the caller knows them)."""
    out: list[str] = []
    marked: list[str] = []  # the same text with literal characters escaped: see `escape_literal`
    known = True

    def emit(piece: str, literal: bool = True) -> None:
        out.append(piece)
        marked.append(escape_literal(piece) if literal else piece)

    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "\n":
                i += 2
                continue
            if nxt in "$`\\" or (nxt == '"' and not heredoc):
                emit(nxt)
                i += 2
                continue
            emit(ch)
            i += 1
        elif ch == "`":
            end = text.find("`", i + 1)
            end = n - 1 if end < 0 else end
            emit(kept(text[i : end + 1]) if kept else text[i : end + 1], literal=False)
            known = False
            i = end + 1
        elif ch == "$" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "(":
                end = balanced(text, i + 1, "(", ")")
                computed = arithmetic(text[i + 3 : end - 2], variables) if text.startswith("$((", i) else None
                if computed is not None and text[end - 2 : end] == "))":
                    emit(computed)
                else:
                    forget_assigned(text[i:end], variables)
                    emit(kept(text[i:end]) if kept else text[i:end], literal=False)
                    known = False
                i = end
            elif nxt == "{":
                end = balanced(text, i + 1, "{", "}")
                value, ok = lookup(text[i + 2 : end - 1], variables, True, kept)
                emit("" if value is None else joined(value), literal=ok)
                known = known and ok
                i = end
            else:
                name = _NAME.match(text, i + 1)
                if not name:
                    emit(ch)
                    i += 1
                    continue
                value, ok = lookup(name.group(), variables, True)
                bare = not ok and value == "${" + name.group() + "}"  # nothing known: its source
                emit(
                    text[i : name.end()] if value is None or bare else joined(value),
                    literal=ok and value is not None,
                )
                known = known and ok and value is not None
                i = name.end()
        else:
            emit(ch)
            i += 1
    return ("".join(out), True) if known else ("".join(marked), False)


_ARITH_NAME = re.compile(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_ARITH_BASE = re.compile(r"\b([0-9]+)#([0-9A-Za-z@_]+)")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_"
# a number written in the expression: bash reads `0x1f` as hex and `010` as octal (Python reads the
# first so, refuses the second); a name's digits are no number
_ARITH_NUMBER = re.compile(r"(?<![A-Za-z0-9_])[0-9][0-9A-Za-z_]*")


def _constant(found: re.Match[str]) -> str:
    """A constant as bash reads it (``0x10`` is 16, ``010`` is 8); one bash refuses (``08``,
    ``0xg``, ``1a``) raises, so the expression is not evaluated."""
    text = found.group()
    if "_" in text:  # Python's int() reads `1_0`; bash refuses it
        raise ValueError(text)
    if text[:2] in ("0x", "0X"):
        return f"({int(text[2:], 16)})"  # int() refuses what is no hex digit
    return f"({int(text, 8)})" if len(text) > 1 and text[0] == "0" else f"({int(text, 10)})"


def _based(found: re.Match[str]) -> str:
    """``base#digits`` as bash reads it (bases 2 to 64; up to 36 letters of either case are one
    digit); a digit past the base raises, so the expression is not evaluated."""
    base, digits = int(found.group(1)), found.group(2)
    if not 2 <= base <= 64:
        raise ValueError(found.group())
    table, digits = (_DIGITS, digits) if base > 36 else (_DIGITS[:36], digits.lower())
    return f"({_positional(digits, table, base, found.group())})"


def _positional(digits: str, table: str, base: int, source: str) -> int:
    """``digits`` read in ``base``, each digit's value its index in ``table``; one past the base raises."""
    total = 0
    for char in digits:
        index = table.find(char)
        if not 0 <= index < base:
            raise ValueError(source)
        total = total * base + index
    return total


# A name starts where no name character is before it: searched from every place inside a long name,
# the pattern read the rest of it again each time (quadratic: a 200,000-letter `$((...))` held
# `diff` for hours); now every place but a name's first fails at once.
_ARITH_ASSIGNS = re.compile(
    r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--|(?:[-+*/%&|^]|<<|>>)?=(?!=))"
    r"|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)"
)


def forget_assigned(expr: str, variables: Vars) -> None:
    """An arithmetic expansion not evaluated that assigns (``$((N+=1))``, ``$((i++))``): the
    variables it assigns are not known after it."""
    for name in arithmetic_assigned(expr):
        if name in variables:
            variables[name] = UNKNOWN


def arithmetic_assigned(expr: str) -> list[str]:
    """The variables an arithmetic expression assigns (``N+=1``, ``i++``, ``--j``)."""
    return [found.group(1) or found.group(2) for found in _ARITH_ASSIGNS.finditer(expr)]


def arithmetic(expr: str, variables: Vars) -> str | None:  # noqa: C901 - one branch per arithmetic ast node bash supports
    """``$(( expr ))`` over integers and known integer variables, as bash computes it; None when
    it uses anything else (an unknown variable, a comparison, an assignment)."""

    def name(found: re.Match[str]) -> str:
        value = variables.get(found.group(1))
        if (
            isinstance(value, str)
            and not isinstance(value, Partial)
            and re.fullmatch(r"-?[0-9]+", value.strip())
        ):
            return f"({value.strip()})"
        raise LookupError(found.group(1))

    if "//" in expr or "#" in _ARITH_BASE.sub("", expr):
        return None  # bash refuses `//`; a `#` outside `base#digits` is no number (Python reads a comment)
    try:
        text = _ARITH_NAME.sub(name, _ARITH_NUMBER.sub(_constant, _ARITH_BASE.sub(_based, expr)))
        tree = ast.parse(text.strip(), mode="eval")
    except (LookupError, SyntaxError, ValueError, RecursionError, MemoryError):  # the last two: nesting
        return None  # past Python's parser (`$(( ----...1 ))`, which bash computes): not evaluated

    def value(node: ast.AST) -> int:
        # bash computes in 64 bits and wraps: a value past them (even on the way) is not evaluated
        result = computed(node)
        if not -(2**63) <= result < 2**63:
            raise ValueError("past bash's 64-bit integers")
        return result

    def computed(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.operand, ast.BinOp)
            and isinstance(node.operand.op, ast.Pow)
        ):
            # bash binds a sign tighter than `**` (`-2**2` is 4) and Python looser (-4); the
            # parsed tree no longer says whether `-(2**2)` had brackets: not evaluated
            raise ValueError("a sign before `**`")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = value(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp):
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right != 0:
                quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)  # truncates
                return quotient if not isinstance(node.op, ast.Mod) else left - quotient * right
            if isinstance(node.op, ast.Pow) and 0 <= right <= 64 and abs(left) < 2**32:
                return int(left**right)
        raise ValueError("not bash integer arithmetic")

    try:
        result = value(tree.body)
    except (ValueError, RecursionError):
        return None
    return str(result)


def balanced(text: str, start: int, open_: str, close: str) -> int:
    """The index just past the bracket that closes the one at ``start`` (a backslash keeps the
    character after it). The regular expression steps over the other characters in C: each level of
    a nested `${a:-"${a:-...}"}` scans to its end, and a Python loop over each character made a
    1 MiB script of such lines 44 s."""
    depth = 0
    for found in _brackets(open_, close).finditer(text, start):
        bracket = found.group()
        if bracket == open_:
            depth += 1
        elif bracket == close:
            depth -= 1
            if depth == 0:
                return found.end()
    return len(text)


@functools.cache
def _brackets(open_: str, close: str) -> re.Pattern[str]:
    return re.compile(rf"\\.|{re.escape(open_)}|{re.escape(close)}", re.S)


def unescape_word(text: str) -> str:
    """An unquoted literal word: a backslash keeps the next character, a backslash-newline vanishes."""
    return re.sub(r"\\(.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text, flags=re.S)


# an unquoted `*` or `?` (not after an odd run of backslashes) is a pathname pattern: what it
# expands to depends on the files present
GLOB = re.compile(r"(?<!\\)(?:\\\\)*[*?]")


def split_fields(value: Value, line: int) -> list[Field]:
    """An unquoted expansion's words (bash splits on blanks); a lone backslash from a folded
    here-document line is not a word. In a partly known value, each word that still holds an
    expansion is a not-known word of its own: it never takes its neighbours with it."""
    words = value if isinstance(value, list) else [value]
    return [
        _split_word(w, isinstance(item, Partial), line)
        for item in words
        for w in (blank_split(item) if isinstance(item, Partial) else item.split())
        if w != "\\"
    ]


# a `~` not escaped in a partly known value is one bash did not expand where the value was set
# (`P=/x:~/bin` holds the home folder): literal ones are written `\~` (escape_literal)
_UNEXPANDED_TILDE = re.compile(r"(?<!\\)(?:\\\\)*~")


def _split_word(word: str, partly: bool, line: int) -> Field:
    """One word of an unquoted expansion. Bash then expands patterns, so a ``*`` or ``?`` (even one
    quoted where the variable was set) leaves the word to the files present. A word of a partly known
    value is not known when it holds an expansion kept as source or a ``~`` bash did not expand;
    otherwise it is its literal text (``escape_literal`` undone)."""
    if "*" in word or "?" in word:
        return Field(word, False, line)
    if not partly:
        return Field(word, True, line)
    if re.search(r"(?<!\\)[$`\"]", word) or _UNEXPANDED_TILDE.search(word):  # `"`: part of a quoted one
        return Field(word, False, line)
    return Field(re.sub(r"\\(.)", r"\1", word), True, line)


# bash's $'...' escapes (ansicstr): one letter each, then the numeric forms with their digit counts
_ANSI_LETTERS = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
                 "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip
_ANSI_ESCAPE = re.compile(
    r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|(c)|(.))", re.S
)


def ansi_c(text: str) -> str | None:
    """The body of ``$'...'`` as bash decodes it (``\\e`` is ESC, ``\\x4`` one digit, ``\\N{..}`` and
    other unknown escapes keep their backslash); None where bash's result is not plain text it can
    be sure of: a NUL, a byte past ASCII, a control escape ``\\c``, a code point Python refuses."""
    try:
        decoded = _ANSI_ESCAPE.sub(_ansi_one, text)
    except ValueError:
        return None
    return None if "\0" in decoded else decoded


def _ansi_one(found: re.Match[str]) -> str:
    octal, hexa, short, long, control, other = found.groups()
    if other is not None:
        return _ANSI_LETTERS.get(other, "\\" + other)
    if control is not None:
        raise ValueError(found.group())
    if octal is not None or hexa is not None:
        return _ansi_byte(int(octal, 8) if octal is not None else int(hexa, 16))
    return _ansi_point(int(short or long, 16))


def _ansi_byte(byte: int) -> str:
    if byte > 0x7F:
        raise ValueError(byte)  # a raw byte: what it shows as depends on the locale
    return chr(byte)


def _ansi_point(point: int) -> str:
    if 0xD800 <= point <= 0xDFFF:
        raise ValueError(point)  # a surrogate: no character bash can print
    return chr(point)
