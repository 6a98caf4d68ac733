"""Loading configs for diff: chosen by suffix, YAML 1.2 rules, errors with file:line:col, and the
shell/sbatch command-line reader."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.errors import UserError
from sweepgen.readers.configfile import load_config
from sweepgen.readers.pyast import Ref
from sweepgen.readers.shellconfig import parse_shell_config

FIXTURES = Path(__file__).parent / "fixtures" / "pyconfigs"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_yaml_uses_yaml_1_2_rules(tmp_path):
    path = _write(tmp_path, "c.yaml", "lr: 1e-5\nflag: on\nanswer: no\nlabels: {1: cat}\n")
    assert load_config(path) == {"lr": 1e-5, "flag": "on", "answer": "no", "labels": {1: "cat"}}


def test_yml_suffix_and_empty_document(tmp_path):
    assert load_config(_write(tmp_path, "c.yml", "")) is None


def test_yaml_duplicate_key_is_an_error_with_its_line(tmp_path):
    path = _write(tmp_path, "c.yaml", "a: 1\nb: 2\na: 3\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert (info.value.location.path, info.value.location.line) == (path, 3)
    assert "duplicate key" in info.value.message


def test_yaml_syntax_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, "c.yaml", "a:\n  b: [1, 2\nc: 3\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert info.value.location.line >= 2 and info.value.location.col >= 1


def test_json(tmp_path):
    path = _write(tmp_path, "c.json", '{"a": {"b": [1, 2.0, true, null]}}')
    assert load_config(path) == {"a": {"b": [1, 2.0, True, None]}}


def test_json_syntax_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, "c.json", '{\n  "a": 1,\n  "b": }\n')
    with pytest.raises(UserError) as info:
        load_config(path)
    assert (info.value.location.line, info.value.location.col) == (3, 8)


def test_json_duplicate_key_is_an_error(tmp_path):
    path = _write(tmp_path, "c.json", '{\n  "b": {"a": 1},\n  "c": 0, "a": 1,\n\t"a": 2}')
    with pytest.raises(UserError, match="duplicate key 'a'") as info:
        load_config(path)
    assert (info.value.location.line, info.value.location.col) == (4, 2)


def test_toml(tmp_path):
    path = _write(tmp_path, "c.toml", "[training]\nseed = 42\nlr = 3e-6\ntags = ['a']\n")
    assert load_config(path) == {"training": {"seed": 42, "lr": 3e-6, "tags": ["a"]}}


def test_toml_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, "c.toml", "[training]\nseed = 42\nseed = 43\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert info.value.location.line == 3 and info.value.location.col >= 1
    assert "invalid TOML" in info.value.message and "line 3" not in info.value.message


def test_python_goes_through_the_ast_reader():
    cfg = load_config(str(FIXTURES / "faster_rcnn" / "faster_rcnn_r101_fpn_1x_coco.py"))
    assert cfg["model"]["backbone"]["depth"] == 101


def test_unknown_suffix_is_refused_not_guessed(tmp_path):
    path = _write(tmp_path, "c.ini", "[a]\nb = 1\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert ".yaml" in info.value.hint and ".sbatch" in info.value.hint


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_config(str(tmp_path / "nope.yaml"))
    with pytest.raises(UserError, match="not a regular file"):
        load_config(str(tmp_path))


# shell and sbatch scripts ------------------------------------------------------------------------

SBATCH = """\
#!/bin/bash
#SBATCH --job-name=rm_A2_cosine --partition=gpu
#SBATCH -N 1
#SBATCH --gres gpu:1   # one GPU
set -euo pipefail
export HF_HOME=/scratch/hf OMP_NUM_THREADS=1
CUDA_VISIBLE_DEVICES=0 srun python -m rm.train \\
    --model Qwen/Qwen2.5-7B --lr 5e-6 --use_lora \\
    --delta -1e-3 --tag a --tag "b c" out_dir   # trailing comment
cat <<EOF > notes.txt
hello $USER --not-a-flag
EOF
#SBATCH --mem=8G
echo done && python eval.py --x=1 -- --kept
"""


def test_sbatch_script_becomes_directives_env_and_command_flags(tmp_path):
    cfg = load_config(_write(tmp_path, "a.sbatch", SBATCH))
    assert cfg == {
        # `--mem` comes after the first command: sbatch ignores it, so do we
        "sbatch": {"--job-name": "rm_A2_cosine", "--partition": "gpu", "-N": "1", "--gres": "gpu:1"},
        "env": {"HF_HOME": "/scratch/hf", "OMP_NUM_THREADS": "1"},
        "commands": {
            "set": {"-euo": "pipefail"},
            "srun python": {
                "-m": "rm.train",
                "--model": "Qwen/Qwen2.5-7B",
                "--lr": "5e-6",
                "--use_lora": True,
                "--delta": "-1e-3",
                "--tag": ["a", "b c"],
                "args": ["out_dir"],
                "env": {"CUDA_VISIBLE_DEVICES": "0"},
            },
            "cat > notes.txt": {"heredoc": "hello $USER --not-a-flag"},
            "echo done": {},
            "python eval.py": {"--x": "1", "args": ["--kept"]},
        },
    }


def test_sh_suffix_and_repeated_commands_are_numbered(tmp_path):
    cfg = load_config(_write(tmp_path, "run.sh", "python a.py --x 1\npython a.py --x 2\nthen python a.py\n"))
    assert cfg == {
        "commands": {
            "python a.py": {"--x": "1"},
            "python a.py #2": {"--x": "2"},
            "python a.py #3": {},
        }
    }


def test_an_assignment_before_export_is_kept():
    assert parse_shell_config("A=1 export B=2\n")["env"] == {"A": "1", "B": "2"}
    assert parse_shell_config("A=1 export B=2\n") != parse_shell_config("A=9 export B=2\n")
    assert parse_shell_config("A=1 export A=2\n")["env"] == {"A": "2"}


def test_a_here_string_is_not_a_here_document():
    cfg = parse_shell_config("python t.py --x 1 <<< EOF\necho hi\nEOF\n")
    assert "heredoc" not in cfg["commands"]["python t.py"]
    assert "echo hi" in cfg["commands"] and "EOF" in cfg["commands"]
    assert parse_shell_config("cat <<<in\n") != parse_shell_config("cat <<<other\n")


def test_quoted_multiline_argument_is_one_value():
    cfg = parse_shell_config("python t.py --prompt 'line one\nline two' --n 3\n")
    assert cfg["commands"]["python t.py"] == {"--prompt": "line one\nline two", "--n": "3"}


def test_unterminated_quote_is_an_error_with_its_line():
    with pytest.raises(UserError) as info:
        parse_shell_config("echo ok\npython t.py --name 'oops\n", "run.sh")
    assert (info.value.location.path, info.value.location.line) == ("run.sh", 2)


def test_unclosed_heredoc_is_an_error():
    with pytest.raises(UserError, match="here-document"):
        parse_shell_config("cat <<EOF\nbody\n", "run.sh")


def test_shell_values_stay_strings_so_spelling_changes_show():
    a = parse_shell_config("python t.py --lr 5e-6\n")
    b = parse_shell_config("python t.py --lr 0.000005\n")
    assert a != b


def test_python_ref_is_loaded_as_ref():
    cfg = load_config(str(FIXTURES / "flink_sweep_identity.py"))
    assert type(cfg["sweep"]["kwargs"]["config"]["kwargs"]["sampler"]["kwargs"]["dtype"]) is Ref


# property: flags written with shlex.quote read back as written ------------------------------------

_flag_names = st.from_regex(r"--[a-z][a-z_]{0,7}", fullmatch=True)
_values = st.one_of(
    st.just(True),  # a bare flag
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12).filter(
        lambda v: not v.startswith("-")
    ),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),  # negative numbers are values
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_flag_names, _values, min_size=1, max_size=6), st.booleans())
def test_property_command_line_flags_round_trip(flags, continued):
    parts = ["python", "train.py"]
    for name, value in flags.items():
        parts.append(name if value is True else f"{name} {shlex.quote(value)}")
    script = (" \\\n    " if continued else " ").join(parts) + "\n"
    assert parse_shell_config(script) == {"commands": {"python train.py": flags}}


def test_quoted_operators_are_arguments_and_substitutions_stay_verbatim():
    cfg = parse_shell_config(
        "python t.py --sep '&' --pipe \"a|b\" --stamp $(date +%s) --home ${HOME:-/root} "
        "--tick `id -u` --esc a\\ b > log.txt 2>&1 && echo ok # done\n"
    )
    assert cfg == {
        "commands": {
            "python t.py": {
                "--sep": "&",
                "--pipe": "a|b",
                "--stamp": "$(date +%s)",
                "--home": "${HOME:-/root}",
                "--tick": "`id -u`",
                "--esc": "a b",
                "args": [">", "log.txt", "2>&1"],
            },
            "echo ok": {},
        }
    }


def test_an_open_quote_in_a_directive_is_an_error():
    with pytest.raises(UserError) as info:
        parse_shell_config("#!/bin/bash\n#SBATCH --comment='oops\n", "job.sbatch")
    assert info.value.location.line == 2
