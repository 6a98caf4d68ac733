"""One way to print a table in every command: rich text for people, CSV or JSON for programs.

``--format text|csv|json`` means the same in list, render --dry-run, status and report: text is a
rich table (full width off a terminal), csv is RFC 4180 with a header row, json is a list of
objects keyed by column name (with typed values where the command has them).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from sweepgen.cli._console import safe_text
from sweepgen.escape import csv_cell, line
from sweepgen.formats import jsonfloat

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("text", "csv", "json")


def format_option(default: str = "text") -> Callable[[F], F]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=default,
        show_default=True,
        help="text: a table for people; csv / json: for programs (full values, never cut)",
    )


def emit(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str,
    *,
    json_doc: Any = None,
) -> None:
    """Print ``rows`` under ``columns``; ``json_doc`` replaces the default JSON rows when given."""
    if fmt == "json":
        _emit_json(columns, rows, json_doc)
    elif fmt == "csv":
        _emit_csv(columns, rows)
    else:
        _emit_table(title, columns, rows)


def _emit_json(columns: Sequence[str], rows: Sequence[Sequence[Any]], json_doc: Any) -> None:
    doc = json_doc if json_doc is not None else [dict(zip(columns, row)) for row in rows]
    click.echo(json.dumps(jsonfloat.tagged(doc), indent=2, allow_nan=False, ensure_ascii=False))


def _emit_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    # names and values are data a spreadsheet must not read as a formula (escape.csv_cell)
    writer.writerow([csv_cell(c) for c in columns])
    writer.writerows([[csv_cell(_text(cell)) for cell in row] for row in rows])
    click.echo(safe_text(buf.getvalue()), nl=False)  # a run named `::error::x` starts a row


def _emit_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.table import Table

    from sweepgen.cli._console import stdout

    # cells are data, never rich markup ("[/INST]" would crash): the console reads none (_console);
    # control characters and line breaks escaped too: ESC sequences must not reach the terminal
    table = Table(title=line(title))
    for column in columns:
        table.add_column(line(column))
    for row in rows:
        table.add_row(*(line(_text(cell)) for cell in row))
    stdout().print(table)


def _text(cell: Any) -> str:
    if cell is None:
        return "-"
    return cell if isinstance(cell, str) else json.dumps(cell)
