"""The tree-sitter walk over a shell script: statements in order, each under the conditions that
guard it (``if``/``case``/loops/functions/``&&``/``||`` become ``@when``), redirections, ``#SBATCH``
directives before the first command, and what the grammar could not read kept as source.
``shellinterp.Reader`` gives the walk its meaning (variables, commands, words)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.launch import sbatch
from sweepgen.readers.launch.slurm_options import given_again
from sweepgen.readers.model import NotEvaluated, ReadResult
from sweepgen.readers.shell import shellheredoc
from sweepgen.readers.shell.shellbinds import bound_names
from sweepgen.readers.shell.shelljoin import joined
from sweepgen.readers.shell.shellrefused import refused
from sweepgen.readers.shell.shellwords import (
    Field,
    Partial,
    Unknown,
    Vars,
    arithmetic_assigned,
    balanced,
    expand_quoted,
)

MAX_DEPTH = 40  # nested `bash -c` / `$CMD` re-reads, and nested function calls
# levels of the syntax tree: the deepest script the reader reads whole is ~2,400 (800 nested
# `$(...)`); past it a pull request's `x="${a:-"${a:-...` or `if ...; then if ...` 20,000 deep held
# `diff` over 100 s (each level looked up from the root) before it ended as nested too deeply
MAX_TREE_DEPTH = 4096
MAX_CALLS = 10_000  # function bodies walked in one read (a call tree can double at each level)
# the words sbatch takes directives after, at the very start of a line (src/sbatch/opt.c)
_DIRECTIVES = ("#SBATCH", "#SLURM")


def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash  # noqa: PLC0415 - lazy: tree-sitter loads only for shell files

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


class Frame:
    """One function body being walked: what each of its ``local`` variables shadowed (bound?,
    value, exported?, declared where the body itself runs rather than under a condition of its own)."""

    def __init__(self, guard: list[str]) -> None:
        self.guard = guard
        self.saved: dict[str, tuple[bool, Any, bool, bool]] = {}
        # `local -`: (allexport then,) given back when the body returns (empty: no `local -`)
        self.options: tuple[bool | None, ...] = ()


class Walk:
    """A script's statements, walked in order; the meaning of each is ``shellinterp.Reader``'s."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.vars: Vars = {}
        self.assignments: dict[str, list[tuple[str, Any, int]]] = {}  # name -> (when, value, line)
        self.exported: set[str] = set()
        self.unexported: set[str] = set()  # exported once, then no longer (`unset`, a `local -x` undone)
        self.inherited: set[str] = set()  # exported by the parent of a `bash -c`: not this shell's
        self.last_program: str | None = None  # the key of the last command an export could matter to
        self.late: dict[str, list[str]] = {}  # exported name -> after which program each value came
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
        # name -> the bodies a call runs (node, source, line offset, the definition's guard): a body
        # is walked where it is called, with the variables of that moment, never where it is defined
        self.functions: dict[str, list[tuple[Any, bytes, int, list[str]]]] = {}
        self.called: set[str] = set()
        self.calls: list[str] = []  # the functions being walked, innermost last
        self.call_count = 0
        self.frames: list[Frame] = []  # the `local` variables of each body being walked
        # read-only names -> True where surely so, False where maybe (made so under a condition)
        self.readonly: dict[str, bool] = {}
        # `declare -i/-l/-u/-c/-n NAME`: NAME's later assignments are arithmetic, recased or
        # written through a name reference (True), which the reader does not follow
        self.transforming: dict[str, bool] = {}
        self.made_readonly: dict[str, list[str]] = {}  # name -> the condition of each `readonly`
        # `shopt -s lastpipe`: a pipeline's last part runs in this shell (None: it may, or may not)
        self.lastpipe: bool | None = False
        # `shopt -s nullglob` or `failglob`: a pattern matching no file is no word (an error), so a
        # bracket (`a=[x,y]`, a Hydra list) is a pattern like `*` (None: it may be on)
        self.nomatch: dict[str, bool | None] = {"nullglob": False, "failglob": False}
        self.allexport: bool | None = False  # `set -a`: every assignment is exported (None: maybe)
        # name -> each definition made under `set -a`: bash exports it (BASH_FUNC_name%% in the
        # environment), so a child bash (`bash -c name`, a script it runs) defines it
        self.exported_functions: dict[str, list[Any]] = {}
        # what the positional parameters are: "" as given (to the script or function), else the
        # `shift` or `set --` that changed them (`shellinterp.Reader.move_positionals`)
        self.argv = ""
        self.argv_changes = 0
        self.loops = 0  # loops being walked: `break` and `continue` leave one
        self.forgets: dict[str, int] = {}  # name -> how many times the script made it unknown
        self.syntax_error: tuple[int, str] | None = None  # the first line bash refuses (shellrefused)
        self.exit_trap: tuple[str, int, list[str]] | None = None  # `trap CODE EXIT`: (CODE, line, guard)
        # the here-documents a misread script was rewritten without, by placeholder (shellheredoc)
        self.heredocs: dict[int, shellheredoc.Heredoc] = {}
        # the last command of a pipeline or list written with redirections after it (`a | b < f`,
        # `a && cat <<EOF`), by its place: those redirections are its own, not every part's
        self.tails: dict[tuple[int, int], dict[str, Any]] = {}

    # what the interpretation provides (shellinterp.Reader) -------------------------------------

    def command(self, node: Any, when: list[str], *rest: Any, **options: Any) -> None:
        raise NotImplementedError  # redirects, heredoc, extra words; redirected=

    def assign(self, node: Any, when: list[str], *, export: bool = False) -> None:
        raise NotImplementedError

    def store(self, name: str, data: Any, line: int) -> str:
        raise NotImplementedError

    def expand(self, node: Any, *, assignment: bool = False) -> list[Field]:
        raise NotImplementedError

    def value(self, field: Field) -> str | NotEvaluated:
        raise NotImplementedError

    # the whole script ------------------------------------------------------------------------------

    def script(self, text: str, line_offset: int, when: list[str], redirects: dict[str, Any]) -> None:
        if self.parser is None:
            # one parser per read, never a module global: no tree-sitter object outlives the read
            # (a global one is torn down at interpreter exit in an order tree-sitter does not promise)
            self.parser = _parser()
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConfigError(
                "shell commands nested too deeply (bash -c / $CMD)", location=Location(self.filename)
            )
        try:
            # a continuation inside a word joins it (`--x\\<newline>1` is `--x1`), as bash reads it
            source = joined(text).encode("utf-8", "surrogateescape")
            tree = self.parser.parse(source)
            if b"<<" in source:
                source, tree = self.heredocs_read(source, tree)
            self.src = source
            self.offset = line_offset
            _refuse_deep(tree.root_node, self.filename, line_offset)
            found = refused(tree.root_node, source)
            nodes = tree.root_node.named_children
            cut = len(nodes) if found is None else _first_refused(nodes, found[0])
            if found is not None and self.syntax_error is None:
                self.syntax_error = (found[0] + 1 + line_offset, found[1])
            self.sequence(nodes[:cut], when, redirects)
            if cut < len(nodes):  # bash stops there: still read, so that an edit there shows
                self.isolated(nodes[cut:], [*when, "never reached (after a syntax error)"], redirects)
        finally:
            self.depth -= 1

    def heredocs_read(self, source: bytes, tree: Any) -> tuple[bytes, Any]:
        """Where the grammar reads a here-document otherwise than bash (two on a line, one before
        `;` or `}`), the script rewritten with each one a placeholder (``shellheredoc``), parsed."""
        raw = source.decode("latin-1")  # one character per byte: the scan's offsets are the grammar's
        found = shellheredoc.scan(raw)
        if not found or "__sweepgen_heredoc_" in raw or not shellheredoc.misread(tree.root_node, raw, found):
            return source, tree
        first = len(self.heredocs)
        self.heredocs.update(enumerate(map(shellheredoc.decoded, found), first))
        source = shellheredoc.rewritten(raw, found, first).encode("latin-1")
        return source, self.parser.parse(source)

    def line(self, node: Any) -> int:
        return int(node.start_point[0]) + 1 + self.offset

    def text(self, node: Any) -> str:
        """A node's source; a here-document the script was rewritten without (``heredocs_read``)
        written back, its body with it, so that what is kept as source keeps the body."""
        raw = self.raw_text(node)
        return shellheredoc.restored(raw, self.heredocs) if self.heredocs else raw

    def raw_text(self, node: Any) -> str:
        return bytes(self.src[node.start_byte : node.end_byte]).decode("utf-8", "surrogateescape")

    def forget(self, name: str) -> None:
        """``name`` is not known from here on; each time the script makes it so is told apart (a
        use after ``read X`` is not one after a second ``read X``, nor the environment's X)."""
        self.forgets[name] = self.forgets.get(name, 0) + 1
        self.vars[name] = Unknown(f"#{self.forgets[name]}")

    def forget_read_in(self, condition: Any) -> None:
        """A loop's head is run, not read as commands: what a builtin in it binds (``while read
        -r L``) is not known in the body or after it."""
        for command in _commands_in(condition):
            names = bound_names([self.text(word) for word in command.named_children])
            for name in names if names is not None else []:
                self.forget(name)

    def read_now(self, node: Any) -> str:
        """A condition (``if``, ``&&``, ``case``, a loop's head) as written, with the values it reads."""
        return self.with_values(self.norm(node))

    def with_values(self, text: str) -> str:
        """``text`` and the value now of each variable it names that the script bound: ``[ $X = 1 ]``
        and ``(( N > 0 ))`` read them when they run, so ``X=1`` and ``X=2`` before the same
        condition are different runs (a value past a few lines is named by its digest)."""
        values = self.named_values(text)
        if not values:
            return text
        return f"{text} where " + ", ".join(f"{name}={value}" for name, value in values.items())

    def named_values(self, text: str) -> dict[str, str]:
        """The value now of each variable ``text`` names that the script bound, by name."""
        names = sorted({name for name in _NAME.findall(text) if name in self.vars})
        return {name: _value_text(self.vars[name]) for name in names}

    def norm(self, node: Any) -> str:
        """Normalised source of a node: comments and layout do not count (a here-document the
        script was rewritten without shown as written, its body with it)."""
        return shellheredoc.restored(normalise(self.raw_text(node)), self.heredocs)

    # statements ------------------------------------------------------------------------------------

    def statement(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:  # noqa: C901, PLR0912 - one branch per tree-sitter statement node type
        kind = node.type
        if kind == "comment":
            self.comment(node)
            return
        if self.tails:
            redirects = {**redirects, **self.tails.pop((node.start_byte, node.end_byte), {})}
        self.seen_command = True  # sbatch reads #SBATCH lines only before the first other line
        if self.src.find(b"LINENO", node.start_byte, node.end_byte) >= 0:  # no copy of the text
            # bash's `$LINENO` is the line running now: a statement moved to another line reads
            # another number (kept not evaluated, by the line it starts on: bash counts a multi-line
            # word's lines its own way), and an assignment to it does not hold
            self.vars["LINENO"] = Partial(f"${{LINENO at line {self.line(node)}}}")
        if _backgrounded(node) and when[-1:] != [BACKGROUND]:
            # `cmd &` runs in a child process, beside what follows (a job script that ends without
            # `wait` ends it): never the same run as `cmd`, and what it binds is gone after it
            self.isolated([node], [*when, BACKGROUND], redirects)
            return
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
        elif kind == "pipeline":
            self.pipeline(node, when, redirects)
        elif kind == "subshell":
            # `( cd x; export A=1 )` changes nothing after it: never the same as `cd x; export A=1`
            self.isolated(node.named_children, [*when, SUBSHELL], redirects)
        elif kind == "compound_statement" and self.text(node).startswith("(("):
            # `(( N++ ))` reads and assigns variables by their bare names: kept as source with the
            # values it reads, and what it assigns is not known after it
            self.keep_opaque(node, when, self.with_values(self.norm(node)))
            for name in arithmetic_assigned(self.text(node)):
                self.forget(name)  # the environment's value too: never read as `$N` after it
        elif kind in ("compound_statement", "do_group"):
            self.sequence(node.named_children, when, redirects)
        elif kind == "negated_command":
            # `! cmd` runs cmd with its status inverted: what `set -e`, `&&` and `$?` see after it
            self.sequence(node.named_children, [*when, NEGATED], redirects)
        elif kind == "if_statement":
            self.if_statement(node, when, redirects)
        elif kind == "case_statement":
            self.case_statement(node, when, redirects)
        elif kind in ("for_statement", "c_style_for_statement", "while_statement"):
            self.loop(node, when, redirects)
        elif kind == "function_definition":
            self.define(node, when)
        elif kind in ("heredoc_body", "heredoc_end", "heredoc_start"):
            return
        else:  # an ERROR node, or a construct this reader does not model: keep its source
            self.keep_opaque(node, when)

    # functions -------------------------------------------------------------------------------------

    def define(self, node: Any, when: list[str]) -> None:
        """``f() { ...; }``: remembered, walked at each call (an unconditional definition replaces
        the earlier ones; a conditional one is one more body the call may run)."""
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if body is None:
            return
        name = self.text(name_node) if name_node is not None else "?"
        entry = (body, self.src, self.offset, list(when))
        self.functions[name] = [*self.functions.get(name, []), entry] if when else [entry]
        self.export_function(name, node, when)

    def export_function(self, name: str, node: Any, when: list[str]) -> None:
        """A definition made under ``set -a`` (or where it may be on): exported, with its condition
        and the program run before it (one run earlier did not see it)."""
        if self.allexport is not False:
            self.record_exported_function(name, self.norm(node), self.line(node), when)

    def export_named_functions(self, names: list[str], line: int, when: list[str]) -> None:
        """``export -f F`` (``declare -fx F``): F as defined now is exported; before a definition
        bash refuses it ("not a function") and exports nothing."""
        for name in names:
            for body, src, _, _ in self.functions.get(name, []):
                text = bytes(src[body.start_byte : body.end_byte]).decode("utf-8", "surrogateescape")
                self.record_exported_function(name, f"{name}() {normalise(text)}", line, when)

    def record_exported_function(self, name: str, source: str, line: int, when: list[str]) -> None:
        """An exported function, under ``env.@functions``: its source, condition and lateness."""
        shown: dict[str, Any] = {"@source": NotEvaluated(source, self.filename, line)}
        if when:
            shown["@when"] = " and ".join(when)
        if self.last_program is not None:
            shown["@late"] = f"after {self.last_program}"
        self.exported_functions.setdefault(name, []).append(shown)

    def call(self, name: str, when: list[str], redirects: dict[str, Any], line: int) -> None:
        """A call of a function the script defined: its body runs here, with the variables bound
        now (a variable set after the definition but before the call is the one it reads)."""
        self.called.add(name)
        self.call_count += 1
        if self.call_count > MAX_CALLS or len(self.calls) >= MAX_DEPTH:
            raise ConfigError(
                f"shell function calls nested or repeated too much to read (`{name}`)",
                location=Location(self.filename, line),
            )
        if name in self.calls:  # recursion: what it does depends on a condition this reader cannot know
            self.opaque = True
            return
        saved = (self.src, self.offset)
        saved_argv, self.argv = self.argv, ""  # a body reads the call's own arguments
        # bash counts loops per function: a `break` in the body never leaves the caller's loop
        # ("only meaningful in a loop"), the body goes on after it
        saved_loops, self.loops = self.loops, 0
        self.calls.append(name)
        try:
            for body, src, offset, defined in self.functions[name]:
                self.src, self.offset = src, offset
                guard = [*when, *defined, f"function {name}"]
                self.frames.append(Frame(guard))
                try:
                    self.function_body(body, guard, redirects)
                finally:
                    self.unwind(self.frames.pop())
        finally:
            self.calls.pop()
            self.src, self.offset = saved
            self.argv = saved_argv
            self.loops = saved_loops

    def function_body(self, body: Any, guard: list[str], redirects: dict[str, Any]) -> None:
        """A function's body run at a call, with the redirections written after it; where it
        records no command (``f() { x=1; } > log``) they show as a bare one's: bash performs them."""
        recorded = len(self.commands)
        state = self.definition_redirects(body, redirects)
        self.block(body, guard, state)
        if len(self.commands) == recorded and _written_redirects(body):
            self.bare_redirection(body.parent, guard, state, None)

    def unwind(self, frame: Frame) -> None:
        """A body returns: bash gives back what each ``local`` shadowed. A ``local`` the body ran
        under a condition of its own may not have run, so that variable is not known after. After
        ``local -`` the options are given back too (made maybe, where it sat under a condition)."""
        if frame.options:
            (self.allexport,) = frame.options
        for name, (had, value, exported, sure) in frame.saved.items():
            if not sure:
                self.forget(name)
                continue
            if had:
                self.vars[name] = value
            else:
                self.vars.pop(name, None)
            if exported:
                self.exported.add(name)
            else:
                self.unexported.update(self.exported & {name})
                self.exported.discard(name)

    def uncalled(self) -> None:
        """Functions the script defines but never calls: walked after the script, so that an edit
        inside one still shows, under ``never called and function NAME``: a call before the
        definition is "command not found" to bash, never the run that calling it later is."""
        for name in list(self.functions):
            if name not in self.called:
                self.call(name, ["never called"], {}, 0)

    def keep_opaque(self, node: Any, when: list[str], source: str | None = None) -> None:
        self.opaque = True
        # what it reads, it reads now: the values of the variables it names go with its source
        source = self.with_values(self.norm(node)) if source is None else source
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

    def isolated(self, nodes: list[Any], when: list[str], redirects: dict[str, Any]) -> None:
        """A statement bash runs in a child process (``( ... )``, each part of a pipeline): what it
        binds, exports, defines or sets (``set -a``, ``shopt``, a ``trap``) is gone after it; its
        commands and assignments are recorded."""
        saved = (
            {k: list(v) if isinstance(v, list) else v for k, v in self.vars.items()},
            set(self.exported),
            dict(self.functions),
            (dict(self.readonly), self.lastpipe, self.allexport, self.argv, self.exit_trap),
        )
        try:
            self.sequence(nodes, when, redirects)
        finally:
            # what it exported is not exported here; its values still show, as once exported ones
            self.unexported |= self.exported - saved[1]
            self.vars, self.exported, self.functions = saved[0], saved[1], saved[2]
            self.readonly, self.lastpipe, self.allexport, self.argv, self.exit_trap = saved[3]

    def sequence(self, nodes: list[Any], when: list[str], redirects: dict[str, Any]) -> None:
        """Statements in order. After a ``return``, ``exit``, ``break`` or ``continue`` that runs
        whenever the list does, the rest never runs: walked (so that an edit there still shows) in a
        copy of the state, under ``never reached (after return)``, binding nothing."""
        for index, node in enumerate(nodes):
            self.statement(node, when, redirects)
            word = self.flow(node)
            if word is not None and index + 1 < len(nodes):
                self.isolated(nodes[index + 1 :], [*when, f"never reached (after {word})"], redirects)
                return

    def flow(self, node: Any) -> str | None:
        """The builtin that leaves the list here (``return`` in a function body, ``break`` or
        ``continue`` in a loop, ``exit``, ``exec`` of a program), when ``node`` is one on its own;
        else None."""
        name = node.child_by_field_name("name") if node.type == "command" else None
        word = self.text(name) if name is not None else ""
        leaves = {
            "exit": True,
            "return": bool(self.frames),
            "break": bool(self.loops),
            "continue": bool(self.loops),
            # `exec python t.py` replaces the shell; `exec > log` only redirects it
            "exec": node.child_by_field_name("argument") is not None,
        }
        return word if leaves.get(word) else None

    def pipeline(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        """``a | b``: each part runs in a child process, except the last under ``shopt -s lastpipe``
        (a script has no job control), which binds in this shell: ``echo 2 | read X`` sets X.
        ``a |& b`` is ``a 2>&1 | b``: a's standard error goes down the pipe too."""
        parts = node.named_children
        for index, part in enumerate(parts):
            both = part.next_sibling is not None and part.next_sibling.type == "|&"
            # each part's output goes down the pipe, and the next reads it: `a | b` is never `a; b`
            # (a part's own redirections, applied after, win, as bash performs them)
            state = {**redirects, **({"@stdin": "pipe"} if index else {})}
            if index < len(parts) - 1:
                state["@stdout"] = "pipe"
            if both:
                state["@stderr"] = state["@stdout"]
            if index < len(parts) - 1 or self.lastpipe is False:
                self.isolated([part], when, state)
            else:  # where lastpipe may be set, what the last part binds is not known after it
                self.statement(part, when if self.lastpipe else [*when, "if shopt lastpipe"], state)

    def block(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        if node.type == "subshell":
            self.isolated(node.named_children, [*when, SUBSHELL], redirects)
        elif node.type in ("compound_statement", "do_group"):
            self.sequence(node.named_children, when, redirects)
        else:
            self.statement(node, when, redirects)

    def comment(self, node: Any) -> None:
        text = self.text(node)
        # sbatch stops reading directives at the first command, and takes one only at the very
        # start of a line: an indented one is a comment
        magic = None if self.seen_command or node.start_point[1] != 0 else _directive_magic(text)
        if magic is None:
            return
        flags = _directive_flags(text[len(magic) :], "" if magic == "#SBATCH" else "#SLURM ")
        if flags is None:
            self.sbatch[f"(line {self.line(node)})"] = NotEvaluated(text, self.filename, self.line(node))
            return
        for key, value in flags.items():
            self.result.lines[("sbatch", key)] = self.line(node)
            self.sbatch[key] = value if key not in self.sbatch else given_again(key, self.sbatch[key], value)

    def and_or(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        children = node.children
        left = children[0]
        self.statement(left, when, redirects)
        condition = self.read_now(left)
        for op, right in zip(children[1::2], children[2::2]):
            guard = condition if op.type == "&&" else f"! ({condition})"
            self.statement(right, [*when, guard], redirects)
            condition = f"{condition} {op.type} {self.read_now(right)}"

    def if_statement(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:  # noqa: C901 - walks if/elif/else clauses as bash evaluates them
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
                (current.append(self.read_now(child)) if in_condition else body.append(child))
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
                        (cond.append(self.read_now(part)) if in_condition else sub.append(part))
                text = "; ".join(cond)
                clauses.append(([*when, *negated, text], sub))
                negated.append(f"! ({text})")
            elif child.type == "else_clause":
                sub = [part for part in child.named_children if part.type != "comment"]
                clauses.append(([*when, *negated], sub))
        for guard, statements in clauses:
            self.sequence(statements, guard, redirects)

    def case_statement(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        value = node.child_by_field_name("value")
        subject = self.read_now(value) if value is not None else "?"
        before = ""  # the clauses before, with their terminators, once one is not `;;`
        for item in node.named_children:
            if item.type == "case_item":
                before = self.case_item(item, subject, before, when, redirects)

    def case_item(
        self, item: Any, subject: str, before: str, when: list[str], redirects: dict[str, Any]
    ) -> str:
        """One clause of a ``case``: its statements, under the guard its patterns spell. After a
        ``;&`` (run the next clause too) or ``;;&`` (test the next patterns too) the clauses
        before it decide whether this one runs: they are part of its guard. Returns ``before``
        for the next clause."""
        patterns = "|".join(self.read_now(c) for c in item.children_by_field_name("value"))
        guard = f"case {subject} in {before}{patterns}"
        body = [c for i, c in enumerate(item.children) if c.is_named and not _case_pattern(item, i, c)]
        self.sequence(body, [*when, guard], redirects)
        end = _terminator(item)
        return f"{before}{patterns}) {end} " if before or end != ";;" else ""

    def loop(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        body = node.child_by_field_name("body")
        head = self.text(node)[: (body.start_byte - node.start_byte) if body is not None else None]
        guard = _with_stdin(self.with_values(normalise(head).rstrip("; ")), redirects.get("@stdin"))
        variable = node.child_by_field_name("variable")
        if variable is not None:
            self.forget(self.text(variable))
        self.forget_read_in(node.child_by_field_name("condition"))
        if body is not None:
            self.loops += 1
            try:
                self.block(body, [*when, guard], redirects)
            finally:
                self.loops -= 1

    # redirections ----------------------------------------------------------------------------------

    def redirected(self, node: Any, when: list[str], redirects: dict[str, Any]) -> None:
        body = node.child_by_field_name("body")
        state = dict(redirects)
        # bash performs a command's redirections left to right: the grammar hangs the first ones
        # (`python t.py <<<x`) on the command and the rest (`<<EOF`, `< f`) on the statement
        inner = self.inner_redirections(body, state)
        heredoc = self.redirections(node, body, state, inner)
        if body is None:
            self.bare_redirection(node, when, state, heredoc)
            return
        extra = self.words_among_redirects(node, body)
        if extra is None:
            self.keep_opaque(node, when)  # words the grammar left out, which bash reads: as source
            return
        if body.type == "command":
            self.command(body, when, state, heredoc, extra, redirected=inner is not _NONE)
            return
        if extra:
            self.keep_opaque(node, when)
            return
        if body.type == "declaration_command":
            self.command(body, when, state, heredoc)
            return
        if body.type in ("pipeline", "list"):
            self.redirected_tail(node, body, when, redirects)
            return
        if heredoc is not None:  # `while read x; do ...; done <<EOF`: every command inside reads it
            state["@stdin"] = self.value(Field(heredoc.text, heredoc.known, heredoc.line))
        recorded = len(self.commands)
        self.statement(body, when, opened_once(redirects, state))
        if len(self.commands) == recorded:
            # `{ x=1; } > log`, `for ...; do x=$i; done > log`: no command inside, but bash performs
            # the redirections all the same (the file created or emptied), as for a bare one
            self.bare_redirection(node, when, state, None)

    def bare_redirection(self, node: Any, when: list[str], state: dict[str, Any], heredoc: Any) -> None:
        """``> log`` (or ``< in``) with no command: bash performs the redirections all the same, the
        file created or emptied (a missing ``in`` an error), as for ``: > log``, so it is kept as
        that command (it read as nothing: "no differences" against a script without it)."""
        data = {k: v for k, v in state.items() if k in _SHOWN or k.startswith("@fd")}
        if heredoc is not None and "@stdin" not in data:
            data["@stdin"] = self.value(Field(heredoc.text, heredoc.known, heredoc.line))
        if data:
            self.store(":", {**data, "@when": " and ".join(when)} if when else data, self.line(node))

    def redirected_tail(self, node: Any, body: Any, when: list[str], redirects: dict[str, Any]) -> None:
        """``a | b < f``, ``a && cat <<EOF``: the grammar hangs the redirections on the pipeline or
        list, bash gives them to its last command only."""
        own: dict[str, Any] = {}
        heredoc = self.redirections(node, body, own)
        if heredoc is not None:
            own["@stdin"] = self.value(Field(heredoc.text, heredoc.known, heredoc.line))
        last = body
        while last.type in ("pipeline", "list") and last.named_children:
            last = last.named_children[-1]
        self.tails[(last.start_byte, last.end_byte)] = own
        self.statement(body, when, redirects)

    def words_among_redirects(self, node: Any, body: Any) -> tuple[Any, ...] | None:
        """The command's words written among its redirections, in order. The grammar reads `cmd >
        log --lr 1` as a redirection to three words (bash redirects to `log` and passes `--lr 1` to
        cmd; after a compound command they are a syntax error), and leaves out a lone `-` before a
        redirection (`python - <<EOF`, `kubectl apply -f - <<EOF`): each `-` is a word, and other
        text left out, or a here-document delimiter it cut (`<<'EOF'1`), makes the statement
        unread (None)."""
        extra: list[Any] = []
        at = body.end_byte
        for child in node.children:
            if child.start_byte < at or not child.is_named:
                continue
            gap = bytes(self.src[at : child.start_byte]).decode("utf-8", "surrogateescape")
            words = gap.replace("\\\n", " ").split()
            if any(word != "-" for word in words) or _delimiter_cut(child):
                return None
            extra += [Field("-", True, self.line(child)) for _ in words]
            if child.type == "file_redirect":
                extra += _targets(child)[1:]
            at = child.end_byte
        return tuple(extra)

    def definition_redirects(self, body: Any, redirects: dict[str, Any]) -> dict[str, Any]:
        """The redirections written after a function's body (``f() { ...; } > log``): bash
        performs them, expanded anew, at every call."""
        state = dict(redirects)
        heredoc = None
        for child in _written_redirects(body):
            heredoc = self.redirect(child, state) or heredoc
        self.settle_heredocs(state)
        if heredoc is not None:
            state["@stdin"] = self.value(Field(heredoc.text, heredoc.known, heredoc.line))
        return opened_once(redirects, state)

    def inner_redirections(self, body: Any, state: dict[str, Any]) -> Any:
        """Apply the redirections written inside a command the statement redirects further
        (``python t.py <<<x <<EOF``) to ``state``: the body of its last here-document, None, or
        ``_NONE`` where the command holds none (or the statement is no command)."""
        if body is None or body.type != "command":
            return _NONE
        own = [child for child in body.children if child.type in REDIRECTS]
        if not own:
            return _NONE
        heredoc: Field | None = None
        for child in own:
            heredoc = self.own_heredoc(child, state) or heredoc
        return heredoc

    def redirections(self, node: Any, body: Any, state: dict[str, Any], heredoc: Any = None) -> Field | None:
        """Apply a redirected statement's redirections (every named child but its body) to ``state``,
        after those of ``heredoc`` (an ``inner_redirections`` result); the body of its last
        here-document, if any."""
        found: Field | None = None if heredoc is _NONE else heredoc
        for child in node.children:
            if child is not body and child.is_named:
                found = self.own_heredoc(child, state) or found
        self.settle_heredocs(state)
        return found

    def settle_heredocs(self, state: dict[str, Any]) -> None:
        """The redirections read: the last here-document is the command's stdin, not replaced."""
        state.pop(_EXPANDING, None)

    def own_heredoc(self, node: Any, state: dict[str, Any]) -> Field | None:
        """Apply one redirection; a here-document replaces the stdin written before it (a pipe's,
        a loop's, a here-string's, a file's), and a later ``< f`` or ``<<<`` replaces it in turn."""
        return self.redirect(node, state)

    def heredoc_redirect(self, node: Any, state: dict[str, Any]) -> Field | None:
        """``<<EOF``: its expanded body, the command's stdin until a later redirection replaces it;
        the redirections the grammar hangs on it (``cat <<EOF < f``) are written after it."""
        raw, quoted = self.heredoc_raw(node)
        text, known = (raw, True) if quoted else self.heredoc_text(raw)
        if not known:
            self.opaque = True
        found = self.heredoc_read(Field(text, known, self.line(node)), not quoted and _expands(raw), state)
        found = self.stdin_heredoc(found, state)
        for child in node.children:
            if child.is_named and child.type in REDIRECTS:
                found = self.redirect(child, state) or found
        return found

    def heredoc_raw(self, node: Any) -> tuple[str, bool]:
        """A here-document's body as written (``<<-`` strips its tabs), and whether its delimiter is
        quoted: any quoting (`'EOF'`, `E\\OF`, `E"O"F`) leaves the body as written."""
        body, start = _child(node, "heredoc_body"), _child(node, "heredoc_start")
        raw = self.body_text(body, start) if body is not None else ""
        if _child(node, "<<-") is not None:
            raw = "\n".join(line.lstrip("\t") for line in raw.split("\n"))
        return raw, start is not None and _quoted(self.text(start))

    def stdin_heredoc(self, found: Field, state: dict[str, Any]) -> Field:
        """A here-document is the command's stdin now: what was (a file bash opened, a here-string
        holding an expansion) is kept under ``@stdin-replaced``, plain text dropped."""
        self.keep_replaced(state, state.pop("@stdin", None))
        return found

    def replace_stdin(self, state: dict[str, Any], stdin: Any) -> None:
        """``< f`` or ``<<<word``: the command's stdin now; what it replaces that bash performed
        (a file opened, an expansion, a here-document's expansion) is kept under ``@stdin-replaced``."""
        self.keep_replaced(state, state.pop("@stdin", None))
        expanding = state.pop(_EXPANDING, None)
        if expanding is not None:
            state[REPLACED] = [*state.get(REPLACED, []), expanding]
        state["@stdin"] = stdin

    def keep_replaced(self, state: dict[str, Any], replaced: Any) -> None:
        if _performed(replaced):
            # bash opened the file all the same (a missing one fails the command), and expanded
            # the here-string (a `$(cmd)` there ran): its plain text is what no one reads
            state[REPLACED] = [*state.get(REPLACED, []), replaced]

    def heredoc_text(self, raw: str) -> tuple[str, bool]:
        """An unquoted here-document's body, expanded (``shellinterp.Reader`` knows IFS)."""
        return expand_quoted(raw, self.vars, heredoc=True)

    def body_text(self, body: Any, start: Any) -> str:
        """A here-document's body as bash reads it. The grammar starts the body node at the first
        line's first non-blank character: the blanks and blank lines before it are put back (from
        the line after the one holding ``<<EOF``, or, for a second here-document on that line,
        the blanks before the node)."""
        begin = body.start_byte
        line_end = self.src.find(b"\n", start.end_byte) if start is not None else -1
        before = bytes(self.src[line_end + 1 : begin]) if 0 <= line_end < begin else b"x"
        if before.strip(b" \t\n") == b"":
            begin = line_end + 1
        else:
            while begin > 0 and self.src[begin - 1 : begin] in (b" ", b"\t"):
                begin -= 1
        return bytes(self.src[begin : body.end_byte]).decode("utf-8", "surrogateescape")

    def placeholder(self, node: Any) -> shellheredoc.Heredoc | None:
        """The here-document a ``<<<`` placeholder stands for (``heredocs_read``), if it is one."""
        if not self.heredocs:
            return None
        words = [c for c in node.named_children if not c.type.endswith("redirect")]
        number = shellheredoc.placeholder_number(self.raw_text(words[0])) if len(words) == 1 else None
        return self.heredocs.get(number) if number is not None else None

    def heredoc_field(self, here: shellheredoc.Heredoc, node: Any) -> Field:
        """A here-document's body as the command reads it: as written where its delimiter is
        quoted, else expanded."""
        text, known = (here.body, True) if here.quoted else self.heredoc_text(here.body)
        if not known:
            self.opaque = True
        return Field(text, known, self.line(node))

    def heredoc_read(self, field: Field, expands: bool, state: dict[str, Any]) -> Field:
        """A here-document given to a command: one written before it is not the command's stdin,
        but bash expanded it all the same, so one holding an expansion (`$(cmd)` runs, `${X:=1}`
        assigns for the next one) is kept, as bash expanded it, under ``@stdin-replaced``."""
        replaced = state.pop(_EXPANDING, None)
        if replaced is not None:
            state[REPLACED] = [*state.get(REPLACED, []), replaced]
        if expands:
            state[_EXPANDING] = self.value(field)
        return field

    def redirect(self, node: Any, state: dict[str, Any]) -> Field | None:  # radon: exempt - a branch a form
        """Apply one redirection to ``state``; a here-document's expanded body is returned."""
        if node.type == "heredoc_redirect":
            return self.heredoc_redirect(node, state)
        if node.type == "herestring_redirect":
            here = self.placeholder(node)
            if here is not None:
                field = self.heredoc_field(here, node)
                return self.stdin_heredoc(
                    self.heredoc_read(field, not here.quoted and _expands(here.body), state), state
                )
            words = [f for c in node.named_children for f in self.expand(c)]
            self.replace_stdin(
                state, self.value(Field(" ".join(f.text for f in words), all(f.known for f in words)))
            )
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
            _output(state, "@stdout", f"{mode} {target}")
            _output(state, "@stderr", f"{mode} {target}")
        elif op in (">&", "<&"):
            source = fd if fd is not None else (1 if op == ">&" else 0)
            if target.isdigit():
                copied = state.get(
                    names.get(int(target), f"@fd{target}"),
                    {0: "stdin", 1: "stdout", 2: "stderr"}.get(int(target), target),
                )
                _output(state, names.get(source, f"@fd{source}"), copied)
            else:
                _output(state, names.get(source, f"@fd{source}"), f"{op} {target}")
        elif op in ("<", "<>") and fd in (None, 0):
            self.replace_stdin(state, f"< {target}")
        elif op in ("<", "<>"):
            state[names.get(fd or 0, f"@fd{fd}")] = f"< {target}"
        else:  # >, >>, >|
            mode = ">>" if op == ">>" else ">"
            _output(state, names.get(fd if fd is not None else 1, f"@fd{fd}"), f"{mode} {target}")
        return None


REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_NONE: Any = object()  # no redirection written inside the command
REPLACED = "@stdin-replaced"  # what bash performed for stdin before a later here-document replaced it
_EXPANDING = "@heredoc-expanding"  # a here-document with an expansion, until a later one replaces it


OPENED = "@opened"  # files bash opened for output (created, or emptied) that a later redirection replaced
_SHOWN = ("@stdin", "@stdout", "@stderr", REPLACED, OPENED)  # what a command's record shows of them


# (private to the walk, never in a record) what a compound statement's redirections opened (`{ ...;
# } > log`): bash opens each once, for the whole group, so it is shown once, under the first command
# inside that shows it; each cell is [shown, what]
GROUP_OPENED = "(group opened)"  # output key -> its cell: a command inside replacing it opened it
ONCE = "(opened once)"  # cells of files the group's own later redirections replaced (`> a > b`)


def opened_once(outer: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """``state``, the redirections a compound statement made applied to ``outer``, for the
    commands inside: each output it redirected marked as opened once for them all, and the files
    its own redirections replaced (``{ ...; } > a > b``) shown once rather than by each."""
    made = {
        key: [False, value]
        for key, value in state.items()
        if (key in ("@stdout", "@stderr") or key.startswith("@fd"))
        and isinstance(value, str)
        and value.startswith(">")
        and outer.get(key) is not value
    }
    out = dict(state)
    if made:
        out[GROUP_OPENED] = {**state.get(GROUP_OPENED, {}), **made}
    new = state.get(OPENED, [])[len(outer.get(OPENED, [])) :]
    if new:
        out[ONCE] = [*state.get(ONCE, []), [False, new]]
        out[OPENED] = outer.get(OPENED, [])
        if not out[OPENED]:
            del out[OPENED]
    return out


def _output(state: dict[str, Any], key: str, value: Any) -> None:
    """``key`` (``@stdout``, ``@fd3``...) goes to ``value`` now; a file an earlier redirection opened
    for it (``python t.py > a > b`` creates or empties ``a``) is kept under ``@opened``; one a
    compound statement around opened (``{ python t.py > a; } > log``) only the first time a
    command inside replaces it: bash opened it once."""
    before = state.get(key)
    cell = state.get(GROUP_OPENED, {}).get(key)
    opened = isinstance(before, str) and before.startswith(">") and before != value
    if opened and _first_showing(cell, before):
        state[OPENED] = [*state.get(OPENED, []), before]
    if cell is not None:
        state[GROUP_OPENED] = {k: v for k, v in state[GROUP_OPENED].items() if k != key}
    state[key] = value


def _first_showing(cell: list[Any] | None, before: Any) -> bool:
    """Whether an output opened before (``before``) shows here: always where this command opened
    it, only the first time where a compound statement around did (its ``cell``, then marked)."""
    if cell is None or cell[1] is not before:
        return True
    shown, cell[0] = cell[0], True
    return not shown


def _child(node: Any, kind: str) -> Any:
    return next((c for c in node.children if c.type == kind), None)


def _quoted(delimiter: str) -> bool:
    return any(mark in delimiter for mark in "'\"\\")


def _performed(stdin: Any) -> bool:
    """Whether a stdin a later redirection replaced did something: a file bash opened, a here-string
    holding an expansion not evaluated (a `$(cmd)` there ran)."""
    return isinstance(stdin, NotEvaluated) or (isinstance(stdin, str) and stdin.startswith("< "))


def _expands(body: str) -> bool:
    """Whether an unquoted here-document's body holds an expansion bash performs."""
    return "$" in body or "`" in body


def _written_redirects(body: Any) -> list[Any]:
    """The redirections of a function's definition: after its body, and those the grammar hangs
    on a statement around it (a here-document)."""
    definition = body.parent
    if definition is None or definition.type != "function_definition":
        return []
    around = definition.parent
    nodes = [*definition.children, *(around.children if around.type == "redirected_statement" else [])]
    return [node for node in nodes if node.type.endswith("redirect")]


def _terminator(item: Any) -> str:
    """How a case clause ends: ``;;``, ``;&`` (run the next clause too) or ``;;&`` (test on)."""
    ends = [child.type for child in item.children if child.type in (";;", ";&", ";;&")]
    return ends[-1] if ends else ";;"


def _case_pattern(item: Any, index: int, child: Any) -> bool:
    """A pattern of a case item (its ``value`` field), not a statement of its body."""
    kinds = ("word", "extglob_pattern", "concatenation", "string", "raw_string")
    return child.type in kinds and item.field_name_for_child(index) == "value"


def normalise(text: str) -> str:
    """Layout-free source: outside quotes, line continuations joined, blank runs collapsed and
    comments dropped; inside quotes every character is kept (`'a  b'` is not `'a b'`)."""
    out: list[str] = []
    pending = ""  # the blank (" " or "\n") owed before the next character kept
    i, n = 0, len(text)
    while i < n:
        skipped = _layout(text, i, pending, not out)
        if skipped is not None:
            i, pending = skipped
            continue
        piece = text[i : _token_end(text, i)]
        if pending and out:
            out.append(pending)
        pending = ""
        out.append(piece)
        i += len(piece)
    return "".join(out)


def _layout(text: str, i: int, pending: str, at_start: bool) -> tuple[int, str] | None:
    """Outside quotes, what layout starts at ``i`` (a line continuation, blanks, a comment): the
    index past it and the blank owed for it; None when ``i`` starts a character that is kept."""
    skip = _LAYOUT.get(text[i])
    return skip(text, i, pending, at_start) if skip is not None else None


def _continuation(text: str, i: int, pending: str, at_start: bool) -> tuple[int, str] | None:
    """A backslash-newline: joined, owing a blank (a newline already owed stays owed)."""
    return (i + 2, pending or " ") if text[i + 1 : i + 2] == "\n" else None


def _blank(text: str, i: int, pending: str, at_start: bool) -> tuple[int, str] | None:
    """A blank: a run of them owes one, a newline when the run holds one."""
    return i + 1, "\n" if text[i] == "\n" or pending == "\n" else " "


def _comment(text: str, i: int, pending: str, at_start: bool) -> tuple[int, str] | None:
    """A ``#`` that starts a word (at the start, or after a blank) starts a comment, up to the newline."""
    if not (at_start or pending):
        return None
    end = text.find("\n", i)
    return (len(text) if end < 0 else end), pending


_LAYOUT: dict[str, Callable[[str, int, str, bool], tuple[int, str] | None]] = {
    "\\": _continuation,
    " ": _blank,
    "\t": _blank,
    "\n": _blank,
    "#": _comment,
}


def _token_end(text: str, i: int) -> int:
    """Past a quoted string starting at ``i`` (kept whole), an escaped character, or one character."""
    quote = text[i]
    if quote == "\\":
        return min(i + 2, len(text))
    if quote not in "'\"":
        return i + 1
    return _quoted_end(text, i)


def _quoted_end(text: str, i: int) -> int:
    """Past the quote that closes the one at ``i`` (a backslash escapes one inside double quotes)."""
    quote = text[i]
    j = i + 1
    while j < len(text) and text[j] != quote:
        j += 2 if quote == '"' and text[j] == "\\" else 1
    return min(j + 1, len(text))


def normalise_value(text: str) -> str:
    """An expanded word kept as source: the command substitutions in it are code, whose layout
    does not count (``normalise``); every other character is the value itself, blanks and ``#``
    included (``"a  $1"`` is not ``"a $1"``)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        end = _substitution_end(text, i)
        if end is not None:
            out.append(normalise(text[i:end]))
        else:
            end = i + 2 if text[i] == "\\" else i + 1  # an escaped character, or one character
            out.append(text[i:end])
        i = end
    return "".join(out)


def _substitution_end(text: str, i: int) -> int | None:
    """Past a command substitution (``$(...)`` or backquoted) starting at ``i``; None when none does."""
    if text.startswith("$(", i):
        return balanced(text, i + 1, "(", ")")
    if text[i] == "`":
        end = text.find("`", i + 1)
        return len(text) if end < 0 else end + 1
    return None


def _directive_magic(text: str) -> str | None:
    return next((m for m in _DIRECTIVES if text.startswith(m)), None)


def _directive_flags(text: str, prefix: str) -> dict[str, Any] | None:
    """A directive line's options, each key after ``prefix``; None where the line is kept as its
    text: sbatch refuses it, or its last option takes its value from the next line (so moving a
    line would move the value). Slurm reads `#SLURM` lines as `#SBATCH` ones (with a warning to
    change them): their keys are kept apart, so a release that ignores them is not told the two
    spellings are one."""
    try:
        words = sbatch.directive_words(text)
    except ValueError:
        return None
    if sbatch.waits_for_value(words):
        return None
    return {prefix + key: value for key, value in sbatch.read_directive(words).items()}


BACKGROUND = "in the background (&)"
SUBSHELL = "in a subshell ( )"
NEGATED = "its status negated (!)"
# where a statement runs, not whether: inside them a variable is bound as surely as outside
_WHERE = frozenset((BACKGROUND, SUBSHELL))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _value_text(value: Any) -> str:
    """A variable's value in a condition's guard: the text, an array in parentheses, ``?`` when not
    known; a long one by its digest, so that a guard stays short whatever the variable holds."""
    if isinstance(value, Unknown):
        return f"?{value.tag}"
    text = "(" + " ".join(value) + ")" if isinstance(value, list) else str(value)
    if len(text) <= 200:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"<{len(text)} characters, sha256 {digest}>"


def _with_stdin(guard: str, stdin: Any) -> str:
    """A loop's guard with the input its head reads (``while read L ... done <<< "$X"``)."""
    if stdin is None:
        return guard
    return f"{guard} (stdin: {stdin.source if isinstance(stdin, NotEvaluated) else stdin})"


def _commands_in(node: Any) -> list[Any]:
    """The ``command`` nodes at or below ``node`` (none for None)."""
    if node is None:
        return []
    found = [node] if node.type == "command" else []
    return found + [c for child in node.named_children for c in _commands_in(child)]


def _delimiter_cut(redirect: Any) -> bool:
    """Does a here-document's redirection hold more than the grammar lets the reader see: a
    delimiter cut short (`<<'EOF'1` is the delimiter `EOF1` to bash, which then reads the rest of the
    script as the body), or the rest of its line (`cat <<EOF | python t.py`, `<<EOF 2>&1 --x 1`:
    a pipeline, a list or a command's words the grammar puts inside it)?"""
    if redirect.type != "heredoc_redirect":
        return False
    return any(
        child.is_named
        and child.type not in ("heredoc_start", "heredoc_body", "heredoc_end")
        and not (child.type == "file_redirect" and len(_targets(child)) == 1)
        for child in redirect.children
    )


def _targets(redirect: Any) -> list[Any]:
    """The words the grammar gives a file redirection as its destination (one, to bash)."""
    return [
        child
        for index, child in enumerate(redirect.children)
        if redirect.field_name_for_child(index) == "destination"
    ]


def conditional(when: list[str]) -> bool:
    """Does ``when`` hold a condition (an ``if``, a loop, a function body), not only a place?"""
    return any(part not in _WHERE for part in when)


def _backgrounded(node: Any) -> bool:
    """Is this statement followed by ``&`` (run asynchronously)?"""
    after = node.next_sibling
    return after is not None and after.type == "&"


def _first_refused(nodes: list[Any], row: int) -> int:
    """The index of the first statement bash never runs when it refuses line ``row`` (0-based):
    the one holding that line, or the first of the statements that share a line with it (bash
    parses a whole line, with what it continues, before running any of it)."""
    index = next((i for i, node in enumerate(nodes) if node.end_point[0] >= row), len(nodes))
    while 0 < index < len(nodes) and nodes[index - 1].end_point[0] == nodes[index].start_point[0]:
        index -= 1
    return index


def _refuse_deep(root: Any, filename: str, line_offset: int) -> None:
    """A ConfigError where the tree is more than MAX_TREE_DEPTH levels deep, at the line where it
    goes past them; found in one walk of the tree (a cursor, no recursion)."""
    cursor, depth = root.walk(), 0
    while True:
        if cursor.goto_first_child():
            depth += 1
            if depth > MAX_TREE_DEPTH:
                raise ConfigError(
                    f"shell script nested too deeply to read (more than {MAX_TREE_DEPTH:,} levels)",
                    location=Location(filename, cursor.node.start_point[0] + 1 + line_offset),
                    hint="bash reads it, but no script written by hand nests so: split it into functions",
                )
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return
            depth -= 1
