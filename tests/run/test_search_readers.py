"""`status` and `report` read a search's study journal without writing: no lock file made, no cut
last line healed, nothing opened to write, so a `cp -al` backup of a search folder (its journal has
two names) reads, and a shared runs folder is never written by a reading command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from search_support import REPO, RUN_ARGS, cli, sweepgen, write_search_project

SWEEP = Path("generated") / "fake_search"
CUT = b'{"op_code": 4, "worker_id": "cut-by-a-ki'  # a writer SIGKILLed mid-append

# an audit hook that logs, as JSON lines, every open for writing and every rename, removal, folder
# made, mode, owner or time changed and link made, before `python -m sweepgen` runs
_AUDIT = r"""
import json, os, runpy, sys
_log = open(os.environ.pop("READERS_AUDIT_LOG"), "a", buffering=1)
_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_CHANGE = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
           "os.link", "os.symlink", "os.utime", "shutil.rmtree", "shutil.move", "fcntl.flock"}
def _hook(event, args):
    if event == "open" and len(args) > 2 and isinstance(args[2], int):
        writes = args[2] & _WRITE
    elif event == "open":
        writes = isinstance(args[1], str) and any(c in args[1] for c in "wax+")
    else:
        writes = event in _CHANGE
    if writes:
        first = os.fsdecode(args[0]) if isinstance(args[0], (str, bytes)) else repr(args[0])
        _log.write(json.dumps({"e": event, "p": first}) + "\n")
sys.addaudithook(_hook)
sys.argv = ["-m", *sys.argv[1:]]
runpy.run_module("sweepgen", run_name="__main__", alter_sys=True)
"""


def _audited(root: Path, log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "READERS_AUDIT_LOG": str(log)}
    return subprocess.run(
        [sys.executable, "-c", _AUDIT, *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def _writes(log: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture(scope="module")
def backup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the project, the `cp -al` backup of a finished search's sweep folder) whose journal ends in
    a cut line and has no `.flock`: read by both tests below."""
    root = tmp_path_factory.mktemp("readers")
    write_search_project(root, {"n": 2})
    assert cli(root, "render", "specs/s.yaml").returncode == 0
    assert sweepgen(root, "run", str(SWEEP), *RUN_ARGS).returncode == 0
    copy = SWEEP.with_name("backup")
    subprocess.run(["cp", "-al", str(SWEEP), str(copy)], cwd=root, check=True)
    state = root / copy / ".search"
    assert (state / "study.journal").stat().st_nlink == 2
    (state / "study.journal.flock").unlink()  # a reader must not make it again
    with open(state / "study.journal", "ab") as fh:
        fh.write(CUT)
    return root, copy


def _reads_without_writing(root: Path, copy: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """``command`` on the backup: it succeeds, says the cut line, and opens nothing of the search
    to write (`status`: nothing at all); the journal is left as it was (a reader heals nothing)."""
    state = root / copy / ".search"
    before = (state / "study.journal").read_bytes()
    log = root / f"{command[0]}.audit"
    log.unlink(missing_ok=True)
    done = _audited(root, log, *command)
    said = f"{command} -> {done.returncode}\n{done.stdout}{done.stderr}"
    assert done.returncode in (0, 1) and "hard link" not in done.stderr, said
    assert "Traceback" not in done.stderr, said
    # said in every output: the terminal, each row of the JSON (a field), the page (a note)
    assert "is cut (a `sweepgen run` killed" in done.stdout + done.stderr, said
    opened = [w for w in _writes(log) if "study.journal" in w["p"] or ".search" in w["p"]]
    assert opened == [], said + str(opened)
    if command[0] == "status":  # status writes nothing at all
        assert _writes(log) == [], said
    assert (state / "study.journal").read_bytes() == before
    assert not (state / "study.journal.flock").exists()
    return done


def test_status_and_report_read_a_cp_al_backup_of_a_search_and_write_nothing_in_it(backup):
    root, copy = backup
    cut = (root / copy / ".search" / "study.journal").read_bytes().count(b"\n") + 1
    _reads_without_writing(root, copy, "status", str(copy))
    rows = json.loads(_reads_without_writing(root, copy, "status", str(copy), "--format", "json").stdout)
    assert rows and all(row["search_journal_cut_line"] == cut for row in rows), rows
    _reads_without_writing(root, copy, "report", str(copy))


@pytest.mark.plot
def test_the_report_page_of_a_search_names_its_journals_cut_line(backup):
    root, copy = backup
    cut = (root / copy / ".search" / "study.journal").read_bytes().count(b"\n") + 1
    _reads_without_writing(root, copy, "report", str(copy), "--html")
    (page,) = (root / "runs").rglob("report.html")
    assert f'id="search-cut">note: the study journal&#39;s line {cut} is cut' in page.read_text()


def test_a_study_loaded_to_read_opens_nothing_to_write_and_names_a_cut_line(tmp_path):
    import optuna

    from sweepgen.compile.spec.sampling.search_block import SearchBlock
    from sweepgen.run.search import study as search_study

    block = SearchBlock.model_validate({"n": 3, "metric": "m", "axes": {"x": {"uniform": [0.0, 1.0]}}})
    first = search_study.open_study(tmp_path, block)
    first.tell(first.ask({"x": optuna.distributions.FloatDistribution(0, 1)}), 0.5)
    journal = search_study.journal_path(tmp_path)
    os.link(journal, tmp_path / "backup.journal")  # `cp -al`: the journal has two names
    (journal.parent / "study.journal.flock").unlink()
    with open(journal, "ab") as fh:
        fh.write(CUT)
    before = journal.read_bytes()
    reread = search_study.load_study(tmp_path)
    assert reread is not None and [t.value for t in reread.get_trials()] == [0.5]
    assert search_study.cut_last_line(reread) == 5
    assert journal.read_bytes() == before and not (journal.parent / "study.journal.flock").exists()


def test_a_hard_linked_journal_in_a_folder_others_write_is_still_refused_to_readers(tmp_path):
    """Reading is allowed where the link is the person's own (``runfs.owners_name``); in a folder
    anyone can write, the journal's other name may be anyone's, and its text is never shown."""
    import optuna
    import pytest

    from sweepgen.compile.spec.sampling.search_block import SearchBlock
    from sweepgen.errors import ConfigError
    from sweepgen.run.search import study as search_study

    block = SearchBlock.model_validate({"n": 3, "metric": "m", "axes": {"x": {"uniform": [0.0, 1.0]}}})
    first = search_study.open_study(tmp_path, block)
    first.tell(first.ask({"x": optuna.distributions.FloatDistribution(0, 1)}), 0.5)
    journal = search_study.journal_path(tmp_path)
    os.link(journal, tmp_path / "other.journal")
    journal.parent.chmod(0o777)  # a folder others write
    try:
        with pytest.raises(ConfigError, match="hard link in a folder others can write"):
            search_study.load_study(tmp_path)
    finally:
        journal.parent.chmod(0o755)
