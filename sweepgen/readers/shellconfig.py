"""Read a shell, sbatch or launch script as data, through the tree-sitter bash grammar; nothing runs.

The result::

    {"sbatch": {"--partition": "gpu", "--nodes": 2},             # #SBATCH lines before any command
     "env": {"HF_HOME": "/scratch/hf"},                          # exported variables, final values
     "vars": {...},                                              # other variables the data still needs
     "commands": {"verl.trainer.main_ppo": {...}, "mkdir": {...}}}

Variables are tracked in order and substituted where used (``$VAR``, ``${VAR:-default}``, arrays
``"${ARGS[@]}"``, here-documents read with ``read -d '' CMD <<EOF`` and run as ``$CMD``). A plain
(unexported) variable is left out when every use of it was substituted, since its value then shows
where it is used. Each command is read by ``sweepgen.readers.cmdline``: launchers peeled off, keyed
by program, flags and Hydra overrides nested. Redirections become ``@stdout``/``@stderr``/``@stdin``,
never arguments. Whatever sits inside ``if``/``case``/loops/functions or after ``&&``/``||`` carries
``@when`` with its condition, and a variable bound there is unknown afterwards. Words that depend on
the running system stay not-evaluated nodes.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers import cmdline, sbatch
from sweepgen.readers.model import NotEvaluated, ReadResult
from sweepgen.readers.shellwords import (
    UNKNOWN,
    Field,
    Partial,
    Unknown,
    Vars,
    arithmetic,
    expand_quoted,
    joined,
    lookup,
    partial,
    split_fields,
    unescape_word,
)

_MAX_DEPTH = 40
_MAX_VALUE = 1_000_000  # nested `bash -c` / `$CMD` re-reads
_DECLARE = {"export", "declare", "typeset", "local", "readonly"}
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=)(.*)", re.S)


def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def load_shell_config(path: str | Path) -> dict[str, Any]:
    data: dict[str, Any] = read_shell_file(path).data
    return data


def read_shell_file(path: str | Path) -> ReadResult:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read shell script: {err}", location=Location(str(path))) from err
    return read_shell(text, str(path))


def parse_shell_config(text: str, filename: str = "<string>") -> dict[str, Any]:
    data: dict[str, Any] = read_shell(text, filename).data
    return data


def read_shell(text: str, filename: str = "<string>") -> ReadResult:
    if "\x00" in text:
        raise ConfigError("a shell script cannot contain NUL bytes", location=Location(filename))
    reader = _Reader(filename)
    try:
        reader.script(text, 0, [], {})
    except RecursionError:
        raise ConfigError("shell script nested too deeply to read", location=Location(filename)) from None
    return reader.finish()


class _Reader:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.vars: Vars = {}
        self.assignments: dict[str, list[tuple[str, Any, int]]] = {}  # name -> (when, value, line)
        self.exported: set[str] = set()
        self.substituted: set[str] = set()
        self.opaque = False  # something ran that could read any variable
        self.sbatch: dict[str, Any] = {}
        self.commands: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        self.sizes: dict[str, int] = {}  # characters held by each variable, for the size bound
        self.result = ReadResult(filename, None)
        self.seen_command = False
        self.depth = 0
        self.parser: Any = None

    # the whole script ------------------------------------------------------------------------------

    def script(self, text: str, line_offset: int, when: list[str], redirects: dict[str, Any]) -> None:
        if self.parser is None:
            # one parser per read, never a module global: no tree-sitter object outlives the read
            # (a global one is torn down at interpreter exit in an order tree-sitter does not promise)
            self.parser = _parser()
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise ConfigError(
                "shell commands nested too deeply (bash -c / $CMD)", location=Location(self.filename)
            )
        try:
            source = text.encode("utf-8", "surrogateescape")
            tree = self.parser.parse(source)
            self.src = source
            self.offset = line_offset
            for node in tree.root_node.named_children:
                self.statement(node, when, redirects)
        finally:
            self.depth -= 1

    def finish(self) -> ReadResult:
        env: dict[str, Any] = {}
        plain: dict[str, Any] = {}
        for name, history in self.assignments.items():
            value = self.final(name, history)
            if name in self.exported:
                env[name] = value
            elif self.opaque or name not in self.substituted or any(w for w, _, _ in history):
                plain[name] = value
            else:
                continue
            self.result.lines[("env" if name in self.exported else "vars", name)] = history[0][2]
        for name in sorted(self.exported - set(self.assignments)):
            env[name] = NotEvaluated(f"${name}", self.filename, 0)  # `export NAME` of an inherited value
        self.result.data = {
            "sbatch": self.sbatch,
            "env": env,
            "vars": plain,
            "commands": {k: cmdline.plain(v) for k, v in self.commands.items()},
        }
        return self.result

    def final(self, name: str, history: list[tuple[str, Any, int]]) -> Any:
        """A variable's value as data: built by one assignment and unconditional appends, its final
        value (an array of flags then compares as one flag mapping); else its whole history."""
        bound = self.vars.get(name)
        appends = all(isinstance(v, dict) and "+=" in v for _, v, _ in history[1:])
        if (
            len(history) > 1
            and appends
            and not any(w for w, _, _ in history)
            and bound is not None
            and not isinstance(bound, Unknown)
        ):
            return self.shown(bound, not partial(bound), history[-1][2])
        return _history(history)

    def line(self, node: Any) -> int:
        return int(node.start_point[0]) + 1 + self.offset

    def text(self, node: Any) -> str:
        return bytes(self.src[node.start_byte : node.end_byte]).decode("utf-8", "surrogateescape")

    def norm(self, node: Any) -> str:
        """Normalised source of a node: comments and layout do not count."""
        return _normalise(self.text(node))

    # statements ------------------------------------------------------------------------------------

    def statement(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        kind = node.type
        if kind == "comment":
            self.comment(node)
            return
        self.seen_command = True  # sbatch reads #SBATCH lines only before the first other line
        if node.has_error and node.type != "ERROR":
            self.keep_opaque(node, when)  # bash would refuse it: kept as source, never guessed at
            return
        if kind in ("command", "declaration_command", "unset_command", "test_command"):
            self.command(node, when, redirects, None)
        elif kind == "variable_assignment":
            self.assign(node, when)
        elif kind == "variable_assignments":
            for child in node.named_children:
                self.assign(child, when)
        elif kind == "redirected_statement":
            self.redirected(node, when, redirects)
        elif kind == "list":
            self.and_or(node, when, redirects)
        elif kind == "pipeline" or kind in ("subshell", "compound_statement", "do_group", "negated_command"):
            for child in node.named_children:
                self.statement(child, when, redirects)
        elif kind == "if_statement":
            self.if_statement(node, when, redirects)
        elif kind == "case_statement":
            self.case_statement(node, when, redirects)
        elif kind in ("for_statement", "c_style_for_statement", "while_statement"):
            self.loop(node, when, redirects)
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if body is not None:
                self.block(body, [*when, f"function {self.text(name) if name else '?'}"], redirects)
        elif kind in ("heredoc_body", "heredoc_end", "heredoc_start"):
            return
        else:  # an ERROR node, or a construct this reader does not model: keep its source
            self.keep_opaque(node, when)

    def keep_opaque(self, node: Any, when: list[str]) -> None:
        self.opaque = True
        source = self.norm(node)
        if not source:
            return
        entry: Any = NotEvaluated(source, self.filename, self.line(node))
        if when:
            entry = {"@when": " and ".join(when), "@source": entry}
        self.store(f"({node.type})", entry, self.line(node))
        if node.type == "ERROR" or node.has_error:
            self.result.warnings.append(
                f"{self.filename}:{self.line(node)}: the bash grammar could not read this part; "
                "it is compared as text"
            )

    def block(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        if node.type in ("compound_statement", "do_group", "subshell"):
            for child in node.named_children:
                self.statement(child, when, redirects)
        else:
            self.statement(node, when, redirects)

    def comment(self, node: Any) -> None:
        text = self.text(node)
        if not text.startswith("#SBATCH") or self.seen_command:
            return  # sbatch stops reading directives at the first command
        try:
            words = shlex.split(text[len("#SBATCH") :], comments=True)
        except ValueError:
            self.sbatch[f"(line {self.line(node)})"] = NotEvaluated(text, self.filename, self.line(node))
            return
        flags: dict[str, Any] = {}
        spelled: list[cmdline.Word] = list(sbatch.canonical_words(words))
        parsed, _at = cmdline.parse_arguments(spelled, self.filename, [self.line(node)] * len(spelled))
        for key, value in cmdline.plain(parsed).items():
            flags[key] = value
            self.result.lines[("sbatch", key)] = self.line(node)
        for key, value in flags.items():
            self.sbatch[key] = value if key not in self.sbatch else [self.sbatch[key], value]

    def and_or(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        children = node.children
        left = children[0]
        self.statement(left, when, redirects)
        condition = self.norm(left)
        for op, right in zip(children[1::2], children[2::2]):
            guard = condition if op.type == "&&" else f"! ({condition})"
            self.statement(right, [*when, guard], redirects)
            condition = f"{condition} {op.type} {self.norm(right)}"

    def if_statement(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        conditions: list[str] = []
        current: list[str] = []
        body: list[Any] = []
        in_condition = True
        clauses: list[tuple[list[str], list[Any]]] = []
        for child in node.children:
            if child.type == "then":
                in_condition = False
            elif child.type in ("elif_clause", "else_clause"):
                continue
            elif child.is_named and child.type != "comment":
                (current.append(self.norm(child)) if in_condition else body.append(child))
        conditions.append("; ".join(current))
        clauses.append(([*when, conditions[0]], body))
        negated = [f"! ({conditions[0]})"]
        for child in node.children:
            if child.type == "elif_clause":
                cond, sub, in_condition = [], [], True
                for part in child.children:
                    if part.type == "then":
                        in_condition = False
                    elif part.is_named and part.type != "comment":
                        (cond.append(self.norm(part)) if in_condition else sub.append(part))
                text = "; ".join(cond)
                clauses.append(([*when, *negated, text], sub))
                negated.append(f"! ({text})")
            elif child.type == "else_clause":
                sub = [part for part in child.named_children if part.type != "comment"]
                clauses.append(([*when, *negated], sub))
        for guard, statements in clauses:
            for statement in statements:
                self.statement(statement, guard, redirects)

    def case_statement(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        value = node.child_by_field_name("value")
        subject = self.norm(value) if value is not None else "?"
        for item in node.named_children:
            if item.type != "case_item":
                continue
            patterns = [self.norm(c) for c in item.children_by_field_name("value")]
            guard = f"case {subject} in {'|'.join(patterns)}"
            for index, child in enumerate(item.children):
                if child.is_named and (
                    child.type not in ("word", "extglob_pattern", "concatenation", "string", "raw_string")
                    or item.field_name_for_child(index) != "value"
                ):
                    self.statement(child, [*when, guard], redirects)

    def loop(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        body = node.child_by_field_name("body")
        head = self.text(node)[: (body.start_byte - node.start_byte) if body is not None else None]
        guard = _normalise(head).rstrip("; ")
        variable = node.child_by_field_name("variable")
        if variable is not None:
            self.vars[self.text(variable)] = UNKNOWN
        if body is not None:
            self.block(body, [*when, guard], redirects)

    # redirections ----------------------------------------------------------------------------------

    def redirected(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        body = node.child_by_field_name("body")
        state = dict(redirects)
        heredoc: Field | None = None
        for child in node.children:
            if child is body or not child.is_named:
                continue
            found = self.redirect(child, state)
            if found is not None:
                heredoc = found
        if body is None:
            return
        if body.type in ("command", "declaration_command"):
            self.command(body, when, state, heredoc)
        else:
            self.statement(body, when, state)

    def redirect(self, node: Any, state: dict[str, Any]) -> Field | None:
        """Apply one redirection to ``state``; a here-document's expanded body is returned."""
        if node.type == "heredoc_redirect":
            body = None
            for child in node.children:
                if child.type == "heredoc_body":
                    body = child
                elif child.is_named and child.type != "heredoc_start" and child.type != "heredoc_end":
                    self.redirect(child, state)
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            strip_tabs = any(c.type == "<<-" for c in node.children)
            raw = self.text(body) if body is not None else ""
            if strip_tabs:
                raw = "\n".join(line.lstrip("\t") for line in raw.split("\n"))
            quoted = start is not None and self.text(start)[:1] in ("'", '"', "\\")
            text, known = (raw, True) if quoted else expand_quoted(raw, self.vars, heredoc=True)
            if not known:
                self.opaque = True
            return Field(text, known, self.line(node))
        if node.type == "herestring_redirect":
            words = [f for c in node.named_children for f in self.expand(c)]
            state["@stdin"] = self.value(Field(" ".join(f.text for f in words), all(f.known for f in words)))
            return None
        if node.type != "file_redirect":
            return None
        descriptor = node.child_by_field_name("descriptor")
        destination = node.child_by_field_name("destination")
        op = next((c.type for c in node.children if not c.is_named), ">")
        target = " ".join(f.text for f in self.expand(destination)) if destination is not None else ""
        fd = (
            int(self.text(descriptor)) if descriptor is not None and self.text(descriptor).isdigit() else None
        )
        names = {0: "@stdin", 1: "@stdout", 2: "@stderr"}
        if op in ("&>", "&>>") or (op == ">&" and fd is None and not target.isdigit() and target != "-"):
            mode = ">>" if op == "&>>" else ">"
            state["@stdout"] = state["@stderr"] = f"{mode} {target}"
        elif op in (">&", "<&"):
            source = fd if fd is not None else (1 if op == ">&" else 0)
            if target.isdigit():
                state[names.get(source, f"@fd{source}")] = state.get(
                    names.get(int(target), f"@fd{target}"),
                    {0: "stdin", 1: "stdout", 2: "stderr"}.get(int(target), target),
                )
            else:
                state[names.get(source, f"@fd{source}")] = f"{op} {target}"
        elif op in ("<", "<>"):
            state[names.get(fd if fd is not None else 0, f"@fd{fd}")] = f"< {target}"
        else:  # >, >>, >|
            mode = ">>" if op == ">>" else ">"
            state[names.get(fd if fd is not None else 1, f"@fd{fd}")] = f"{mode} {target}"
        return None

    # variables -------------------------------------------------------------------------------------

    def assign(self, node: Any, when: list[str], *, export: bool = False) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            self.keep_opaque(node, when)
            return
        name = self.text(name_node)
        if name_node.type == "subscript":  # ARR[2]=x
            self.keep_opaque(node, when)
            base = name_node.child_by_field_name("name")
            if base is not None:
                self.vars[self.text(base)] = UNKNOWN
            return
        append = any(c.type == "+=" for c in node.children)
        value: Any
        if value_node is None:
            value = ""
            known = True
        elif value_node.type == "array":
            fields = [f for c in value_node.named_children if c.type != "comment" for f in self.expand(c)]
            value = [f.text if f.known else Partial(f.text) for f in fields]
            known = all(f.known for f in fields)
        else:
            fields = self.expand(value_node, assignment=True)
            value = " ".join(f.text for f in fields)
            known = all(f.known for f in fields)
        if append and name in self.assignments:
            self.append(name, value, known, when, self.line(node))
        else:
            self.bind(name, value, known, when, self.line(node))
        if export:
            self.exported.add(name)

    def append(self, name: str, value: Any, known: bool, when: list[str], line: int) -> None:
        """``A+=(x y)`` / ``A+=x``: the history records only what was added (a script of n appends
        stays linear); the variable's value grows in place."""
        old = self.vars.get(name)
        self.check_size(name, self.sizes.get(name, 0) + _size(value), line)
        self.assignments[name].append((" and ".join(when), {"+=": self.shown(value, known, line)}, line))
        if when or isinstance(old, Unknown):
            self.vars[name] = UNKNOWN
        elif isinstance(value, list):
            if isinstance(old, list):
                old.extend(value)
            else:
                self.vars[name] = [*([old] if old else []), *value]
        else:
            first = old[0] if isinstance(old, list) and old else old or ""
            glued = first + value
            self.vars[name] = Partial(glued) if not known or partial(first) else glued

    def check_size(self, name: str, size: int, line: int) -> None:
        if size > _MAX_VALUE:  # `A=$A$A` doubles each time: bounded, as every input-controlled cost
            raise ConfigError(
                f"variable {name} grows past {_MAX_VALUE:,} characters",
                location=Location(self.filename, line, 1),
                hint="sweepgen reads scripts, it does not run them; simplify the assignment",
            )
        self.sizes[name] = size

    def bind(self, name: str, value: Any, known: bool, when: list[str], line: int) -> None:
        if isinstance(value, list):
            value = list(value)  # its own list: appends grow it in place
        self.check_size(name, _size(value), line)
        self.assignments.setdefault(name, []).append(
            (" and ".join(when), self.shown(value, known, line), line)
        )
        if when:
            self.vars[name] = UNKNOWN
        elif known or isinstance(value, list):
            self.vars[name] = value
        else:
            self.vars[name] = Partial(value)

    def shown(self, value: Any, known: bool, line: int) -> Any:
        """A variable's value as data: text, a not-evaluated node holding its definition's source, or
        for an array of words each word on its own; an array of flags is a flag mapping, so that
        inserting one flag is one added flag."""
        if not isinstance(value, list):
            return value if known else NotEvaluated(_normalise(str(value)), self.filename, line)
        words: list[Any] = [
            NotEvaluated(_normalise(v), self.filename, line) if isinstance(v, Partial) else v for v in value
        ]
        if words and any(cmdline.is_flag(w) for w in words):
            return cmdline.plain(cmdline.parse_arguments(words, self.filename, [line] * len(words))[0])
        return words

    # commands --------------------------------------------------------------------------------------

    def command(self, node: Any, when: list[str], redirects: dict[str, Any], heredoc: Field | None) -> None:
        if node.type == "declaration_command":
            self.declaration(node, when)
            return
        if node.type == "unset_command":
            for child in node.named_children:
                if not self.text(child).startswith("-"):
                    self.bind(self.text(child), "", True, when, self.line(node))
                    self.vars.pop(self.text(child), None)
            return
        if node.type == "test_command":
            self.store(
                "test",
                self.guarded({"@test": NotEvaluated(self.norm(node), self.filename, self.line(node))}, when),
                self.line(node),
            )
            return
        self.seen_command = True
        if self.split_assignment(node, when, redirects):
            return
        state = dict(redirects)
        prefix: dict[str, Any] = {}
        words: list[Field] = []
        for index, child in enumerate(node.children):  # enumerate: `.index()` made long commands quadratic
            field = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                fields = self.expand(value, assignment=True) if value is not None else []
                prefix[self.text(name) if name else "?"] = self.value(
                    Field(" ".join(f.text for f in fields), all(f.known for f in fields), self.line(child))
                )
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                found = self.redirect(child, state)
                heredoc = found or heredoc
            elif child.type == "command_name" or field == "argument":
                words.extend(self.expand(child.named_children[0] if child.type == "command_name" else child))
        if not words:
            for key, value in prefix.items():  # `VAR=x` with an empty command: a plain assignment
                self.bind(key, value, not isinstance(value, NotEvaluated), when, self.line(node))
            return
        self.run(words, node, when, state, heredoc, prefix)

    def split_assignment(self, node: Any, when: list[str], redirects: dict[str, Any]) -> bool:
        """The bash grammar misreads ``X=a/$M/$T/c.yaml`` as ``X=a/$M/$`` running ``T/c.yaml``: an
        assignment glued to the word after it is one assignment, re-read with ``${T}`` braces."""
        children = node.children
        glued = any(
            a.type == "variable_assignment" and b.start_byte == a.end_byte
            for a, b in zip(children, children[1:])
        )
        if not glued:
            return False
        text = self.text(node)
        braced = re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", r"${\1}", text)
        if braced == text:
            return False
        self.reparse(braced, self.line(node), when, redirects)
        return True

    def declaration(self, node: Any, when: list[str]) -> None:
        keyword = self.text(node.children[0])
        options = [
            self.text(c) for c in node.named_children if c.type == "word" and self.text(c).startswith("-")
        ]
        export = keyword == "export" or any("x" in o for o in options)
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child, when, export=export)
            elif child.type == "variable_name":
                name = self.text(child)
                if export:
                    self.exported.add(name)
                elif name not in self.assignments:
                    self.bind(
                        name,
                        [] if any("a" in o or "A" in o for o in options) else "",
                        True,
                        when,
                        self.line(child),
                    )

    def run(
        self,
        words: list[Field],
        node: Any,
        when: list[str],
        state: dict[str, Any],
        heredoc: Field | None,
        prefix: dict[str, Any],
    ) -> None:
        head = words[0].text
        line = self.line(node)
        if head == "read" and heredoc is not None and _plain_read(words):
            names = [w.text for w in words[1:] if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", w.text)]
            if names:
                # `read -d '' CMD <<EOF`: the whole body (-d '') or its first line lands in CMD
                whole = any(w.text == "-d" for w in words)
                body = heredoc.text if whole else heredoc.text.split("\n", 1)[0]
                self.bind(names[-1], body.strip("\n") if whole else body, heredoc.known, when, line)
                return
        if head in ("eval",) or (head in ("bash", "sh") and len(words) > 2 and words[1].text == "-c"):
            code = words[1:] if head == "eval" else words[2:3]
            if all(w.known for w in code):
                self.reparse(" ".join(w.text for w in code), line, [*when] if head == "eval" else when, state)
                return
        if head in ("source", "."):
            self.opaque = True
        identity_words = [self.value(w) for w in words]
        launchers, inner = cmdline.split_launchers(identity_words)
        if (
            inner
            and isinstance(inner[0], str)
            and os.path.basename(inner[0]) in ("bash", "sh")
            and len(inner) > 2
            and inner[1] == "-c"
            and isinstance(inner[2], str)
        ):
            # `srun bash -c "python ..."`: read the inner script, launchers and all
            sub = _Reader(self.filename)
            sub.vars = {k: list(v) if isinstance(v, list) else v for k, v in self.vars.items()}
            sub.parser = self.parser
            sub.script(inner[2], line - 1, [], {})
            for key, value in sub.commands.items():
                if isinstance(value, dict):
                    value = {**value, "@launcher": {**launchers, **value.get("@launcher", {})}}
                self.store(key, self.guarded(value, when), line)
            return
        name, arguments = cmdline.program(inner, launchers)
        if name in ("torch.distributed.run", "torch.distributed.launch"):
            # `python -m torch.distributed.run` is torchrun by another name
            more, inner = cmdline.split_launchers(["torchrun", *arguments])
            launchers.update(more)
            name, arguments = cmdline.program(inner, launchers)
        lines = [w.line or line for w in words[len(words) - len(arguments) :]] if arguments else []
        parsed, at = cmdline.parse_arguments(arguments, self.filename, lines)
        data: dict[str, Any] = dict(parsed)
        if launchers:
            data["@launcher"] = launchers
        if prefix:
            data["@env"] = prefix
        for key in ("@stdin", "@stdout", "@stderr"):
            if key in state:
                data[key] = state[key]
        for key, value in state.items():
            if key.startswith("@fd"):
                data[key] = value
        if heredoc is not None and "@stdin" not in data:
            data["@stdin"] = self.value(Field(_strip_lines(heredoc.text), heredoc.known, heredoc.line))
        key = self.store(name, self.guarded(data, when), line)
        for flag, flag_line in at.items():
            self.result.lines[("commands", key, flag)] = flag_line

    def reparse(self, code: str, line: int, when: list[str], state: dict[str, Any]) -> None:
        saved = (self.src, self.offset)
        try:
            self.script(code, line - 1, when, state)
        finally:
            self.src, self.offset = saved

    def guarded(self, data: dict[str, Any], when: list[str]) -> dict[str, Any]:
        return {**data, "@when": " and ".join(when)} if when else data

    def store(self, name: str, data: Any, line: int) -> str:
        key = name
        count = self.counts.get(name, 1)  # remembered per name: a script of n `echo`s stays linear
        while key in self.commands:
            count += 1
            key = f"{name} #{count}"
        self.counts[name] = count
        self.commands[key] = data
        self.result.lines[("commands", key)] = line
        return key

    # words -----------------------------------------------------------------------------------------

    def value(self, field: Field) -> str | NotEvaluated:
        return field.text if field.known else NotEvaluated(_normalise(field.text), self.filename, field.line)

    def expand(self, node: Any, *, assignment: bool = False) -> list[Field]:
        """The words ``node`` expands to; an unquoted expansion splits on blanks (not in assignments)."""
        line = self.line(node)
        kind = node.type
        if kind in ("word", "number"):
            return [Field(unescape_word(self.text(node)), True, line)]
        if kind == "raw_string":
            return [Field(self.text(node)[1:-1], True, line)]
        if kind == "ansi_c_string":
            escaped = self.text(node)[2:-1]
            try:
                return [
                    Field(escaped.encode("latin-1", "backslashreplace").decode("unicode_escape"), True, line)
                ]
            except UnicodeDecodeError:
                return [Field(self.text(node), False, line)]
        if kind == "string":
            quoted = self.text(node)[1:-1]
            whole = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}", quoted)
            if whole:  # "${ARGS[@]}": one word per element
                bound = self.vars.get(whole.group(1))
                if isinstance(bound, list):
                    self.substituted.add(whole.group(1))
                    return [Field(item, not isinstance(item, Partial), line) for item in bound]
            self.note_names(quoted)
            text, known = expand_quoted(quoted, self.vars)
            if not known and "$(" in quoted:
                self.opaque = True
            return [Field(text, known, line)]
        if kind in ("simple_expansion", "expansion"):
            source = self.text(node).strip()
            expr = source[2:-1] if source.startswith("${") else source[1:]
            self.note_names(source)
            value, known = lookup(expr, self.vars, False)
            if value is None:
                return [] if known else [Field(source, False, line)]
            if assignment:
                return [Field(joined(value), known, line)]
            return split_fields(value, line)
        if kind == "concatenation":
            pieces = [self.expand(child, assignment=True) for child in node.named_children]
            glued = "".join(f.text for piece in pieces for f in piece)
            return [Field(glued, all(f.known for piece in pieces for f in piece), line)]
        if kind == "arithmetic_expansion":
            source = self.text(node).strip()
            computed = arithmetic(source[3:-2], self.vars) if source.startswith("$((") else None
            if computed is not None:
                for used in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source):
                    self.substituted.add(used)
                return [Field(computed, True, line)]
            self.opaque = True
            return [Field(source, False, line)]
        if kind == "command_substitution":
            here = self.heredoc_in(node)
            if here is not None:
                return [here] if assignment else split_fields(here.text, line) if here.known else [here]
            self.opaque = True
            return [Field(self.text(node), False, line)]
        self.opaque = True
        return [Field(self.text(node), False, line)]

    def heredoc_in(self, node: Any) -> Field | None:
        """``$(cat <<EOF ... EOF)``: the here-document's body."""
        statements = [c for c in node.named_children if c.type != "comment"]
        if len(statements) != 1 or statements[0].type != "redirected_statement":
            return None
        body = statements[0].child_by_field_name("body")
        if body is None or body.type != "command" or self.text(body).strip() != "cat":
            return None
        for child in statements[0].named_children:
            if child.type == "heredoc_redirect":
                field = self.redirect(child, {})
                if field is not None:
                    return Field(field.text.rstrip("\n"), field.known, field.line)
        return None

    def note_names(self, text: str) -> None:
        for name in re.findall(r"\$\{?#?([A-Za-z_][A-Za-z0-9_]*)", text):
            self.substituted.add(name)


def _plain_read(words: list[Field]) -> bool:
    """``read [-r] [-d ''] NAME...``: the forms whose effect is known; any other option is not read."""
    rest = [w.text for w in words[1:]]
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "-d" and rest and rest[0] == "":
            rest.pop(0)
        elif option not in ("-r", "-s"):
            return False
    return bool(rest) and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) for name in rest)


def _history(history: list[tuple[str, Any, int]]) -> Any:
    """A variable's value when it was assigned once; else every assignment in order (a command run
    between two assignments saw the first, so keeping only the last could hide a change)."""
    if len(history) == 1 and not history[0][0]:
        return history[0][1]
    if all(not when for when, _, _ in history):
        return [value for _, value, _ in history]
    return [{"@value": value, **({"@when": when} if when else {})} for when, value, _ in history]


def _size(value: Any) -> int:
    return sum(len(v) for v in value) if isinstance(value, list) else len(str(value))


def _normalise(text: str) -> str:
    """Layout-free source: line continuations joined, blank runs collapsed, comments dropped."""
    text = text.replace("\\\n", " ")
    lines = [
        re.sub(r"(^|\s)#.*$", "", line) if "#" in line and "'" not in line and '"' not in line else line
        for line in text.split("\n")
    ]
    return re.sub(r"[ \t]+", " ", "\n".join(line.strip() for line in lines if line.strip())).strip()


def _strip_lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))
