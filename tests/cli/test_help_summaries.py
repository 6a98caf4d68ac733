"""`sweepgen --help` lists the commands from SUMMARIES (no command module imported): the listing
must be exactly click's own, built from the imported commands' help, at every width."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from sweepgen.cli import COMMANDS, SUMMARIES, main


@pytest.mark.parametrize("width", [20, 45, 80, 120, 200, 10_000])
def test_listing_is_clicks_own(width):
    ours, clicks = click.HelpFormatter(width=width), click.HelpFormatter(width=width)
    with click.Context(main) as ctx:
        main.format_commands(ctx, ours)
        click.Group.format_commands(main, ctx, clicks)  # imports every command for its help
    assert ours.getvalue() == clicks.getvalue()
    assert "diff" in ours.getvalue()


def test_every_command_has_a_summary_and_none_is_left_over():
    assert set(SUMMARIES) == set(COMMANDS)


def test_help_imports_no_command_module():
    code = (
        "import sys\nfrom sweepgen.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('sweepgen.cli.') and m.endswith('_cmd')),"
        " file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr.strip() == "[]"
    assert "cancel  Cancel the queued and running runs" in proc.stdout
