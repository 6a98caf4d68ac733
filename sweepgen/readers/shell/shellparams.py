"""Bash parameter expansion, every form bash 5.2 defines, evaluated where its inputs are known.

``${x}``, ``${x:-w}`` ``${x-w}`` ``${x:=w}`` ``${x:+w}`` ``${x:?w}`` (and the colon-less forms),
``${#x}``, ``${x#p}`` ``${x##p}`` ``${x%p}`` ``${x%%p}``, ``${x/p/r}`` ``${x//p/r}`` ``${x/#p/r}``
``${x/%p/r}`` (with 5.2's ``&`` for the match), ``${x^}`` ``${x^^p}`` ``${x,}`` ``${x,,p}`` ``${x~}``
``${x~~}``, ``${x:o}`` ``${x:o:l}``, ``${x@U}`` ``@u`` ``@L`` ``@Q``, ``${!x}``, ``${!a[@]}`` and
each of them on an array element or on a whole array (``${a[@]#p}`` applies per element).

A form whose inputs are not all known (a variable from the environment, a positional, a value
bound under a condition, a partly known value, a pattern bash would read with extglob, a value too
long to match patterns against cheaply) is never guessed: it comes back as ``Partial`` text that
holds its source with every input the script knows substituted, and the partly known value of the
parameter itself as ``where NAME=...``, so a change to any input is a change. The text is one word:
it is never split on its own source.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import re2

from sweepgen.readers.shell.shellvalues import Partial, Unknown, Value, Vars, closing, joined, partial

if TYPE_CHECKING:
    from typing import TypeAlias

    _Pattern: TypeAlias = re.Pattern[str] | re2._Regexp

Expand = Callable[[str], tuple[str, bool]]  # the inside of a double-quoted string, expanded
Arith = Callable[[str], "str | None"]  # `$(( ))` arithmetic over the known variables

_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(\[[^\]]*\])?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MATCH_LIMIT = 4096  # characters a pattern is matched against (prefix/suffix forms)
_SCAN_LIMIT = 256  # characters a wildcard `/p/r` scans (every start, every end)
_OPERATORS = ("##", "#", "%%", "%", "//", "/#", "/%", "/", "^^", "^", ",,", ",", "~~", "~")
_UNSET = object()


@dataclass
class _Context:
    variables: Vars
    quoted: bool
    dq: Expand
    arith: Arith


class _NotKnown(Exception):
    """Some input of the expansion is not known: it stays source."""


class _PartlyKnown(Exception):
    """The expansion is a partly known value as it is (``$X`` of ``X=$1/run_a``): the value
    itself, which already carries its definition's source."""

    def __init__(self, value: Value) -> None:
        self.value = value


def expand_parameter(
    expr: str, variables: Vars, quoted: bool, dq: Expand, arith: Arith
) -> tuple[Value | None, bool]:
    """The value of ``${expr}`` and whether it is known. ``None`` (known) expands to nothing; an
    array read whole comes back as a list; what is not known comes back as ``Partial`` text."""
    ctx = _Context(variables, quoted, dq, arith)
    try:
        return _expand(expr, ctx), True
    except _PartlyKnown as found:
        return found.value, False
    except _NotKnown:
        return _unknown(expr, ctx), False


def _expand(expr: str, ctx: _Context) -> Value | None:
    if expr.startswith("!") and len(expr) > 1:
        return _indirect(expr[1:], ctx)
    length = _HEAD.fullmatch(expr, 1) if expr.startswith("#") else None
    if length:
        return _length(length.group(1), length.group(2), ctx)
    head = _HEAD.match(expr)
    if not head:
        raise _NotKnown
    name, index = head.groups()
    rest = expr[head.end() :]
    value, array = _base(name, index, ctx)
    if not rest:
        return _whole(value, array, index, ctx)
    default = re.match(r":?[-=+?]", rest)
    if default:
        return _default(name, index, value, default.group(), rest[default.end() :], ctx)
    return _operator(_known(_set(value)), rest, index, array, ctx)


def _length(name: str, index: str | None, ctx: _Context) -> str:
    """``${#x}``: the characters of a word, the elements of ``a[@]``; 0 when unset."""
    value, _ = _base(name, index, ctx)
    if value is _UNSET:
        return "0"
    return str(len(_known(value)))


def _operator(known: Value, rest: str, index: str | None, array: bool, ctx: _Context) -> Value:
    """``:o:l``, ``@op`` or a pattern operator applied to a set, fully known value."""
    if rest.startswith(":"):
        return _result(_substring(known, rest[1:], array, ctx), index, ctx)
    if rest.startswith("@") and len(rest) == 2:
        return _result(_each(known, lambda s: _transform(s, rest[1])), index, ctx)
    op = next((op for op in _OPERATORS if rest.startswith(op)), None)
    if op is None:
        raise _NotKnown
    return _result(_each(known, _operation(op, rest[len(op) :], ctx)), index, ctx)


def _whole(value: object, array: bool, index: str | None, ctx: _Context) -> Value | None:
    """``${name}`` / ``${name[i]}`` with no operator: its value (None: an unset array, no words)."""
    if value is _UNSET:
        return None if array else ""
    if partial(value):  # type: ignore[arg-type]
        raise _PartlyKnown(_result(value, index, ctx))  # type: ignore[arg-type]
    return _result(value, index, ctx)  # type: ignore[arg-type]


def _operation(op: str, operand: str, ctx: _Context) -> Callable[[str], str]:
    """What a pattern operator does to one word."""
    if op[0] in "#%":
        rx, literal = _glob(operand, ctx)
        return lambda s: _remove(s, rx, literal, op)
    if op[0] == "/":
        return _substitution(op, operand, ctx)
    any_char = _glob(operand, ctx)[0] if operand else re.compile(".", re.S)
    return lambda s: _case(s, op, any_char)


def _base(name: str, index: str | None, ctx: _Context) -> tuple[object, bool]:
    """(the parameter's value or ``_UNSET``, read as a whole array?); what the running system
    holds (positionals, specials, the environment, a value bound under a condition) is not known."""
    items = _words(name, ctx)
    if index in ("[@]", "[*]"):
        return list(items), True
    if index is None:
        return (items[0] if items else _UNSET), False
    return _element(items, index, ctx, isinstance(ctx.variables[name], list)), False


def _words(name: str, ctx: _Context) -> list[str]:
    """What the script binds ``name`` to, as a list of words (one for a plain variable)."""
    if not _NAME.fullmatch(name) or name not in ctx.variables:
        raise _NotKnown
    bound = ctx.variables[name]
    if isinstance(bound, Unknown):
        raise _NotKnown
    return bound if isinstance(bound, list) else [bound]


def _element(items: list[str], index: str, ctx: _Context, array: bool) -> object:
    """``a[i]``: the index is arithmetic, a negative one counts from the end; ``_UNSET`` past it.
    A negative one of a plain variable is bash's "bad array subscript": not known."""
    position = ctx.arith(index[1:-1])
    if position is None or (int(position) < 0 and not array):
        raise _NotKnown
    at = int(position) + (len(items) if int(position) < 0 else 0)
    return items[at] if 0 <= at < len(items) else _UNSET


def _known(value: object) -> Value:
    if partial(value):  # type: ignore[arg-type]
        raise _NotKnown
    return value  # type: ignore[return-value]


def _set(value: object) -> object:
    if value is _UNSET:  # `${x#p}` of an unset x is empty, but `set -u` makes it an error: keep it
        raise _NotKnown
    return value


def _result(value: Value, index: str | None, ctx: _Context) -> Value:
    if isinstance(value, list) and index == "[*]" and ctx.quoted:
        return " ".join(value)
    return value


def _each(value: Value, fn: Callable[[str], str]) -> Value:
    return [fn(v) for v in value] if isinstance(value, list) else fn(value)


def _default(name: str, index: str | None, value: object, op: str, word: str, ctx: _Context) -> Value | None:
    """``-`` ``=`` ``+`` ``?`` with or without the colon (which makes an empty value count as unset)."""
    kind = op[-1]
    if value is not _UNSET and partial(value):  # type: ignore[arg-type]
        _refuse_partly_known(value, op, index, ctx)
    if kind == "+":
        return "" if _null(value, op) else _word(word, ctx)
    if not _null(value, op):
        return _result(value, index, ctx)  # type: ignore[arg-type]
    if kind == "?":
        raise _NotKnown  # the script stops here when run: not a value
    found = _word(word, ctx)
    if kind == "=":
        _assign_default(name, index, found, ctx)
    return found


def _refuse_partly_known(value: object, op: str, index: str | None, ctx: _Context) -> None:
    """A set, partly known value: ``-`` ``=`` ``?`` yield it as it is; with the colon or ``+``,
    whether it counts as empty depends on what is not known."""
    if op in ("-", "=", "?"):
        raise _PartlyKnown(_result(value, index, ctx))  # type: ignore[arg-type]
    raise _NotKnown


def _null(value: object, op: str) -> bool:
    """Whether the default applies: unset, or (with the colon) empty."""
    text = " ".join(value) if isinstance(value, list) else value
    return value is _UNSET or (op.startswith(":") and text == "")


def _assign_default(name: str, index: str | None, found: str, ctx: _Context) -> None:
    """``${x:=w}`` binds x; an assignment to an element (``${a[i]:=w}``) is not modelled."""
    if index is not None:
        raise _NotKnown
    ctx.variables[name] = found


def _word(word: str, ctx: _Context) -> str:
    """An operand expanded as bash expands it (quotes removed, variables substituted; single
    quotes are literal characters inside a double-quoted expansion); not known if any part is not."""
    out: list[str] = []
    known = True
    i = 0
    while i < len(word):
        text, ok, i = _word_piece(word, i, ctx)
        out.append(text)
        known = known and ok
    if not known:
        raise _NotKnown
    return "".join(out)


def _word_piece(word: str, i: int, ctx: _Context) -> tuple[str, bool, int]:
    """The piece of an operand that starts at ``i``, expanded, whether it is known, and where it
    ends: a single-quoted string (literal, unless inside double quotes), a double-quoted one, an
    escaped character, or a stretch the double-quote expander reads as it is."""
    ch = word[i]
    if ch == "'" and not ctx.quoted:
        found = word.find("'", i + 1)
        end = len(word) if found < 0 else found
        return word[i + 1 : end], True, end + 1
    if ch == '"':
        end = _quote_end(word, i)
        text, ok = ctx.dq(word[i + 1 : end])
        return text, ok, end + 1
    if ch == "\\" and not ctx.quoted and i + 1 < len(word):
        return word[i + 1], True, i + 2
    end = _run_end(word, i, ctx.quoted)
    text, ok = ctx.dq(word[i:end])
    return text, ok, end


def _quote_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == "$" and text[i + 1 : i + 2] in ("(", "{"):
            i = closing(text, i + 1)
        elif text[i] == '"':
            return i
        else:
            i += 1
    return len(text)


def _run_end(text: str, start: int, quoted: bool) -> int:
    """The end of a stretch without quotes (nor, unquoted, backslashes) that the double-quote
    expander reads as it is."""
    i = start
    while i < len(text):
        ch = text[i]
        if ch == '"' or (ch == "'" and not quoted) or (ch == "\\" and not quoted):
            return i
        if ch == "\\":
            i += 2
        elif ch == "$" and text[i + 1 : i + 2] in ("(", "{"):
            i = closing(text, i + 1)
        else:
            i += 1
    return len(text)


def _indirect(expr: str, ctx: _Context) -> Value | None:
    """``${!x}`` (the variable x names), ``${!a[@]}`` (the indices); ``${!prefix*}`` lists the
    environment's names too, so it is not known."""
    head = _HEAD.match(expr)
    if not head:
        raise _NotKnown
    name, index = head.groups()
    rest = expr[head.end() :]
    if index in ("[@]", "[*]") and not rest:
        value, _ = _base(name, index, ctx)
        indices = [str(i) for i in range(len(value))]  # type: ignore[arg-type]
        return _result(indices, index, ctx)
    value, _ = _base(name, index, ctx)
    target = _known(_set(value))
    if not isinstance(target, str) or not _HEAD.fullmatch(target):
        raise _NotKnown
    return _expand(target + rest, ctx)


def _substring(value: Value, spec: str, array: bool, ctx: _Context) -> Value:
    """``${x:o}`` / ``${x:o:l}``: offsets are arithmetic; negative counts from the end."""
    parts = _split_top(spec, ":")
    offset = _arith_or_zero(parts[0], ctx)
    count = _arith_or_zero(parts[1], ctx) if len(parts) > 1 else None
    if len(parts) > 2:
        raise _NotKnown
    items = value if array or not isinstance(value, list) else _first(value)
    return _slice(items, offset, count)


def _slice(items: Value, offset: int, count: int | None) -> Value:
    """``count`` items (characters of a word, elements of an array) from ``offset`` on: a negative
    offset counts from the end, a negative count stops that many items before it; past the end
    is empty."""
    size = len(items)
    start = offset + (size if offset < 0 else 0)
    if start < 0 or start > size:
        return [] if isinstance(items, list) else ""
    if count is None:
        return items[start:]
    if count < 0:
        return _up_to_from_end(items, start, size + count)
    return items[start : start + count]


def _arith_or_zero(text: str, ctx: _Context) -> int:
    """An offset or length: arithmetic over the known variables, 0 when left empty."""
    found = ctx.arith(text) if text.strip() else "0"
    if found is None:
        raise _NotKnown
    return int(found)


def _first(words: list[str]) -> str:
    """``${x:o}`` of an array read without an index slices its first element."""
    return words[0] if words else ""


def _up_to_from_end(items: Value, start: int, end: int) -> Value:
    """A negative length counts from the end of a word; bash stops with "substring expression
    < 0" for an array, or when that end lies before the start."""
    if isinstance(items, list) or end < start:
        raise _NotKnown
    return items[start:end]


def _split_top(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _transform(value: str, op: str) -> str:
    if op == "U":
        return value.upper()
    if op == "L":
        return value.lower()
    if op == "u":
        return value[:1].upper() + value[1:]
    if op == "Q":
        return "'" + value.replace("'", "'\\''") + "'"
    raise _NotKnown  # @E @P @A @K @a @k: escapes, prompts and attributes are not modelled


def _case(value: str, op: str, rx: _Pattern) -> str:
    def change(ch: str) -> str:
        if not rx.fullmatch(ch):
            return ch
        return ch.upper() if op[0] == "^" else ch.lower() if op[0] == "," else ch.swapcase()

    if len(op) == 2:
        return "".join(change(ch) for ch in value)
    return change(value[:1]) + value[1:]


def _remove(value: str, rx: _Pattern, literal: str | None, op: str) -> str:
    """``#`` / ``##`` a prefix, ``%`` / ``%%`` a suffix: the shortest (one sign) or longest (two)."""
    if literal is not None:
        return _remove_literal(value, literal, op[0] == "#")
    if len(value) > _MATCH_LIMIT:
        raise _NotKnown
    if op[0] == "#":
        return _remove_prefix(value, rx, len(op) == 1)
    return _remove_suffix(value, rx, len(op) == 1)


def _remove_literal(value: str, literal: str, prefix: bool) -> str:
    """A pattern without wildcards removed as plain text (shortest and longest are one match)."""
    if prefix:
        return value[len(literal) :] if value.startswith(literal) else value
    return value[: len(value) - len(literal)] if value.endswith(literal) else value


def _remove_prefix(value: str, rx: _Pattern, shortest: bool) -> str:
    n = len(value)
    for end in range(0, n + 1) if shortest else range(n, -1, -1):
        if rx.fullmatch(value, 0, end):
            return value[end:]
    return value


def _remove_suffix(value: str, rx: _Pattern, shortest: bool) -> str:
    n = len(value)
    for start in range(n, -1, -1) if shortest else range(0, n + 1):
        if rx.fullmatch(value, start, n):
            return value[:start]
    return value


def _substitution(op: str, operand: str, ctx: _Context) -> Callable[[str], str]:
    pattern, replacement = _split_slash(operand, op == "//")
    rx, literal = _glob(pattern, ctx) if pattern else (re.compile(""), "")
    repl = _replacement(replacement, ctx) if replacement is not None else (lambda _m: "")

    def apply(value: str) -> str:
        if op in ("/#", "/%"):
            return _anchored(value, rx, op, repl)
        if pattern == "" or (literal == "" and pattern):
            return value
        if literal is not None:
            parts = value.split(literal) if op == "//" else value.split(literal, 1)
            return repl(literal).join(parts)
        if len(value) > _SCAN_LIMIT:
            raise _NotKnown
        return _scan(value, rx, op == "//", repl)

    return apply


def _anchored(value: str, rx: _Pattern, op: str, repl: Callable[[str], str]) -> str:
    if len(value) > _MATCH_LIMIT:
        raise _NotKnown
    n = len(value)
    if op == "/#":
        for end in range(n, -1, -1):
            if rx.fullmatch(value, 0, end):
                return repl(value[:end]) + value[end:]
        return value
    for start in range(0, n + 1):
        if rx.fullmatch(value, start, n):
            return value[:start] + repl(value[start:])
    return value


def _scan(value: str, rx: _Pattern, every: bool, repl: Callable[[str], str]) -> str:
    """The longest match at the leftmost place it starts, replaced (each place with ``//``)."""
    if not value and rx.fullmatch(value):
        return repl("")  # `${e//*/X}` of an empty value is X, as bash has it
    out: list[str] = []
    i, n = 0, len(value)
    while i <= n:
        end = next((j for j in range(n, i, -1) if rx.fullmatch(value, i, j)), None)
        if end is None:
            out.append(value[i : i + 1])  # past the end: nothing
            i += 1
            continue
        out.append(repl(value[i:end]))
        i = end
        if not every:
            out.append(value[i:])
            return "".join(out)
    return "".join(out)


def _split_slash(operand: str, skip: bool) -> tuple[str, str | None]:
    """``p/r`` at the first ``/`` outside quotes, escapes and nested expansions; a pattern's own
    first character after ``//`` is never the separator (``${x///*/}`` replaces ``/*``, as bash
    reads it; ``${x/#/*/}`` puts ``*/`` in front)."""
    i, n = (1 if skip and operand.startswith("/") else 0), len(operand)
    while i < n:
        if operand[i] == "/":
            return operand[:i], operand[i + 1 :]
        i = _past(operand, i)
    return operand, None


def _past(operand: str, i: int) -> int:
    """Where what starts at ``i`` ends: an escape, a quoted part, a nested expansion, a character."""
    ch, n = operand[i], len(operand)
    if ch == "\\":
        return i + 2
    if ch in "'\"":
        found = operand.find(ch, i + 1)
        return n if found < 0 else found + 1
    if ch == "$" and i + 1 < n and operand[i + 1] in "({":
        return closing(operand, i + 1)
    return i + 1


def _replacement(text: str, ctx: _Context) -> Callable[[str], str]:
    """The replacement, expanded; an unquoted, unescaped ``&`` is the matched text (bash 5.2's
    ``patsub_replacement``, on by default) and ``\\&`` a literal ``&``."""
    pieces: list[str | None] = []  # None: the match
    literal: list[str] = []
    i, n = 0, len(text)
    while i < n:
        match = text[i] == "&"
        if match or text[i : i + 2] == "\\&":
            pieces.append(_word("".join(literal), ctx))
            literal = []
            pieces.append(None if match else "&")
            i += 1 if match else 2
            continue
        end = _replacement_token_end(text, i)
        literal.append(text[i:end])
        i = end
    pieces.append(_word("".join(literal), ctx))
    return lambda match: "".join(match if p is None else p for p in pieces)


def _replacement_token_end(text: str, i: int) -> int:
    """Where the replacement's piece at ``i`` ends: an escape, a quoted string or a ``$(``/``${``
    expansion is taken whole (an ``&`` inside it is no match), anything else one character."""
    ch = text[i]
    if ch == "\\":
        return min(i + 2, len(text))
    if ch == '"':
        return _quote_end(text, i) + 1
    if ch == "'":
        found = text.find(ch, i + 1)
        return len(text) if found < 0 else found + 1
    if ch == "$" and text[i + 1 : i + 2] in ("(", "{"):
        return closing(text, i + 1)
    return i + 1


def _glob(pattern: str, ctx: _Context) -> tuple[_Pattern, str | None]:  # noqa: C901, PLR0915 - a scanner: one branch per pattern character class
    """A bash pattern as a regular expression, and its text when it holds no wildcard. Quoted parts
    and an expansion's value inside quotes are literal; an unquoted expansion's value is a pattern."""
    out: list[str] = []
    plain: list[str] | None = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            plain = None if plain is None else [*plain, pattern[i + 1]]
            i += 2
            continue
        if ch in "'\"":
            found = pattern.find(ch, i + 1)
            end = n if found < 0 else found
            inner = pattern[i + 1 : end]
            text = inner if ch == "'" else _word(f'"{inner}"', ctx)
            out.append(re.escape(text))
            plain = None if plain is None else [*plain, text]
            i = end + 1
            continue
        if ch == "$" or ch == "`":
            end = closing(pattern, i + 1) if pattern[i + 1 : i + 2] in ("(", "{") else _name_end(pattern, i)
            if ch == "`" or pattern[i + 1 : i + 2] == "(":
                raise _NotKnown
            value = _word(pattern[i:end], ctx)
            # an unquoted expansion's value is a pattern: its wildcards count, its quotes do not
            inner_rx, inner_plain = _glob(re.sub(r"([\"'$`])", r"\\\1", value), ctx)
            out.append(inner_rx.pattern)
            plain = None if plain is None or inner_plain is None else [*plain, inner_plain]
            i = end
            continue
        if ch in "?*+@!" and pattern[i + 1 : i + 2] == "(":
            raise _NotKnown  # an extglob pattern: depends on `shopt -s extglob`
        if ch == "*":
            out.append(".*")
            plain = None
        elif ch == "?":
            out.append(".")
            plain = None
        elif ch == "[":
            end, klass = _bracket(pattern, i)
            if klass is None:
                out.append(re.escape(ch))
                plain = None if plain is None else [*plain, ch]
            else:
                out.append(klass)
                plain = None
                i = end
                continue
        else:
            out.append(re.escape(ch))
            plain = None if plain is None else [*plain, ch]
        i += 1
    return re2.compile("".join(out), _LINEAR), None if plain is None else "".join(plain)


# A pattern is matched by RE2, in time linear in the text: Python's backtracking engine took
# hours over `${x%%*a*a*a*a*a*a*a*a*a*a*a*a*b}` of 3,000 characters (a config's own text), and a
# prefix or suffix form tries every end. `.` matches a newline, as `*` and `?` do in bash.
_LINEAR = re2.Options()
_LINEAR.dot_nl = True


def _name_end(text: str, start: int) -> int:
    found = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]").match(text, start + 1)
    return found.end() if found else start + 1


_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "blank": " \\t",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "xdigit": "0-9A-Fa-f",
}


def _bracket(pattern: str, start: int) -> tuple[int, str | None]:
    """``[...]`` (``[!...]``/``[^...]`` negated, ``[:alpha:]`` classes) as a regex class."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    i += negate
    body: list[str] = []
    first = True
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]" and not first:
            return i + 1, f"[{'^' if negate else ''}{''.join(body)}]"
        if ch == "[" and pattern[i + 1 : i + 2] == ":":
            piece, i = _named_class(pattern, i)
        else:
            piece, step = _bracket_member(pattern, i, bool(body))
            i += step
        body.append(piece)
        first = False
    return start + 1, None


def _named_class(pattern: str, start: int) -> tuple[str, int]:
    """``[:alpha:]`` inside a bracket expression: its regex ranges and the index past it."""
    end = pattern.find(":]", start + 2)
    if end < 0 or pattern[start + 2 : end] not in _CLASSES:
        raise _NotKnown
    return _CLASSES[pattern[start + 2 : end]], end + 2


def _bracket_member(pattern: str, i: int, after_member: bool) -> tuple[str, int]:
    """One member of a bracket expression as regex text, and the characters it took: a range's
    dash (between two members), an escaped character, or a literal (a leading or trailing dash)."""
    ch = pattern[i]
    if ch == "-" and after_member and pattern[i + 1 : i + 2] not in ("", "]"):
        return "-", 1
    if ch == "\\" and i + 1 < len(pattern):
        return re.escape(pattern[i + 1]), 2
    if ch in "'\"$":
        raise _NotKnown  # quotes and expansions inside a bracket expression: not modelled
    return re.escape(ch), 1


def _parameter(expr: str) -> tuple[int, str]:
    """Where an expansion's operands start (past its ``!``/``#`` and the parameter), and the
    parameter's name ("" when there is none)."""
    head = _HEAD.match(expr.lstrip("!#")) if expr else None
    flags = len(expr) - len(expr.lstrip("!#"))
    if head is None:
        return flags, ""
    return flags + head.end(), head.group(1)


def _unknown(expr: str, ctx: _Context) -> Partial:
    """The expansion as source, with every input the script knows substituted into its operands
    and the parameter's own partly known value shown, so that a change to any input shows."""
    split, name = _parameter(expr)
    operands, known = ctx.dq(expr[split:]) if expr[split:] else ("", True)
    if known:  # a literal `$` of an operand (`${A:-\$B}`) never reads as the expansion `${A:-$B}`
        operands = re.sub(r"([\\$`])", r"\\\1", operands)
    text = "${" + expr[:split] + operands
    bound = ctx.variables.get(name)
    # the parameter's value is an input whenever the script binds it: partly known, named by `${!R}`,
    # or fully known but read through what is not (`${A[k]}` of an associative array, `${X#$1}`)
    if bound is not None and not isinstance(bound, Unknown):
        text += f" where {name}={joined(bound)}"
    return Partial(text + "}")
