"""What a shell script's statements mean: variables (tracked in order, partly known values carrying
their definition's source, arrays of flags as flag mappings, appends), commands (launchers peeled,
flags and overrides nested by ``cmdline``), and word expansion (``shellwords``)."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Iterator
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.launch import cmdline
from sweepgen.readers.model import NotEvaluated, ReadResult
from sweepgen.readers.shell.shellbinds import ANY, bound_names
from sweepgen.readers.shell.shellsource import sourced_file
from sweepgen.readers.shell.shellvalues import POSITIONAL, mark_references
from sweepgen.readers.shell.shellwalk import (
    GROUP_OPENED,
    ONCE,
    OPENED,
    REDIRECTS,
    Walk,
    conditional,
    normalise_value,
)
from sweepgen.readers.shell.shellwalk import REPLACED as _REPLACED
from sweepgen.readers.shell.shellwords import (
    GLOB,
    Field,
    Partial,
    Unknown,
    ansi_c,
    arithmetic,
    arithmetic_assigned,
    escape_literal,
    expand_quoted,
    joined,
    lookup,
    partial,
    quoted,
    split_fields,
    unescape_word,
)

_MAX_VALUE = 1_000_000  # characters a variable may hold
_STAR_JOIN = re.compile(r"\$\{?[!#]?\*|\[\*\]")  # $*, ${*}, ${A[*]}, ${!A[*]}: words joined by IFS
# `${A[@]...}`, `${!A[@]}` (per element, in quotes too), `${!prefix@}` (names): name, a slice's `:`, `@`
_AT_WORDS = re.compile(r"\$\{!?([A-Za-z_][A-Za-z0-9_]*)(?:\[@\](:?)|(@)\})")
_SCOPING = ("local", "declare", "typeset")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPLIT_EXPANSIONS = ("simple_expansion", "expansion")
_SPLITS = re.compile(r"[ \t\n*?\[]")  # bash's default IFS, and what starts a pattern
_TRANSFORMING = set("ilucn")  # declare's letters that change every later assignment
_ASSIGNING = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")  # `${X:=w}` `${X=w}` bind X
_ARITH_IN = re.compile(r"\$\(\((.*?)\)\)", re.S)  # the arithmetic expansions in a text
# declare/local/readonly/export options that bind a value as written (arrays, export, read-only,
# global, trace); any other letter changes the value or is refused by bash (see opaque_declaration)
_PLAIN_DECLARE = set("aAxrgt")
# commands whose behaviour no exported variable changes: an export after them is not "late"
_ENV_BLIND = frozenset(
    ("set", "echo", "printf", "cd", "pushd", "popd", "mkdir", "shopt", "ulimit", "trap", "umask", "pwd",
     "sleep", "date", "hostname", "true", "false", ":", "test", "[", "unset", "read", "shift", "wait",
     "export", "declare", "local", "readonly", "source", ".", "ln", "rm", "cp", "mv", "touch", "chmod")
)  # fmt: skip


class Reader(Walk):
    """A script read as data: ``script()`` walks it, ``finish()`` returns it."""

    def finish(self) -> ReadResult:
        env, plain = self.shown_variables()
        for name in sorted(self.exported - set(self.assignments) - self.inherited):
            # `export NAME` of an inherited value: a child sees NAME only where the environment set
            # it, while `NAME="$NAME"; export NAME` sets it (maybe empty) for every child
            env[name] = NotEvaluated(f"${name}, only if set", self.filename, 0)
        if self.late:
            env["@late"] = self.late
        if self.exported_functions:  # `set -a` exported them: every child process sees them
            env["@functions"] = {k: v[0] if len(v) == 1 else v for k, v in self.exported_functions.items()}
        if self.made_readonly:
            plain["@readonly"] = self.made_readonly
        self.result.data = {
            "sbatch": self.sbatch,
            "env": env,
            "vars": plain,
            "commands": {k: cmdline.plain(v) for k, v in self.commands.items()},
        }
        self.result.numbered = (("commands",),)
        self.note_syntax_error()
        return self.result

    def note_syntax_error(self) -> None:
        """The first line bash refuses, shown as ``@syntax_error`` with a warning."""
        if self.syntax_error is None:
            return
        line, what = self.syntax_error
        self.result.data["@syntax_error"] = f"line {line}: {what}"
        self.result.lines[("@syntax_error",)] = line
        self.result.warnings.append(
            f"{self.filename}:{line}: bash refuses this line ({what}): the shell reading it runs "
            "no command from this line on"
        )

    def shown_variables(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The variables that show, as (``env``, ``vars``): each one's final value, under its
        ``section``, with the line of its first assignment."""
        shown: dict[str, dict[str, Any]] = {"env": {}, "vars": {}}
        for name, history in self.assignments.items():
            value = self.final(name, history)
            section = self.section(name, history)
            if section is not None:
                shown[section][name] = value
                self.result.lines[(section, name)] = history[0][2]
        return shown["env"], shown["vars"]

    def section(self, name: str, history: list[tuple[str, Any, int]]) -> str | None:
        """Where a variable shows: ``env`` when exported, or once exported (a program run then saw
        each value it had, which no command line shows); ``vars`` when it is bound under a
        condition, never substituted into a command, or the script is opaque; else nowhere, since
        its value already shows in the commands that use it."""
        if name in self.exported:
            return "env"
        if (
            name in self.unexported
            or self.opaque
            or name not in self.substituted
            or any(w for w, _, _ in history)
        ):
            return "vars"
        return None

    def final(self, name: str, history: list[tuple[str, Any, int]]) -> Any:
        """A variable's value as data: built by one assignment and unconditional appends, its final
        value (an array of flags then compares as one flag mapping); else its whole history."""
        bound = self.vars.get(name)
        if _built_by_appends(history) and bound is not None and not isinstance(bound, Unknown):
            return self.shown(bound, not partial(bound), history[-1][2])
        return _history(history)

    # variables -------------------------------------------------------------------------------------

    def assign(self, node: Any, when: list[str], *, export: bool = False) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type == "subscript":  # ARR[2]=x
            self.keep_element_assignment(node, name_node, when)
            return
        name = self.text(name_node)
        if self.transformed_assignment(node, name, when):
            return
        held = name in self.assignments
        used = name in self.substituted
        value, known = self.assigned_value(node.child_by_field_name("value"))
        if not used:
            # `PATH=/x:$PATH` reads PATH only to build PATH: no command shows its value, so the
            # variable is still shown (one inherited from the environment is exported)
            self.substituted.discard(name)
        self.bind_assigned(node, name, value, known, when)
        if export or self.allexport is not False:  # `set -a` exports every assignment
            self.note_exported_late(name, held)
            self.exported.add(name)
        self.note_late(name)

    def bind_assigned(self, node: Any, name: str, value: Any, known: bool, when: list[str]) -> None:
        """An assignment's value bound, or appended (``X+=v``) to the value the script gave X."""
        append = any(c.type == "+=" for c in node.children)
        if append and name in self.assignments:
            self.append(name, value, known, when, self.line(node))
            return
        if append and not isinstance(value, list) and name not in self.vars:
            # `X+=v` of a variable the script never set appends to the environment's X
            value, known = "${" + name + "}" + (escape_literal(value) if known else value), False
        self.bind(name, self.into_array(node, name, value, known), known, when, self.line(node))

    def note_exported_late(self, name: str, held: bool) -> None:
        """``P=1; python a.py; export P=2``: a.py ran without P, where after ``export P=1`` it saw
        P=1, though the values are the same: a value the script held unexported when a program ran
        is part of the data (``env.@late``: ``exported after a.py``)."""
        if held and name not in self.exported and self.last_program is not None:
            self.late.setdefault(name, []).append(f"exported after {self.last_program}")

    def note_late(self, name: str) -> None:
        """An exported variable set after a program ran: that program did not see this value, so
        where it happened is part of the data (``env.@late``), never only the final value."""
        if name in self.exported and self.last_program is not None:
            self.late.setdefault(name, []).append(f"after {self.last_program}")

    def keep_element_assignment(self, node: Any, name_node: Any, when: list[str]) -> None:
        """``ARR[2]=x`` (or an assignment the grammar gives no name) is kept as source; the array
        it changes is not known after it."""
        self.keep_opaque(node, when)
        base = name_node.child_by_field_name("name") if name_node is not None else None
        if base is not None:
            self.forget(self.text(base))

    def assigned_value(self, value_node: Any) -> tuple[Any, bool]:
        """What an assignment binds and whether it is known: nothing (``X=``), an array's words
        (each expanded and split), or one word (never split)."""
        if value_node is None:
            return "", True
        if value_node.type == "array":
            return self.array_value(value_node)
        fields = self.expand(value_node, assignment=True)
        return " ".join(f.text for f in fields), all(f.known for f in fields)

    def array_value(self, node: Any) -> tuple[list[Any], bool]:
        """``(a "$B" c)``: each element expanded and split; a partly known word stays ``Partial``."""
        fields = [f for c in node.named_children if c.type != "comment" for f in self.expand(c)]
        return [f.text if f.known else Partial(f.text) for f in fields], all(f.known for f in fields)

    def append(self, name: str, value: Any, known: bool, when: list[str], line: int) -> None:
        """``A+=(x y)`` / ``A+=x``: the history records only what was added (a script of n appends
        stays linear); the variable's value grows in place."""
        if self.refused(name, {"+=": value}, known, when, line):
            return
        old = self.vars.get(name)
        self.check_size(name, self.sizes.get(name, 0) + _size(value), line)
        self.assignments[name].append((" and ".join(when), {"+=": self.shown(value, known, line)}, line))
        if conditional(when) or isinstance(old, Unknown):
            self.forget(name)
        else:
            self.vars[name] = _appended(old, value, known)

    def into_array(self, node: Any, name: str, value: Any, known: bool) -> Any:
        """``A=z`` where A is an array of several words sets its first element, as bash does
        (``A=(x y); A=z`` leaves ``z y``); ``local``/``declare``/``typeset`` may make a new one."""
        old: Any = self.vars.get(name)
        if isinstance(value, list) or not _several(old) or self.may_scope(node):
            return value
        return [value if known else Partial(value), *old[1:]]

    def may_scope(self, node: Any) -> bool:
        """Is this assignment a ``local``/``declare``/``typeset`` one (a new variable in a function)?"""
        parent = node.parent
        return (
            parent is not None
            and parent.type == "declaration_command"
            and self.text(parent).startswith(_SCOPING)
        )

    def check_size(self, name: str, size: int, line: int) -> None:
        if size > _MAX_VALUE:  # `A=$A$A` doubles each time: bounded, as every input-controlled cost
            raise ConfigError(
                f"variable {name} grows past {_MAX_VALUE:,} characters",
                location=Location(self.filename, line, 1),
                hint="sweepgen reads scripts, it does not run them; simplify the assignment",
            )
        self.sizes[name] = size

    def bind(self, name: str, value: Any, known: bool, when: list[str], line: int) -> None:
        if self.refused(name, value, known, when, line):
            return
        if isinstance(value, list):
            value = list(value)  # its own list: appends grow it in place
        self.check_size(name, _size(value), line)
        self.assignments.setdefault(name, []).append(
            (" and ".join(when), self.shown(value, known, line), line)
        )
        if conditional(when):
            self.forget(name)
        elif known or isinstance(value, list):
            self.vars[name] = value
        else:
            self.vars[name] = Partial(value)

    def refused(self, name: str, value: Any, known: bool, when: list[str], line: int) -> bool:
        """bash refuses to assign a read-only variable (``readonly X=1; export X=2`` runs on with X=1):
        the attempt shows in X's history under ``@readonly``, and X keeps its value, or is not known
        after it where X may be read-only (made so under a condition)."""
        sure = self.readonly.get(name)
        if sure is None:
            return False
        if isinstance(value, dict):  # an append: `A+=(x)`
            attempt: Any = {k: self.shown(v, known, line) for k, v in value.items()}
        else:
            attempt = self.shown(value, known, line)
        self.assignments.setdefault(name, []).append((" and ".join(when), {"@readonly": attempt}, line))
        if not sure:
            self.forget(name)
        return True

    def shown(self, value: Any, known: bool, line: int) -> Any:
        """A variable's value as data: text, a not-evaluated node holding its definition's source, or
        for an array of words each word on its own; an array of flags is a flag mapping, so that
        inserting one flag is one added flag."""
        if not isinstance(value, list):
            return value if known else NotEvaluated(normalise_value(str(value)), self.filename, line)
        words: list[Any] = [
            NotEvaluated(normalise_value(v), self.filename, line) if isinstance(v, Partial) else v
            for v in value
        ]
        if any(cmdline.is_flag(w) for w in words):
            return cmdline.plain(cmdline.parse_arguments(words, self.filename, [line] * len(words))[0])
        return words

    # commands --------------------------------------------------------------------------------------

    def command(  # noqa: C901 - one branch per tree-sitter command node type
        self,
        node: Any,
        when: list[str],
        redirects: dict[str, Any],
        heredoc: Field | None,
        extra: tuple[Any, ...] = (),
        redirected: bool = False,
    ) -> None:
        """``extra``: the words after a redirection's target, which bash passes to the command;
        ``redirected``: its own redirections are in ``redirects`` already (``inner_redirections``)."""
        if node.type == "declaration_command":
            self.declaration(node, when)
            return
        if node.type == "unset_command":
            self.unset(node, when)
            return
        if node.type == "test_command":
            # `[[ ... ]]` reads its variables now (bare names too, in `-gt`), and its status
            # decides `set -e` and `$?`: kept as source with the values it reads
            test = {"@test": NotEvaluated(self.with_values(self.norm(node)), self.filename, self.line(node))}
            self.store("test", self.guarded(test, when), self.line(node))
            return
        self.seen_command = True
        if self.split_assignment(node, when, redirects) or self.split_at_newline(node, when, redirects):
            return
        state = dict(redirects)
        prefix: dict[str, Any] = {}
        words: list[Field] = []
        for index, child in enumerate(node.children):  # enumerate: `.index()` made long commands quadratic
            field = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                # bash expands each `X=v` before a command after the ones left of it are made, so
                # `X=2 Y=$X cmd` gives cmd Y=2 (the command's own words still read the old X)
                with self.bound_while(prefix):
                    fields = self.expand(value, assignment=True) if value is not None else []
                key = self.text(name) if name else "?"
                given = self.value(
                    Field(" ".join(f.text for f in fields), all(f.known for f in fields), self.line(child))
                )
                if self.readonly.get(key) is None:
                    prefix[key] = given
                else:  # bash refuses `X=2 cmd` of a read-only X: cmd runs without it
                    state.setdefault("@refused_env", {})[key] = {"@readonly": given}
            elif child.type in REDIRECTS and not redirected:
                heredoc = self.own_heredoc(child, state) or heredoc
            elif child.type == "command_name" or field == "argument":
                words.extend(self.expand(child.named_children[0] if child.type == "command_name" else child))
        self.settle_heredocs(state)
        words += [
            field for word in extra for field in ([word] if isinstance(word, Field) else self.expand(word))
        ]
        if not words:  # `VAR=x` with an empty command: a plain assignment (a refused one too)
            refused = {k: v["@readonly"] for k, v in state.get("@refused_env", {}).items()}
            for key, value in {**prefix, **refused}.items():
                self.bind(key, value, not isinstance(value, NotEvaluated), when, self.line(node))
            return
        self.run(words, node, when, state, heredoc, prefix)

    def split_at_newline(self, node: Any, when: list[str], redirects: dict[str, Any]) -> bool:
        """The grammar reads ``X=2 >log`` NEWLINE ``python t.py`` as one command; bash ends the first
        at the newline (X=2 is a plain assignment, python runs without it): each part is read as the
        statement it is."""
        children = node.children
        cut = next((i for i in range(1, len(children)) if self.newline_between(*children[i - 1 : i + 1])), 0)
        if not cut:
            return False
        end = children[cut - 1].end_byte
        first = bytes(self.src[node.start_byte : end]).decode("utf-8", "surrogateescape")
        rest = bytes(self.src[children[cut].start_byte : node.end_byte]).decode("utf-8", "surrogateescape")
        self.reparse(first, self.line(node), when, {})
        self.reparse(rest, self.line(children[cut]), when, redirects)
        return True

    def newline_between(self, before: Any, after: Any) -> bool:
        gap = bytes(self.src[before.end_byte : after.start_byte])
        return b"\n" in gap.replace(b"\\\n", b"")

    def unset(self, node: Any, when: list[str]) -> None:
        """``unset X``: X is empty and no longer exported (a later ``X=v`` stays in this shell); after
        a program ran, that program still saw X (``env.@late``). ``unset -f F`` removes the
        function F: a later call runs nothing of it (where the unset is conditional, it still may)."""
        words = [self.text(child) for child in node.named_children]
        names = [word for word in words if word[:1] != "-"]
        if "-f" in words:
            self.unset_functions(names, when, self.line(node))
            return
        for name in names:
            if not _PLAIN_NAME.fullmatch(name):
                self.unset_unknown(node, name, when)
                continue
            if self.readonly.get(name) is not None:
                self.refused(name, "", True, when, self.line(node))  # bash cannot unset it
                continue
            self.bind(name, "", True, when, self.line(node))
            self.note_late(name)
            self.unexported.update(self.exported & {name})
            self.exported.discard(name)
            # unset, never the environment's X again (empty, or an error under `set -u`)
            self.forget(name)

    def unset_unknown(self, node: Any, word: str, when: list[str]) -> None:
        """``unset 'A[0]'``, ``unset "$N"``: an element, or a name the word expands to, is unset:
        kept as source, and that variable (any, where the word expands) is not known after it."""
        self.keep_opaque(node, when)
        for name in _unset_names(word) or list(self.vars):
            self.forget(name)

    def unset_functions(self, names: list[str], when: list[str], line: int) -> None:
        self.store("unset", self.guarded({"-f": names}, when), line)
        if not conditional(when):
            for name in names:
                self.functions.pop(name, None)

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
        if self.special_declaration(node, keyword, when):
            return
        letters = set("".join(o.lstrip("-+") for o in self.declare_options(node)))
        local = self.declares_local(keyword, letters)
        if local:
            # inside a function `local`/`declare` shadow the variable until the body returns; the
            # binding is marked, so `local X=2` never reads as the global `X=2`
            self.shadow(node, when)
            when = [*when, "local"]
        self.declare_with(node, keyword, letters, local, when)

    def special_declaration(self, node: Any, keyword: str, when: list[str]) -> bool:
        """Declarations read apart: words bash expands first, `local` outside a function, `local -`."""
        if self.computed_declaration(node, when):
            return True
        if keyword == "local" and not self.frames:
            self.refuse_local(node, when)
            return True
        if keyword == "local" and "-" in self.declare_options(node):
            self.local_options(node, when)
            return True
        return False

    def declare_with(self, node: Any, keyword: str, letters: set[str], local: bool, when: list[str]) -> None:
        """The names a declaration binds, by its option letters: exported, arrays, read-only."""
        exported = keyword == "export" or "x" in letters
        if "f" in letters and exported:
            self.export_named_functions(self.declared_names(node), self.line(node), when)
        if letters - _PLAIN_DECLARE or _takes_away(self.declare_options(node)):
            self.opaque_declaration(node, when, letters)
        else:
            self.declare_each(node, when, exported, bool(letters & {"a", "A"}), local)
        if _makes_readonly(keyword, self.declare_options(node)):
            self.make_readonly(self.declared_names(node), not (local or conditional(when)), when)

    def local_options(self, node: Any, when: list[str]) -> None:
        """``local -``: the ``set`` options the body sets from here on are given back when it
        returns (bash 4.4; ``shopt`` ones are not): kept as source, and allexport saved in the
        frame (under a condition of the body's own, given back as maybe set)."""
        self.keep_opaque(node, when)
        frame = self.frames[-1]
        if not frame.options:
            frame.options = (self.allexport if when == frame.guard else None,)

    def computed_declaration(self, node: Any, when: list[str]) -> bool:
        """``export 'LR=1'``, ``export "$k=$v"``, ``local "$n"``: a word bash expands before it reads
        it as ``NAME=VALUE`` or ``NAME``. Known, the declaration is read as so spelled; not known, it
        may bind and export any variable: kept as source, and no variable is known after it."""
        words = self.declaration_words(node)
        if words is None:
            return False
        if None in words:
            self.keep_opaque(node, when)
            for name in list(self.vars):
                self.forget(name)
                self.note_unknown_export(name, self.line(node))
        else:
            self.reparse(" ".join(w for w in words if w is not None), self.line(node), when, {})
        return True

    def declaration_words(self, node: Any) -> list[str | None] | None:
        """A declaration's words, each one bash expands first as it reads once expanded (None where
        not known or refused); None when every word is read as written."""
        words: list[str | None] = [self.text(node.children[0])]
        computed = False
        for child in node.named_children:
            text = self.text(child)
            if child.type in ("variable_assignment", "variable_name") or _option_word(child.type, text):
                words.append(text)
                continue
            computed = True
            words.extend(_declared_word(f.text) if f.known else None for f in self.expand(child))
        return words if computed else None

    def declares_local(self, keyword: str, letters: set[str]) -> bool:
        """Inside a function, ``local`` and ``declare``/``typeset`` without ``-g`` bind a local."""
        if not self.frames:
            return False
        return keyword == "local" or (keyword in ("declare", "typeset") and "g" not in letters)

    def refuse_local(self, node: Any, when: list[str]) -> None:
        """bash refuses ``local`` outside a function ("can only be used in a function"): it binds
        nothing, so ``local N=8`` at the top is not ``N=8``."""
        line = self.line(node)
        entry = {"@refused": NotEvaluated(self.norm(node), self.filename, line)}
        self.store("local", self.guarded(entry, when), line)

    def make_readonly(self, names: list[str], sure: bool, when: list[str]) -> None:
        """Read-only from here on; only maybe where it was made so under a condition, or local to a
        function (read-only no more once the body returns). Shown under ``vars.@readonly`` with
        the condition, if any: a later assignment fails (and ends a ``set -e`` script)."""
        for name in names:
            self.readonly[name] = self.readonly.get(name) or sure
            self.made_readonly.setdefault(name, []).append(" and ".join(when))

    def declare_each(self, node: Any, when: list[str], export: bool, array: bool, local: bool) -> None:
        """Each name of a declaration with its plain options: assigned, or declared without a value."""
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child, when, export=export)
            elif child.type == "variable_name" and local:
                # bash's `local X` is a new X, unset until assigned (`${X-d}` is d, `${#X[@]}` 0),
                # never the empty word `local X=` binds: the value it shadows is not seen in the body
                self.bind(self.text(child), [] if array else None, True, when, self.line(child))
            elif child.type == "variable_name":
                self.declare(self.text(child), export, array, when, self.line(child))

    def shadow(self, node: Any, when: list[str]) -> None:
        """Note, in the innermost function's frame, what each name a ``local`` declares held before
        (first declaration only: a second ``local X`` shadows the frame's own X)."""
        frame = self.frames[-1]
        for name in self.declared_names(node):
            if name not in frame.saved:
                value = self.vars.get(name)
                held = list(value) if isinstance(value, list) else value
                frame.saved[name] = (name in self.vars, held, name in self.exported, when == frame.guard)

    def declared_names(self, node: Any) -> list[str]:
        """The variables a declaration names (``X``, ``X=v``, ``A[1]=v`` names ``A``)."""
        names = []
        for child in node.named_children:
            target = child.child_by_field_name("name") if child.type == "variable_assignment" else child
            if child.type in ("variable_assignment", "variable_name") and target is not None:
                base = target.child_by_field_name("name") if target.type == "subscript" else target
                names.append(self.text(base or target))
        return names

    def declare_options(self, node: Any) -> list[str]:
        """The words of a declaration that are options (``-a``, ``-rx``, ``+x``)."""
        return [
            self.text(c)
            for c in node.named_children
            if c.type == "word" and self.text(c).startswith(("-", "+"))
        ]

    def declare(self, name: str, export: bool, array: bool, when: list[str], line: int) -> None:
        """``export NAME`` marks it exported; ``declare -a/-A NAME`` binds an empty array unless the
        script already assigned it. ``declare NAME`` and ``readonly NAME`` bind nothing: NAME is
        still the environment's (unset where it holds none, never the empty word ``NAME=``)."""
        if export and name not in self.exported:  # an export of an exported one changes nothing
            self.exported.add(name)
            self.note_late(name)
        elif not export and array and name not in self.assignments:
            self.bind(name, [], True, when, line)

    def opaque_declaration(self, node: Any, when: list[str], letters: set[str]) -> None:
        """``declare -i/-l/-u/-n`` change what is bound (arithmetic, case, a name reference) and an
        option bash refuses binds nothing: kept as source, and its variables are not known after,
        nor after a later assignment (``declare -i A=5; A+=2`` is 7, never the word ``2``)."""
        self.keep_opaque(node, when)
        for name in self.declared_names(node):
            self.forget(name)
            self.note_late(name)  # `export -n X` after a program ran: that program saw X
            if letters & _TRANSFORMING:
                self.transforming[name] = self.transforming.get(name, False) or "n" in letters

    def transformed_assignment(self, node: Any, name: str, when: list[str]) -> bool:
        """An assignment to a variable ``declare -i/-l/-u/-c/-n`` made: kept as source; the
        variable is not known after it (nor any other, through a name reference)."""
        if name not in self.transforming:
            return False
        self.keep_opaque(node, when)
        for forgotten in list(self.vars) if self.transforming[name] else [name]:
            self.forget(forgotten)
        return True

    def run(  # noqa: C901, PLR0912 - one branch per builtin the interpreter follows (export, set, source, cd...)
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
        if head == "read" and heredoc is not None and _plain_read(words) and _REPLACED not in state:
            names = [w.text for w in words[1:] if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", w.text)]
            if names:
                # `read -d '' CMD <<EOF`: the whole body (-d '') or its first line lands in CMD
                whole = any(w.text == "-d" for w in words)
                body = heredoc.text if whole else heredoc.text.split("\n", 1)[0]
                self.bind(names[-1], body.strip("\n") if whole else body, heredoc.known, when, line)
                return
        if self.ran_as_code(words, node, when, state, prefix):
            return
        self.shell_state(head, words, when, line)
        self.forget_bound(words)
        identity_words = [self.value(w) for w in words]
        program_time = bool(prefix) or _time_program(node, words)  # `A=1 time`, `\\time`: no keyword
        launchers, inner = cmdline.split_launchers(identity_words, assigned=program_time)
        if self.shell_c(inner, launchers, prefix, when, state, line):
            return
        name, arguments = cmdline.program(inner, launchers)
        if name in ("torch.distributed.run", "torch.distributed.launch"):
            # `python -m torch.distributed.run` is torchrun by another name
            more, inner = cmdline.split_launchers(["torchrun", *arguments])
            launchers.update(more)
            name, arguments = cmdline.program(inner, launchers)
        lines = [w.line or line for w in words[len(words) - len(arguments) :]] if arguments else []
        if os.path.basename(name) == "sbatch":
            parsed, at = cmdline.sbatch_arguments(arguments, self.filename, lines)
        else:
            parsed, at = cmdline.parse_arguments(arguments, self.filename, lines, name)
        data: dict[str, Any] = dict(parsed)
        if launchers:
            data["@launcher"] = launchers
        data.update(self.bare_reads(head, words))
        if head in ("source", ".") and len(words) > 1:
            data["@file"] = sourced_file(self.filename, words[1].text, words[1].known)  # part of the script
        if prefix or "@refused_env" in state:
            data["@env"] = {**prefix, **state.get("@refused_env", {})}
        for key in ("@stdin", "@stdout", "@stderr", _REPLACED, OPENED):
            if key in state:
                data[key] = state[key]
        for cell in state.get(ONCE, ()):  # a group's `> a > b`: shown under its first command
            if not cell[0]:
                cell[0] = True
                data[OPENED] = [*cell[1], *data.get(OPENED, [])]
        for cell in state.get(GROUP_OPENED, {}).values():  # a group's `> log` it writes to: shown
            cell[0] = True
        for key, value in state.items():
            if key.startswith("@fd"):
                data[key] = value
        if heredoc is not None and "@stdin" not in data:
            data["@stdin"] = self.value(Field(heredoc.text, heredoc.known, heredoc.line))
        key = self.store(name, self.guarded(data, when), line)
        if head not in _ENV_BLIND:
            self.last_program = key
        for flag, flag_line in at.items():
            self.result.lines[("commands", key, flag)] = flag_line
        if words[0].known and head in self.functions and not launchers:
            # `LR=2 run`: bash binds LR=2 while the body runs, then gives back the earlier value
            with self.bound_while(prefix):
                self.call(head, when, state, line)

    def shell_c(
        self,
        inner: list[Any],
        launchers: dict[str, Any],
        prefix: dict[str, Any],
        when: list[str],
        state: dict[str, Any],
        line: int,
    ) -> bool:
        """`srun bash -c "python ..."` (`bash -lc`, `sh -ec`...): the inner script read, launchers
        and all; False where the command is no shell given code. The shell joins the launchers
        as spelled, with its options (`-l` reads the login files first, `-e` stops at a failure):
        `sh` (often dash) or another `bash` may read the same code otherwise."""
        found = cmdline.shell_command_string(inner) if _is_shell(inner) else None
        if found is None:
            return self.wrapped_code(inner, launchers, prefix, when, state, line)
        shell, (options, at) = inner[0], found
        code = inner[at]
        assert isinstance(code, str)  # shell_command_string checked it
        self.bash_c(code, inner[at + 1 :], {**launchers, shell: options}, prefix, when, state, line, shell)
        return True

    def wrapped_code(
        self,
        inner: list[Any],
        launchers: dict[str, Any],
        prefix: dict[str, Any],
        when: list[str],
        state: dict[str, Any],
        line: int,
    ) -> bool:
        """`su -c CODE bob`, `script -qc CODE /dev/null`, `flock FILE -c CODE`, `sg GROUP CODE`,
        `watch -n 5 python t.py`: the code read as `bash -c CODE` is, the wrapper under
        `@launcher`; False for any other command."""
        found = cmdline.code_wrapper(inner)
        if found is None:
            return False
        key, run = found
        key = key if key not in launchers else f"{key} #{len(launchers) + 1}"
        self.bash_c(run.code, run.argv, {**launchers, key: run.flags}, prefix, when, state, line, key)
        return True

    def ran_as_code(
        self, words: list[Field], node: Any, when: list[str], state: dict[str, Any], prefix: dict[str, Any]
    ) -> bool:
        """``eval`` of known words, and a builtin behind ``builtin``/``command`` (``builtin export
        X=1``, ``command unset X``), read as the code they run; False for any other command."""
        head, line = words[0].text, self.line(node)
        if head == "eval" and all(w.known for w in words[1:]):
            self.eval(" ".join(w.text for w in words[1:]), prefix, line, when, state)
            return True
        code = None if prefix else _unprefixed(self.text(node))
        if code is not None:
            self.reparse(code, line, when, state)
        return code is not None

    def bare_reads(self, head: str, words: list[Field]) -> dict[str, Any]:
        """``let N=X+1`` reads X by its bare name: the values it reads (``@reads``) are part of
        what it does, as ``$X`` would be."""
        reads = self.named_values(" ".join(w.text for w in words[1:])) if head == "let" else {}
        return {"@reads": reads} if reads else {}

    def shopt(self, words: list[Field], when: list[str]) -> None:
        """``shopt -s lastpipe`` (``-u`` undoes it): where the words are not known, or it runs under a
        condition that leaves the setting open, lastpipe may be on or off."""
        rest = [w.text if w.known else None for w in words[1:]]
        self.lastpipe = _shopt_now(rest, "lastpipe", self.lastpipe, conditional(when))
        for name, now in self.nomatch.items():
            self.nomatch[name] = _shopt_now(rest, name, now, conditional(when))

    def set_allexport(self, words: list[Field], when: list[str]) -> None:
        """``set -a`` / ``set -o allexport`` (``+a`` undoes it): every variable assigned from here on
        is exported; where the words are not known, or it runs under a condition that leaves the
        setting open, it may be (taken as exported: the ``set`` itself shows)."""
        setting = _allexport_after([w.text if w.known else None for w in words[1:]], self.allexport)
        if setting != self.allexport:
            self.allexport = None if conditional(when) else setting

    def move_positionals(self, words: list[Field], when: list[str]) -> None:
        """``shift [N]`` and ``set -- ...`` (or ``set`` with a word that is not an option) change
        what ``$1``, ``$@`` and ``$#`` read from here on: a known shift is counted (``shift 2``);
        anything else (a new list, a shift under a condition or by an unknown count) is a new state
        of its own, numbered."""
        rest = [w.text if w.known else None for w in words[1:]]
        if words[0].text == "set" and not _sets_positionals(rest):
            return
        total = _known_shift(words[0].text, rest, self.argv)
        if total is not None and self.runs_whenever_its_body_does(when):
            self.argv = f"shift {total}" if total else self.argv
        else:
            self.argv_changes += 1
            self.argv = f"{words[0].text} #{self.argv_changes}"

    def runs_whenever_its_body_does(self, when: list[str]) -> bool:
        """Unconditional, or under no condition but its function body's own."""
        return not conditional(when) or bool(self.frames and when == self.frames[-1].guard)

    def forget_bound(self, words: list[Field]) -> None:
        """What a builtin binds by name (``read X``, ``printf -v X``, ``let N=1``) comes from running
        it: those variables are not known after it; after ``source FILE`` or an ``eval`` of code
        not known, no variable is."""
        names = bound_names([w.text if w.known else None for w in words])
        if names is ANY:
            self.opaque = True
            names = list(self.vars)
        for name in names:
            self.forget(name)
            self.note_unknown_export(name, words[0].line)

    def shell_state(self, head: str, words: list[Field], when: list[str], line: int) -> None:
        """What a builtin changes in the shell beside variables: options, positionals, traps."""
        if head == "set":
            self.set_allexport(words, when)
        if head in ("shopt", "shift", "set"):
            (self.shopt if head == "shopt" else self.move_positionals)(words, when)
        elif head == "trap":
            self.note_trap(words[1:], when, line)

    def note_trap(self, rest: list[Field], when: list[str], line: int) -> None:
        """``trap CODE EXIT`` (or ``0``): CODE runs when the script ends, with the values bound
        then (``at_exit``); a later one replaces it, ``trap - EXIT`` or ``trap '' EXIT`` removes it."""
        rest = rest[1:] if rest[:1] and rest[0].text == "--" else rest
        if _sets_exit_trap(rest):
            kept = rest[0].known and rest[0].text not in ("", "-")
            self.exit_trap = (rest[0].text, line, list(when)) if kept else None

    def at_exit(self) -> None:
        """The ``trap ... EXIT`` set last runs at the end, reading the values bound then."""
        if self.exit_trap is not None:
            code, line, when = self.exit_trap
            self.reparse(code, line, [*when, "at exit (trap EXIT)"], {})

    def note_unknown_export(self, name: str, line: int) -> None:
        """An exported variable made unknown (``read X``): each program run after it sees that value,
        so its history shows it, in order, never only the value bound before."""
        if name in self.exported and name in self.assignments:
            marker = NotEvaluated(f"${{{name} unknown {self.forgets[name]}}}", self.filename, line)
            self.assignments[name].append(("", marker, line))
            self.note_late(name)

    def forget_assigned(self, source: str, line: int) -> None:
        """What an expansion not evaluated may assign (``${X:=w}``, ``$((N+=1))``) is not known
        after it, whether the script or the environment set it before."""
        names = _ASSIGNING.findall(source)
        names += [n for expr in _ARITH_IN.findall(source) for n in arithmetic_assigned(expr)]
        for name in names:
            self.forget(name)
            self.note_unknown_export(name, line)

    def bash_c(
        self,
        code: str,
        argv: list[Any],
        launchers: dict[str, Any],
        prefix: dict[str, Any],
        when: list[str],
        state: dict[str, Any],
        line: int,
        shell: str,
    ) -> None:
        """``[launchers] [X=v] bash -c CODE [ARG0 ARGS...]``: a new shell. Its commands carry the
        launchers, the shell, the ``X=v`` (``@env``) and the words after CODE (``@argv``, its
        ``$0 $1...``); what it binds or exports shows under ``commands["bash -c"]`` (``"sh -c"``)."""
        sub = self.new_shell(prefix)
        sub.script(code, line - 1, [], state)
        sub.uncalled()
        self.called |= sub.called
        self.syntax_error = self.syntax_error or sub.syntax_error  # the new shell refuses its code
        self.result.warnings.extend(sub.result.warnings)
        extra = _given(prefix, argv)
        for key, value in sub.commands.items():
            stored = self.store(key, self.guarded(_carried(value, extra, launchers), when), line)
            if key == sub.last_program:
                self.last_program = stored  # an export after it came too late for that program
        self.store_bound(sub, extra, when, line, shell)

    def store_bound(self, sub: Reader, extra: dict[str, Any], when: list[str], line: int, shell: str) -> None:
        """What a child shell binds or exports, under ``commands["bash -c"]``; when it ran no command,
        what its parent gave it (``extra``) shows there too, else a change to it would show nowhere."""
        inner = sub.finish().data
        bound = {k: inner[k] for k in ("env", "vars") if inner[k]}
        shown = {**({} if sub.commands else extra), **bound}
        if shown:
            self.store(f"{shell} -c", self.guarded(shown, when), line)

    def new_shell(self, prefix: dict[str, Any]) -> Reader:
        """The reader of a child shell: it sees the exported variables and the command's own ``X=v``,
        never a plain variable (that one comes from the environment: not evaluated), and the
        script's functions (``export -f`` is kept as source, so a function is assumed exported)."""
        sub = Reader(self.filename)
        sub.vars = {
            k: list(v) if isinstance(v, list) else v for k, v in self.vars.items() if k in self.exported
        }
        sub.vars.update({name: _bound_as(value) for name, value in prefix.items()})
        sub.exported = set(self.exported) | set(prefix)
        sub.inherited = set(sub.exported)
        sub.functions = dict(self.functions)
        sub.parser = self.parser
        sub.depth = self.depth
        return sub

    def eval(
        self, code: str, prefix: dict[str, Any], line: int, when: list[str], state: dict[str, Any]
    ) -> None:
        """``[X=v] eval CODE``: CODE runs in this shell; ``X=v`` holds only while it runs (bash
        outside POSIX mode), and is shown under ``commands.eval`` so that a change to it shows even
        where CODE never reads it."""
        with self.bound_while(prefix):
            self.reparse(code, line, when, state)
        if prefix:
            self.store("eval", self.guarded({"@env": prefix}, when), line)

    @contextlib.contextmanager
    def bound_while(self, prefix: dict[str, Any]) -> Iterator[None]:
        """A command's ``X=v`` prefix bound while the body runs (a function's, an ``eval``'s), then
        each variable given back its earlier value (unset where it was not set)."""
        saved = {name: self.vars.get(name) for name in prefix}
        self.vars.update({name: _bound_as(value) for name, value in prefix.items()})
        try:
            yield
        finally:
            for name, old in saved.items():
                if old is None:
                    self.vars.pop(name, None)
                else:
                    self.vars[name] = old

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
        return (
            field.text
            if field.known
            else NotEvaluated(normalise_value(field.text), self.filename, field.line)
        )

    def expand_arithmetic(self, node: Any, line: int) -> Field:
        """``$(( ... ))``: computed as bash computes it where it can be, else kept as source."""
        source = self.marked(self.text(node).strip())
        computed = arithmetic(source[3:-2], self.vars) if source.startswith("$((") else None
        if computed is not None:
            for used in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source):
                self.substituted.add(used)
            return Field(computed, True, line)
        self.forget_assigned(source, line)
        self.opaque = True
        # it reads the values bound now: written inside it (`$((X+1) where X=$((X+1)))`)
        return Field(self.substitution(self.text(node).strip()), False, line)

    def expand(self, node: Any, *, assignment: bool = False) -> list[Field]:  # noqa: C901, PLR0912 - one branch per tree-sitter word node type
        """The words ``node`` expands to; an unquoted expansion splits on blanks (not in assignments)."""
        line = self.line(node)
        kind = node.type
        if kind in ("word", "number"):
            raw = self.text(node)
            if kind == "word" and (_tilde(node, raw, assignment) or (not assignment and self.pattern(raw))):
                return [Field(raw, False, line)]  # the user's home, or the files a pattern matches
            return [Field(unescape_word(raw), True, line)]
        if kind == "raw_string":
            return [Field(self.text(node)[1:-1], True, line)]
        if kind == "ansi_c_string":
            decoded = ansi_c(self.text(node)[2:-1])
            return [Field(self.text(node), False, line) if decoded is None else Field(decoded, True, line)]
        if kind == "string":
            text_inside = self.marked(self.text(node)[1:-1])
            whole = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}", text_inside)
            if whole:  # "${ARGS[@]}": one word per element
                bound = self.vars.get(whole.group(1))
                if isinstance(bound, list):
                    self.substituted.add(whole.group(1))
                    return [Field(item, not isinstance(item, Partial), line) for item in bound]
            self.note_names(text_inside)
            if self.several_words(text_inside):
                self.opaque = True
                return [Field(quoted(self.with_values(text_inside)), False, line)]
            if self.own_ifs() and _STAR_JOIN.search(text_inside):
                # `"${A[*]}"`, `"$*"` join their words with the first character of IFS
                self.opaque = True
                return [Field(quoted(self.split_by_ifs(text_inside)), False, line)]
            # a `$(...)` or `$((...))` kept as source reads its variables here, in the quotes too
            text, known = expand_quoted(text_inside, self.vars, kept=self.reads_now)
            if not known:
                self.forget_assigned(text_inside, line)
            if not known and "$(" in text_inside:
                self.opaque = True
            # an assignment never splits: `X="$1"` is `X=$1`; elsewhere the quotes are kept
            return [Field(text if known or assignment else quoted(text), known, line)]
        if kind in ("simple_expansion", "expansion"):
            source = self.marked(self.text(node).strip())
            expr = source[2:-1] if source.startswith("${") else source[1:]
            self.note_names(source)
            value, known = lookup(expr, self.vars, False, self.reads_now)
            if not known:
                self.forget_assigned(source, line)
            if not known and value == "${" + expr + "}":
                value = Partial(source)  # nothing of it is known: its own source, as written
            if value is None:
                return [] if known else [Field(source, False, line)]
            if assignment:
                return [Field(joined(value), known, line)]
            if self.own_ifs():
                # bash splits an unquoted expansion at the characters of IFS, which the script set:
                # kept as written, with the values it reads
                self.opaque = True
                return [Field(self.split_by_ifs(source), False, line)]
            return split_fields(value, line)
        if kind == "concatenation":
            if not assignment and self.brace_expansion(node):
                # `{a,b}` and `a={x:1,y:2}` are several words to bash: kept as written, never
                # the one literal word that the quoted spelling is
                return [Field(self.marked(self.text(node)), False, line)]
            return [self.concatenation(node, line, assignment)]
        if kind == "arithmetic_expansion":
            return [self.expand_arithmetic(node, line)]
        if kind == "command_substitution":
            here = self.heredoc_in(node)
            if here is not None:
                return [here] if assignment else split_fields(here.text, line) if here.known else [here]
            self.opaque = True
            return [Field(self.substitution(self.text(node)), False, line)]
        self.opaque = True
        return [Field(self.marked(self.text(node)), False, line)]

    def substitution(self, text: str) -> str:
        """A ``$(...)`` not evaluated: it runs with the values bound now, written inside it so that
        the word stays one (``$(echo $X where X=1)``)."""
        return self.reads_now(self.marked(text))

    def reads_now(self, source: str) -> str:
        """An expansion already marked (``marked``), with the values it reads written inside it."""
        where = self.with_values(source)[len(source) :]
        return source[:-1] + where + source[-1:]

    def marked(self, source: str) -> str:
        """``source`` with each parameter it reads marked by its state (``mark_references``):
        a positional after a ``shift`` or ``set --`` (``${1 after shift 2}``), a variable the
        script made unknown (``${X unknown #2}``, never the ``$X`` of the environment)."""
        return mark_references(source, self.label_of) if self.argv or self.forgets else source

    def label_of(self, inner: str) -> str | None:
        """How a parameter named by ``inner`` (``1``, ``X:-d``) is marked, if it is."""
        if self.argv and POSITIONAL.match(inner):
            return f"after {self.argv}"
        name = re.match(r"[#!]?([A-Za-z_][A-Za-z0-9_]*)", inner)
        value = self.vars.get(name.group(1)) if name else None
        return f"unknown {value.tag}" if isinstance(value, Unknown) and value.tag else None

    def heredoc_text(self, raw: str) -> tuple[str, bool]:
        """An unquoted here-document's body, expanded; kept as written where it joins words by an
        IFS the script set (``${A[*]}``)."""
        raw = self.marked(raw)
        if self.own_ifs() and _STAR_JOIN.search(raw):
            return self.split_by_ifs(raw), False
        return expand_quoted(raw, self.vars, heredoc=True, kept=self.reads_now)

    def split_by_ifs(self, text: str) -> str:
        """A word bash splits (or joins) at the IFS the script set: as written, with the values it
        reads now, IFS's among them, so that a change to any, or a move past the word, shows."""
        values = {**self.named_values(text), **self.named_values("IFS")}
        return f"{text} where " + ", ".join(f"{name}={value}" for name, value in values.items())

    def several_words(self, text: str) -> bool:
        """Does a quoted text expand an array element by element (``"${A[@]/#/--x=}"``,
        ``"x${A[@]}y"``, ``"${!A[@]}"``, ``"${!prefix@}"``), so that bash makes a word of each
        where the array holds other than one (none: no word)? Read as one joined word, it would
        equal the quoted ``'--x=a --x=b'`` bash never passes."""
        return any(
            sliced or names or not _one_word(self.vars.get(name))
            for name, sliced, names in _AT_WORDS.findall(text)
        )

    def own_ifs(self) -> bool:
        """Has the script set IFS to something else than bash's blank, tab and newline?"""
        return "IFS" in self.assignments and self.vars.get("IFS") != " \t\n"

    def brace_expansion(self, node: Any) -> bool:
        """Does this concatenation hold an unquoted ``{...}`` with a ``,`` or ``..`` in it (bash's
        brace expansion: ``{a,b}``, ``a{1,2}``, ``{x..y}``)? A ``{a}`` without one is literal."""
        children = node.named_children
        if any(child.type == "brace_expression" for child in children):
            return True
        words = [self.text(child) if child.type == "word" else "" for child in children]
        if "{" not in words or "}" not in words:
            return False
        inside = words[words.index("{") + 1 : len(words) - 1 - words[::-1].index("}")]
        return any("," in word or ".." in word for word in inside)

    def concatenation(self, node: Any, line: int, assignment: bool) -> Field:
        """Parts glued into one word. Partly known, it is written as source: the literal parts
        escaped (``escape_literal``), the parts kept as source as they are, and an unquoted pattern
        (``data/*.json``, not in an assignment) kept as written, since the files present decide it."""
        colon_tilde = bool(assignment or _ASSIGNMENT_WORD.match(self.text(node)))
        parts = [part for child in node.named_children for part in self.part(child, assignment, colon_tilde)]
        return _concatenated(parts, line)

    def part(self, child: Any, assignment: bool, colon_tilde: bool = False) -> list[tuple[str, bool]]:
        """One part of a concatenation as (text, known) pieces; an unquoted pattern outside an
        assignment, and a ``:~`` bash expands in an assignment (``P=$1:~/bin``), are one piece
        kept as written."""
        if child.type == "word" and self.kept_as_written(self.text(child), assignment, colon_tilde):
            return [(self.text(child), False)]
        fields = self.expand(child, assignment=True)
        return [(f.text, f.known) for f in fields] if assignment else self.glued(child, fields)

    def glued(self, child: Any, fields: list[Field]) -> list[tuple[str, bool]]:
        """The pieces of a part of a word that is not an assignment's."""
        if child.type == "string":
            # `--out="$1"/x` is one word, `--out=$1/x` maybe several: the quotes are kept
            return [(f.text if f.known else quoted(f.text), f.known) for f in fields]
        if child.type in _SPLIT_EXPANSIONS and self.split_apart(fields):
            # `X='b c'; --f=$X` is the two words `--f=b c` to bash, never the one `--f=b c`
            return [(self.with_values(self.marked(self.text(child))), False)]
        return [(f.text, f.known) for f in fields]

    def split_apart(self, fields: list[Field]) -> bool:
        """Would bash split (or expand as a pattern) the value of an unquoted expansion glued to
        other text: blanks in it, a pattern, or an IFS the script set?"""
        return self.own_ifs() or any(f.known and _SPLITS.search(f.text) for f in fields)

    def pattern(self, raw: str) -> bool:
        """Is an unquoted word a pathname pattern, which the files present expand: a ``*`` or ``?``,
        and under nullglob or failglob a ``[`` (there a bracket matching no file is no word)."""
        brackets = any(on is not False for on in self.nomatch.values())
        return GLOB.search(raw) is not None or (brackets and _BRACKET.search(raw) is not None)

    def kept_as_written(self, word: str, assignment: bool, colon_tilde: bool) -> bool:
        """A word bash expands from the files present or the home folder: a pattern outside an
        assignment, a `:~` inside one."""
        if not assignment and self.pattern(word):
            return True
        return colon_tilde and re.search(r":~" + _TILDE_TAIL, word) is not None

    def heredoc_in(self, node: Any) -> Field | None:
        """``$(cat <<EOF ... EOF)``: the here-document's body."""
        statement = self.cat_statement(node)
        if statement is None:
            return None
        for child in statement.named_children:
            if child.type == "heredoc_redirect" or self.placeholder(child) is not None:
                field = self.redirect(child, {})
                if field is not None:
                    return Field(field.text.rstrip("\n"), field.known, field.line)
        return None

    def cat_statement(self, node: Any) -> Any:
        """The one statement of a command substitution when it is a plain ``cat`` with redirects."""
        statements = [c for c in node.named_children if c.type != "comment"]
        if len(statements) != 1:
            return None
        if statements[0].type == "command" and self.heredocs:
            return self.placeholder_cat(statements[0])
        if statements[0].type != "redirected_statement":
            return None
        body = statements[0].child_by_field_name("body")
        return statements[0] if self.is_cat(body) else None

    def placeholder_cat(self, command: Any) -> Any:
        """``cat <<<PLACEHOLDER``: a ``cat`` of a here-document the script was rewritten without
        (``shellheredoc``), if ``command`` is one."""
        name, *rest = command.named_children
        redirects = all(child.type.endswith("redirect") for child in rest)
        return command if rest and redirects and self.raw_text(name) == "cat" else None

    def is_cat(self, node: Any) -> bool:
        """A plain ``cat`` command, no arguments: it prints its here-document."""
        return node is not None and node.type == "command" and self.text(node).strip() == "cat"

    def note_names(self, text: str) -> None:
        for name in re.findall(r"\$\{?#?([A-Za-z_][A-Za-z0-9_]*)", text):
            self.substituted.add(name)


# `~`, `~/x`, `~+`, `~-`, `~user/x` (after `NAME=` too); a bare `~name` is left to the program:
# it is Hydra's deletion override (`~trainer.logger`) far more often than a login name
_TILDE_TAIL = r"(?:$|/|[+-](?:$|/)|[A-Za-z0-9._-]+/)"
_TILDE = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*=)?~" + _TILDE_TAIL)


def _tilde(node: Any, raw: str, assignment: bool) -> bool:
    """Does bash replace a ``~`` of this unquoted word with a home folder? At the start of a word
    (not inside a concatenation after another part), after ``NAME=`` in a word that looks like an
    assignment, and after ``:`` in an assignment's value (``PATH=a:~/b``) or in such a word given
    to a command (``echo a=b:~/c`` prints the home folder)."""
    after_colon = assignment or _ASSIGNMENT_WORD.match(raw)
    return _first_part(node) and bool(
        _TILDE.match(raw) or (after_colon and re.search(r":~" + _TILDE_TAIL, raw))
    )


_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _first_part(node: Any) -> bool:
    """A word on its own, or the first part of a concatenation."""
    return node.parent is None or node.parent.type != "concatenation" or node.prev_sibling is None


def _concatenated(parts: list[tuple[str, bool]], line: int) -> Field:
    """A concatenation's (text, known) parts as one word: partly known, the literal parts escaped."""
    if all(known for _, known in parts):
        return Field("".join(text for text, _ in parts), True, line)
    return Field("".join(escape_literal(t) if known else t for t, known in parts), False, line)


def _bound_as(value: Any) -> Any:
    """A command's ``X=v`` as the variable it binds: a value not evaluated is partly known, its source."""
    return Partial(value.source) if isinstance(value, NotEvaluated) else value


def _given(prefix: dict[str, Any], argv: list[Any]) -> dict[str, Any]:
    """What a ``bash -c`` gives its commands: its ``X=v`` (``@env``) and the words after CODE (``@argv``)."""
    extra: dict[str, Any] = {"@env": prefix} if prefix else {}
    if argv:
        extra["@argv"] = argv
    return extra


def _carried(value: Any, extra: dict[str, Any], launchers: dict[str, Any]) -> Any:
    """A command of a child shell with what its parent gave it: ``@env`` (its own ``X=v`` win),
    ``@argv``, and the launchers it runs under."""
    if not isinstance(value, dict):
        return value
    out = {**extra, **value}
    if launchers:
        out["@launcher"] = _chained(launchers, value.get("@launcher", {}))
    if "@env" in extra and isinstance(value.get("@env"), dict):
        out["@env"] = {**extra["@env"], **value["@env"]}
    return out


def _chained(outer: dict[str, Any], inner: dict[str, Any]) -> dict[str, Any]:
    """The launchers a child shell's command runs under: its parent's, then its own; one of a name
    already there numbered (``timeout 5 bash -c 'timeout 6 cmd'`` keeps both limits, as
    ``split_launchers`` keeps ``nohup nohup``), never written over the parent's."""
    out = dict(outer)
    for key, flags in inner.items():
        out[key if key not in out else f"{key} #{len(out) + 1}"] = flags
    return out


def _takes_away(options: list[str]) -> bool:
    """``declare +x X`` takes an attribute away (X no longer exported): kept as source."""
    return any(option.startswith("+") for option in options)


def _makes_readonly(keyword: str, options: list[str]) -> bool:
    """``readonly X``, ``declare -r X``: read-only variables (``readonly -f`` names functions)."""
    letters = "".join(option[1:] for option in options if option[0] == "-")
    return "f" not in letters and (keyword == "readonly" or "r" in letters)


_BRACKET = re.compile(r"(?<!\\)(?:\\\\)*\[")


def _shopt_now(rest: list[str | None], name: str, now: bool | None, maybe: bool) -> bool | None:
    """The option ``name`` (lastpipe, nullglob) after ``shopt`` with these words (None: not known,
    as where it runs under a condition that leaves the setting open)."""
    letters = "".join(word[1:] for word in rest if word and word[0] == "-")
    if "o" in letters or not {name, None} & set(rest):
        return now
    setting = None if None in rest else {"s": True, "u": False}.get(letters.strip("pq")[-1:], now)
    return setting if not maybe or setting == now else None


def _sets_exit_trap(rest: list[Field]) -> bool:
    """Do ``trap``'s words (after ``--``) give code, or ``-``, for EXIT (not ``-p``/``-l`` or a
    signal alone)?"""
    if len(rest) < 2 or (rest[0].text.startswith("-") and rest[0].text != "-"):
        return False
    return bool({"EXIT", "0", "SIGEXIT"} & {w.text for w in rest[1:] if w.known})


def _allexport_after(rest: list[str | None], now: bool | None) -> bool | None:
    """allexport after ``set`` with these words (None: not known): ``-a`` in a cluster of
    options, or ``-o allexport``, sets it, their ``+`` forms clear it."""
    for word, named in _set_options(rest):
        if word is None:
            return None
        if "a" in word[1:] or named == "allexport":
            now = word[0] == "-"
    return now


def _set_options(rest: list[str | None]) -> Iterator[tuple[str | None, str | None]]:
    """``set``'s options as (option word, the name an ``-o`` takes): up to ``--``, ``-`` or the
    first word that is no option; a word not known (None) may be one."""
    words = iter(rest)
    for word in words:
        if word is None:
            yield None, None
        if word is None or word in ("-", "--") or word[0] not in "-+":
            return
        yield word, next(words, None) if word[1:].endswith("o") else None


def _known_shift(head: str, rest: list[str | None], state: str) -> int | None:
    """The positionals' whole known shift after this ``shift`` (from the state ``""`` or ``shift
    N``); None where it is not a shift by a known count from such a state."""
    done = re.fullmatch(r"(?:shift (\d+))?", state)
    count = rest[0] if rest else "1"
    if head != "shift" or done is None or count is None or not count.isdigit():
        return None
    return int(done.group(1) or 0) + int(count)


def _sets_positionals(rest: list[str | None]) -> bool:
    """Does ``set`` with these words give new positional parameters (``set -- a b``, ``set x``,
    ``set -e -- x``), rather than only options (``set -euo pipefail``, ``set +x``)?"""
    after_o = False
    for word in rest:
        if word is None or word in ("--", "-"):
            return True
        if after_o:
            after_o = False
        elif word[:1] in "-+":
            after_o = word[1:].endswith("o")
        else:
            return True
    return False


# `builtin` / `command [-p]` (any number, `--` after each) before a builtin that binds or runs code
_PREFIXED = re.compile(
    r"(?:(?:builtin|command(?:[ \t]+-p)?)(?:[ \t]+--)?[ \t]+)+"
    r"(?=(?:export|declare|typeset|local|readonly|unset|eval)(?:[ \t]|$))"
)


def _unprefixed(text: str) -> str | None:
    """The builtin a ``builtin``/``command`` prefix runs, as code (None when there is none)."""
    found = _PREFIXED.match(text)
    return None if found is None else text[found.end() :]


def _plain_read(words: list[Field]) -> bool:
    """``read [-r] [-d ''] NAME...``: the forms whose effect is known; any other option is not read."""
    rest = _read_operands([w.text for w in words[1:]])
    return bool(rest) and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) for name in rest)


def _read_operands(rest: list[str]) -> list[str]:
    """The words after ``read``'s options; none when an option's effect is not modelled (then no
    name is read as bound)."""
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "-d" and rest[:1] == [""]:
            rest.pop(0)
        elif option not in ("-r", "-s"):
            return []
    return rest


def _appended(old: Any, value: Any, known: bool) -> Any:
    """A known value after ``+=``: an array grows in place (a script of n appends stays linear), a
    word is glued onto the value (onto an array's first element, as bash appends to it)."""
    if isinstance(value, list):
        return _grown(old, value)
    glued = _glued(old, value, known)
    if _several(old):  # `A=(x y); A+=z` is `xz y`: the other elements stay
        old[0] = glued
        return old
    return glued


def _unset_names(word: str) -> list[str]:
    """The variable an ``unset`` word names when no expansion computes it (``'A[0]'`` is A)."""
    base = re.match(r"[\\'\"]*([A-Za-z_][A-Za-z0-9_]*)", word)
    return [base.group(1)] if base and not re.search(r"[$`]", word) else []


def _several(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 1


def _one_word(value: Any) -> bool:
    """Is a variable bound to one word (a scalar, or an array of one)?"""
    return isinstance(value, str) or isinstance(value, list) and len(value) == 1


def _grown(old: Any, words: list[Any]) -> list[Any]:
    """``A+=(x y)``: the array extended in place; a word (if any) becomes its first element."""
    if isinstance(old, list):
        old.extend(words)
        return old
    return [*([old] if old else []), *words]


def _glued(old: Any, word: str, known: bool) -> str:
    """``A+=x``: the word glued onto the value, or onto an array's first element; partly known
    when either part is."""
    first = old[0] if isinstance(old, list) and old else old or ""
    glued = first + word
    return Partial(glued) if not known or partial(first) else glued


def _built_by_appends(history: list[tuple[str, Any, int]]) -> bool:
    """One assignment then appends, none of them under a condition."""
    if len(history) < 2 or any(w for w, _, _ in history):
        return False
    return all(isinstance(v, dict) and "+=" in v for _, v, _ in history[1:])


def _history(history: list[tuple[str, Any, int]]) -> Any:
    """A variable's value when it was assigned once; else every assignment in order (a command run
    between two assignments saw the first, so keeping only the last could hide a change)."""
    if len(history) == 1 and not history[0][0]:
        return history[0][1]
    if all(not when for when, _, _ in history):
        return [value for _, value, _ in history]
    return [_guarded(value, when) for when, value, _ in history]


def _guarded(value: Any, when: str) -> dict[str, Any]:
    """One assignment of a history: its value, and the condition it was bound under if any."""
    return {"@value": value, **({"@when": when} if when else {})}


def _size(value: Any) -> int:
    return sum(len(v) for v in value) if isinstance(value, list) else len(str(value))


def _option_word(kind: str, text: str) -> bool:
    return kind == "word" and text.startswith(("-", "+"))


def _declared_word(text: str) -> str | None:
    """A declaration word as bash reads it once expanded, spelled so that it reads so as written:
    ``NAME=VALUE`` (the value quoted), ``NAME``, an option; None for anything bash refuses, and
    for a value bash may read as an array (``(1 2)``)."""
    found = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=)(.*)", text, re.DOTALL)
    if found:
        # `declare -a "a=(1 2)"` is an array to bash, `declare "a=(1 2)"` a string: not told here
        return None if found[3].startswith("(") else found[1] + found[2] + shlex.quote(found[3])
    return text if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[-+][A-Za-z]+", text) else None


def _time_program(node: Any, words: list[Field]) -> bool:
    """Whether a command run as ``time`` is the program ``/usr/bin/time``, not bash's keyword: its
    name not written as the bare word (``\\time``, ``"time"``, ``$T``: bash finds reserved words
    before it expands or unquotes any), or the command not first in its pipeline (``a | time -v
    b``: the keyword only starts a pipeline)."""
    name = node.child_by_field_name("name")
    if words[0].text != "time" or name is None:
        return False
    if name.text is None or name.text.decode() != "time":
        return True
    part = node.parent if node.parent is not None and node.parent.type == "redirected_statement" else node
    pipeline = part.parent
    return pipeline is not None and pipeline.type == "pipeline" and pipeline.named_children[0] != part


def _is_shell(words: list[Any]) -> bool:
    """Whether ``words`` run ``bash`` or ``sh`` (by any path)."""
    return bool(words) and isinstance(words[0], str) and os.path.basename(words[0]) in ("bash", "sh")
