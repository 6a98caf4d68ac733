"""The diff corpus (tests/diff_corpus/README.md): exact change lists for configs in the styles RL
post-training teams use, every file equal to itself, and a fuzz test that no input is exit 70."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.cli import main

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path("tests") / "diff_corpus"
PAIRS = sorted(p.name for p in (REPO / CORPUS).iterdir() if p.is_dir())
STYLES = ("verl", "openrlhf", "openr1", "trl", "axolotl", "mmdet", "mmengine_new", "ml_collections",
          "detectron2", "hydra", "nanogpt", "megatron", "nemorl", "torchtune", "trlx", "dschat",
          "llamafactory", "gptneox", "litgpt", "skypilot")  # fmt: skip


def _files(name: str) -> tuple[str, str, list[str]]:
    folder = REPO / CORPUS / name
    a = sorted(folder.rglob("a.*"))[0]
    b = a.with_name("b" + a.suffix)
    args = (folder / "args").read_text().split() if (folder / "args").exists() else []
    return str(a.relative_to(REPO)), str(b.relative_to(REPO)), args


def _diff(*argv: str):
    return CliRunner().invoke(main, ["diff", *argv])


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the expected outputs name files relative to the repository


def test_the_corpus_is_large_and_covers_every_style():
    pairs = [p for p in PAIRS if not p.endswith("_error")]
    assert len(pairs) >= 40
    for style in STYLES:
        assert any(p.startswith(style) for p in PAIRS), style


@pytest.mark.parametrize("name", PAIRS)
def test_pair_gives_exactly_the_expected_change_list(name):
    a, b, args = _files(name)
    expected = (REPO / CORPUS / name / "expected.txt").read_text()
    result = _diff(a, b, *args)
    if name.endswith("_error"):
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines()[0] + "\n" == expected
        assert "Traceback" not in result.output
    else:
        assert result.stdout == expected
        assert result.exit_code == (0 if expected == "no differences\n" else 1)


@pytest.mark.parametrize("name", PAIRS)
def test_every_corpus_file_equals_itself(name):
    a, b, args = _files(name)
    for path in (a, b):
        result = _diff(path, path, *args)
        if result.exit_code == 2:  # the error pairs: the broken side fails the same way alone
            assert name.endswith("_error") and "Traceback" not in result.output
            continue
        assert (result.exit_code, result.stdout) == (0, "no differences\n"), path


def test_a_gate_can_name_every_changed_path():
    """Every path diff prints (Hydra keys, --flags, launcher flags, @when...) is a valid --allow glob."""
    for name in PAIRS:
        if name.endswith("_error"):
            continue
        a, b, args = _files(name)
        lines = _diff(a, b, *args).stdout.splitlines()[:-1]
        if not lines:
            continue
        paths = [line.split(": ", 1)[0] for line in lines]
        allow = [x for p in paths for x in ("--allow", p)]
        gated = _diff(a, b, *args, *allow)
        assert gated.exit_code == 0, (name, gated.output)
        assert _diff(a, b, *args, *allow[2:]).exit_code == 1, name


# fuzz: whatever the bytes, a reader answers with data or a located error, never a crash (exit 70)

_SNIPPETS = [
    "#!/bin/bash\n", "#SBATCH --nodes=2\n", "export A=1\n", "A=(x y\n", "${A[@]}", "$(", "<<EOF\n", "EOF\n",
    "python -m m a.b=1 --f v\n", "if [ x ]; then\n", "fi\n", "case $x in a) b;; esac\n", "'", '"', "\\\n",
    "ray job submit -- ", "torchrun --nproc_per_node 8 ", "bash -c \"", "&>> log ", "2>&1 ", "| tee f\n",
    "def get_config():\n  c = ConfigDict()\n  return c\n", "x = [i for i in range(3)]\n", "_base_ = 'x.py'\n",
    "with read_base():\n    from .a import *\n", "x = 10 ** 10 ** 10\n", "x = 'a' * 10 ** 9\n",
    "a: &a {b: 1}\n", "<<: *a\n", "- x\n", "defaults:\n  - m: r\n", "key: on\n", "{", "[", "\x00",
    "\ufeff", "\t", "x: ${y}\n", "y: ${.x}\n", "z: a_${oc.env:HOME}_${x}\n", "defaults: base.yaml\n",
    "defaults:\n  - model: x\n  - _self_\n", "n = " + "7" * 4400 + "\n", '{"n": ' + "9" * 4400 + "}",
    "x = '%0*d' % (10**9, 1)\n", "A+=(--f 1)\n", "X=a/$M/$T/c.yaml\n", "#SBATCH -N2 -t 1:00\n",
    "if os.environ.get('X'):\n  c['a'] = 1\n", "${A[@]} ", "${N:-4}",
]  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(_SNIPPETS) | st.text(max_size=12), max_size=12).map("".join),
    st.sampled_from([".sh", ".sbatch", ".py", ".yaml", ".json", ".toml"]),
    st.booleans(),
)
def test_fuzz_no_input_is_an_internal_error(tmp_path_factory, text, suffix, resolve):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / f"c{suffix}"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    result = _diff(str(path), str(path), *(["--resolve-bases"] if resolve else []))
    assert result.exit_code in (0, 2), (text, result.output)
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert "error:" in result.stderr
