"""A rendered batch script whose #SBATCH directives sbatch would ignore or refuse stops the render
(compile/output/verify/sbatch_directives.py): a directive below the first command (sbatch stops reading
there, so the value is silently not applied), a first line that is not `#!` (sbatch refuses the
script), a directive with a quote left open (sbatch refuses it). Scripts sbatch reads as written,
and `#SBATCH` text that is no directive (in a here-document), pass."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main
from sweepgen.compile.output.verify import readback

HEAD = "#!/bin/bash\n#SBATCH --job-name=x\n"


@pytest.mark.parametrize(
    "text, line, col, words",
    [
        (
            HEAD + "set -euo pipefail\n#SBATCH --time=10\nsrun python t.py\n",
            4,
            1,
            "stops reading directives at the first command (line 3)",
        ),
        (HEAD + "\n  module load cuda\n#SBATCH --mem=8G\n", 5, 1, "sbatch ignores this #SBATCH line"),
        ("\n" + HEAD + "srun python t.py\n", 1, 1, "its first line must be `#!`"),
        ("#SBATCH --time=10\n#!/bin/bash\nsrun python t.py\n", 1, 1, "its first line must be `#!`"),
        (HEAD + '#SBATCH --job-name="my run\nsrun python t.py\n', 3, 20, "a quote is not closed"),
        ("#!/usr/bin/env python3\n#SBATCH -N 1\nimport os\n#SBATCH --time=5\n", 4, 1, "sbatch ignores"),
    ],
)
def test_a_directive_sbatch_ignores_or_refuses_is_found_where_it_is(text, line, col, words):
    problem = readback.READERS[".sbatch"](text)
    assert problem is not None
    assert problem[:2] == (line, col) and words in problem[2], problem


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "#SBATCH --time=10\n\n# a comment\n   # an indented one\n#SBATCH --mem=8G\nsrun python t.py\n",
        HEAD + "srun python t.py\n##SBATCH --time=10\n# SBATCH --mem=8G\n",  # commented-out: no directive
        HEAD + "cat > inner.sbatch <<'EOF'\n#!/bin/bash\n#SBATCH --time=5\nEOF\nsbatch inner.sbatch\n",
        HEAD + '#SBATCH --comment=\'a # b\' # why\n#SBATCH --job-name="a \\"b"\nsrun t\n',
        "\necho no directives at all\n",
        "#!/bin/bash\nsrun python t.py  # #SBATCH in a comment of a command line\n",
    ],
)
def test_scripts_sbatch_reads_as_written_pass(text):
    assert readback.READERS[".sbatch"](text) is None


def _project(root: Path, template: str) -> None:
    (root / "specs").mkdir()
    (root / "templates").mkdir()
    (root / "templates/job.sbatch.j2").write_text(template)
    (root / "specs/s.yaml").write_text(
        "sweepgen: 1\nname: s\ntemplate: ../templates/job.sbatch.j2\n"
        'output: "{{ variant.name }}.sbatch"\nbase: {time: 10, lr: 0.1}\ngrid:\n  time: [10, 20]\n'
    )


def test_a_grid_over_a_directive_below_the_first_command_stops_the_render(tmp_path, monkeypatch):
    # every variant's file differs (so no dead axis), yet sbatch would give each job the same time
    monkeypatch.chdir(tmp_path)
    _project(
        tmp_path,
        "#!/bin/bash\n#SBATCH --job-name=s\nset -e\n#SBATCH --time={{ time }}\n"
        "srun python t.py --lr {{ lr }}\n",
    )
    result = CliRunner().invoke(main, ["render", "specs/s.yaml"])
    assert result.exit_code == 2, result.output
    assert (
        "specs/s.yaml:3:11: error: variant 'time10': time10.sbatch line 5, column 1: sbatch ignores"
        in result.output
    )
    assert not (tmp_path / "generated").exists()


def test_a_template_whose_comment_leaves_the_first_line_blank_stops_the_render(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, "{# a job per variant #}\n#!/bin/bash\n#SBATCH --time={{ time }}\nsrun python t.py\n")
    result = CliRunner().invoke(main, ["render", "specs/s.yaml"])
    assert result.exit_code == 2 and "first line must be `#!`" in result.output, result.output


def _sbatch_time(script: str, tmp_path: Path) -> str | None:
    """The time limit a real sbatch gives ``script`` (held, never run); None when it refuses it."""
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    submitted = subprocess.run(
        ["sbatch", "--hold", "--parsable", str(path)], capture_output=True, text=True, cwd=tmp_path
    )
    if submitted.returncode != 0:
        return None
    job = submitted.stdout.strip().split(";")[0]
    try:
        shown = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, check=True)
        return next(w.split("=", 1)[1] for w in shown.stdout.split() if w.startswith("TimeLimit="))
    finally:
        subprocess.run(["scancel", job], capture_output=True)


@pytest.mark.slurm
@pytest.mark.slow
@pytest.mark.parametrize(
    "script, sbatch_reads, flagged",
    [
        (HEAD + "#SBATCH --time=3\nsrun true\n#SBATCH --time=7\n", "00:03:00", True),  # 7 ignored
        (HEAD + "#SBATCH --time=3\n\n   # note\n#SBATCH --time=7\nsrun true\n", "00:07:00", False),
        (HEAD + "#SBATCH --time=3\ncat > x <<'EOF'\n#SBATCH --time=7\nEOF\n", "00:03:00", False),  # text
        ("\n" + HEAD + "#SBATCH --time=3\nsrun true\n", None, True),  # refused: no #! on line 1
        (HEAD + '#SBATCH --time=3\n#SBATCH --comment="open\nsrun true\n', None, True),  # the quote
    ],
)
def test_the_rule_is_what_a_real_sbatch_does(script, sbatch_reads, flagged, slurm_cluster, tmp_path):
    assert _sbatch_time(script, tmp_path) == sbatch_reads
    assert (readback.READERS[".sbatch"](script) is not None) == flagged
