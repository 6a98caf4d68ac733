"""Every input-controlled cost of the readers is bounded: an exit-2 error within seconds."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

BOMBS = {
    "doubling.sh": "A=xxxxxxxxxxxxxxxx\n" + "A=$A$A\n" * 40,
    "shared.py": "a = [1]\n" + "a = [a, a]\n" * 60,
    "loops.py": "for i in range(100000):\n    for j in range(100000):\n        x = i * j\n",
    "laughs.yaml": "a0: &a0 [x, x]\n"
    + "".join(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}]\n" for i in range(1, 30)),
    "deep.json": "[" * 100_000 + "]" * 100_000,
    "deep.py": "x = " + "[" * 5000 + "]" * 5000 + "\n",
    "bash_c.sh": "bash -c " + '"bash -c \\' * 50 + '"\n',
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_explosive_inputs_are_refused_not_run(tmp_path, name):
    path = tmp_path / name
    path.write_text(BOMBS[name])
    result = CliRunner().invoke(main, ["diff", str(path), str(path)])
    must_refuse = name in ("doubling.sh", "shared.py", "loops.py", "laughs.yaml")
    assert result.exit_code in ((2,) if must_refuse else (0, 2)), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert f"{path}" in result.stderr and "error:" in result.stderr


@pytest.mark.parametrize("suffix", [".sh", ".yaml"])
def test_a_launch_argument_over_4300_digits_is_compared_as_exact_digits(tmp_path, suffix):
    # Python refuses int() of a decimal over 4,300 digits: such a value once ended in exit 70
    line = "n = {}\n" if suffix == ".sh" else "n: {}\n"
    a, b, c = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}", tmp_path / f"c{suffix}"
    a.write_text(line.format("7" * 5000))
    b.write_text(line.format("7" * 5001))
    c.write_text(line.format("7" * 5000))
    changed = CliRunner().invoke(main, ["diff", str(a), str(b)])
    assert changed.exit_code == 1 and "1 change" in changed.output, changed.output
    same = CliRunner().invoke(main, ["diff", str(a), str(c)])
    assert same.exit_code == 0 and "no differences" in same.output, same.output
