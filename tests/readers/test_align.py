"""Alignment instead of position: an inserted run, argument or row is one change."""

from __future__ import annotations

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.readers.align import align, realign_occurrences, signature


def test_signatures_tell_types_apart():
    assert signature(1) != signature(1.0) != signature(True)
    assert signature({"a": [1, 2]}) == signature({"a": [1, 2]})
    assert signature({"a": [1, 2]}) != signature({"a": (1, 2)})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=12), st.lists(st.integers(0, 3), max_size=12))
def test_property_alignment_covers_both_sides_in_order(old, new):
    pairs = align(old, new)
    assert [i for i, _ in pairs if i is not None] == list(range(len(old)))
    assert [j for _, j in pairs if j is not None] == list(range(len(new)))


def test_repeated_commands_meet_the_command_they_were():
    old = {"t.py": {"--env": "a"}, "t.py #2": {"--env": "b"}, "t.py #3": {"--env": "c"}, "mkdir": {}}
    new = {
        "t.py": {"--env": "a"},
        "t.py #2": {"--env": "x"},
        "t.py #3": {"--env": "b"},
        "t.py #4": {"--env": "c"},
    }
    assert realign_occurrences(old, new) == {
        "t.py #2": "t.py #2 (inserted)",
        "t.py #3": "t.py #2",
        "t.py #4": "t.py #3",
    }


def _script(runs: list[str]) -> str:
    return "".join(f"python train.py --config-name {r} trainer.experiment_name={r}-ppo\n" for r in runs)


def test_one_inserted_run_among_many_is_one_change(tmp_path):
    runs = [f"env{i}" for i in range(12)]
    (tmp_path / "a.sh").write_text(_script(runs))
    (tmp_path / "b.sh").write_text(_script([*runs[:5], "countdown", *runs[5:]]))
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "a.sh"), str(tmp_path / "b.sh")])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "1 change"
    assert 'commands["train.py #6 (inserted)"]' in result.stdout
    (tmp_path / "c.sh").write_text(_script(runs[:5] + runs[6:]))
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "a.sh"), str(tmp_path / "c.sh")])
    assert result.stdout.splitlines() == [
        'commands["train.py #6"]: '
        + repr(
            {"--config-name": "env5", "trainer": {"experiment_name": "env5-ppo"}, "@launcher": {"python": {}}}
        )
        + " -> <absent>",
        "1 change",
    ]


def test_a_flag_inserted_in_plain_arguments_is_one_change(tmp_path):
    (tmp_path / "a.sh").write_text("./run -- a b c d e f\n")
    (tmp_path / "b.sh").write_text("./run -- a b X c d e f\n")
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "a.sh"), str(tmp_path / "b.sh")])
    assert result.stdout.splitlines() == ["commands[\"./run\"].@args[2]: <absent> -> 'X'", "1 change"]
