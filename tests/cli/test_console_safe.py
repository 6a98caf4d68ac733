"""Every text the CLI's consoles write is data-safe: controls escaped, no line opens a CI workflow
command, whatever command printed it (a table cell, a title, a plain line)."""

from __future__ import annotations

import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import _console

_RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]")


@settings(deadline=None, max_examples=50)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(["a", ":", "\n", "\x1b", "[", "\u202e", "\r", " "]), max_size=30)
    )
)
def test_a_console_never_writes_a_control_or_a_workflow_command(cells: list[str]):
    from rich.table import Table

    console = _console._safe_console(file=io.StringIO(), width=200, highlight=False, soft_wrap=True)
    table = Table(title="".join(cells[:1]))
    table.add_column("name")
    for cell in cells:
        table.add_row(cell)
        console.print(cell, markup=False)
    console.print(table)
    out = console.file.getvalue()
    assert not _RAW.search(out)
    assert not re.search(r"(?m)^[ \t]*::", out)


def test_safe_text_keeps_plain_text_and_line_breaks():
    assert _console.safe_text("a: b\nc::d") == "a: b\nc::d"
    assert _console.safe_text("x\n::error::y") == "x\n\\x3a:error::y"
    assert _console.safe_text("::set-output") == "\\x3a:set-output"
    assert _console.safe_text("  ::x") == "  \\x3a:x"
