"""`sweepgen diff` through the real CLI funnel: output, exit codes 0/1/2, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pyconfigs"
REPO = Path(__file__).resolve().parents[2]
IDENTITY = str(FIXTURES / "flink_sweep_identity.py")
COMA = str(FIXTURES / "flink_sweep_coma_advantage.py")
STREAMER = "sweep.kwargs.config.kwargs.debate_streamer.kwargs"


def _diff(*args: str):
    return CliRunner().invoke(main, ["diff", *args])


def _yaml(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_equal_files_exit_0(tmp_path):
    a = _yaml(tmp_path, "a.yaml", "x: 1\ny: [1, 2]\n")
    b = _yaml(tmp_path, "b.json", '{"y": [1, 2], "x": 1}')
    result = _diff(a, b)
    assert (result.exit_code, result.stdout) == (0, "no differences\n")


def test_differences_without_allow_exit_1_like_diff(tmp_path):
    a = _yaml(tmp_path, "a.yaml", "lr: 1\nseed: 42\nname: x\n")
    b = _yaml(tmp_path, "b.yaml", "lr: 1.0\nseed: 7\nextra: true\n")
    result = _diff(a, b)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "extra: <absent> -> True",
        "lr: 1 (int) -> 1.0 (float)",
        "name: 'x' -> <absent>",
        "seed: 42 -> 7",
        "4 changes",
    ]


def test_flink_sweeps_differ_only_in_the_streamer_reward_shaping_and_the_name():
    result = _diff(IDENTITY, COMA)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        # a docstring is documentation, never a difference (it was reported before)
        f"{STREAMER}.reward_shaping_params: <absent> -> {{'n_rollouts_per_prompt': 4}}",
        f"{STREAMER}.reward_shaping_strategy: <absent> -> 'coma_advantage'",
        "sweep.kwargs.name: 'smollm_135m_math500_identity' -> 'smollm_135m_math500_coma_advantage'",
        "3 changes",
    ]


def test_allow_globs_turn_diff_into_a_gate():
    allowed = [
        "--allow",
        f"{STREAMER}.reward_shaping_*",
        "--allow",
        "sweep.kwargs.name",
        "--allow",
        "__doc__",
    ]
    ok = _diff(IDENTITY, COMA, *allowed)
    assert ok.exit_code == 0 and ok.stdout.endswith("3 changes, all allowed\n")
    deep = _diff(
        IDENTITY,
        COMA,
        "--allow",
        "**.reward_shaping_params.**",
        "--allow",
        "**.reward_shaping_strategy",
        "--allow",
        "sweep.kwargs.name",
        "--allow",
        "__doc__",
    )
    assert deep.exit_code == 0
    gate = _diff(IDENTITY, COMA, "--allow", f"{STREAMER}.reward_shaping_*")
    assert gate.exit_code == 1
    refused = [line for line in gate.stdout.splitlines() if line.endswith("[not allowed]")]
    assert [line.split(":")[0] for line in refused] == ["sweep.kwargs.name"]
    assert gate.stdout.endswith("3 changes, 1 not allowed by --allow\n")


def test_mmdet_child_configs_diff_on_their_own_assignments():
    result = _diff(
        str(FIXTURES / "faster_rcnn" / "faster_rcnn_r101_fpn_1x_coco.py"),
        str(FIXTURES / "faster_rcnn" / "faster_rcnn_r101_fpn_2x_coco.py"),
    )
    assert result.exit_code == 1
    paths = [line.split(":")[0] for line in result.stdout.splitlines()[:-1]]
    assert paths == ["max_epochs", "param_scheduler", "train_cfg"]


def test_json_format_is_a_machine_readable_report(tmp_path):
    a = _yaml(tmp_path, "a.yaml", "s: {strategy: identity}\nseed: 1\n")
    b = _yaml(tmp_path, "b.yaml", "s: {strategy: coma, params: {n: 4}}\nseed: 1.0\n")
    result = _diff(a, b, "--format", "json", "--allow", "s.**")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["equal"] is False and report["ok"] is False and report["allow"] == ["s.**"]
    assert report["changes"] == [
        {
            "path": "s.params",
            "kind": "added",
            "old": None,
            "new": {"n": 4},
            "old_type": None,
            "new_type": "dict",
            "allowed": True,
            "old_at": None,
            "new_at": f"{b}:1",
        },
        {
            "path": "s.strategy",
            "kind": "changed",
            "old": "identity",
            "new": "coma",
            "old_type": "str",
            "new_type": "str",
            "allowed": True,
            "old_at": f"{a}:1",
            "new_at": f"{b}:1",
        },
        {
            "path": "seed",
            "kind": "type_changed",
            "old": 1,
            "new": 1.0,
            "old_type": "int",
            "new_type": "float",
            "allowed": False,
            "old_at": f"{a}:2",
            "new_at": f"{b}:2",
        },
    ]


def test_json_format_for_equal_configs(tmp_path):
    a = _yaml(tmp_path, "a.yaml", "x: 1\n")
    report = json.loads(_diff(a, a, "--format", "json").stdout)
    assert report["equal"] is True and report["ok"] is True and report["changes"] == []


@pytest.mark.parametrize(
    ("files", "extra", "expected"),
    [
        (("a.yaml", "missing.yaml"), [], "missing.yaml: error: no such file"),
        (("a.yaml", "bad.py"), [], "bad.py:2:"),
        (("a.yaml", "b.ini"), [], "cannot tell the format"),
        # dotenv decodes `\t` in double quotes, bash does not: no reader, and `diff -u` named
        ((".env", "prod.env"), [], ".env: error: a .env file has no reader"),
        (("a.yaml", "a.yaml"), ["--allow", "a..b"], "invalid --allow glob"),
        (("a.yaml", "a.yaml"), ["--format", "xml"], "Invalid value for '--format'"),
        (("a.yaml",), [], "Missing argument 'B'"),
    ],
)
def test_bad_input_exits_2_without_traceback(tmp_path, files, extra, expected):
    _yaml(tmp_path, "a.yaml", "seed: 1\n")
    _yaml(tmp_path, "bad.py", "x = 1\ny = = 2\n")
    _yaml(tmp_path, "b.ini", "[x]\n")
    _yaml(tmp_path, ".env", 'A="a\\tb"\n')
    _yaml(tmp_path, "prod.env", "A='a\\tb'\n")
    result = _diff(*[str(tmp_path / f) for f in files], *extra)
    assert result.exit_code == 2
    assert expected in result.stderr
    assert "Traceback" not in result.output


def test_an_allow_glob_matching_nothing_is_a_warning_not_a_verdict(tmp_path):
    a = _yaml(tmp_path, "a.yaml", "seed: 1\n")
    b = _yaml(tmp_path, "b.yaml", "seed: 2\n")
    same = _diff(a, a, "--allow", "seeed")
    assert same.exit_code == 0
    assert same.stderr == "warning: --allow 'seeed' matches no path in either config; did you mean seed?\n"
    assert _diff(a, b, "--allow", "seeed").exit_code == 1


def test_sbatch_scripts_diff_on_their_flags(tmp_path):
    base = (
        "#!/bin/bash\n#SBATCH --partition=gpu\n"
        "python -m rm.train --lr 5e-6 --steps 1000 \\\n  --out runs/{}\n"
    )
    a = _yaml(tmp_path, "A1.sbatch", base.format("A1"))
    b = _yaml(
        tmp_path, "A2.sbatch", base.format("A2").replace("--steps 1000", "--steps 1000 --scheduler cosine")
    )
    result = _diff(a, b, "--allow", "commands.*.--out", "--allow", "commands.*.--scheduler")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        # commands are keyed by program (the module after -m), not by their first word
        "commands[\"rm.train\"].--out: 'runs/A1' -> 'runs/A2'",
        "commands[\"rm.train\"].--scheduler: <absent> -> 'cosine'",
        "2 changes, all allowed",
    ]


def test_console_script_end_to_end(tmp_path):
    a = _yaml(tmp_path, "a.toml", "[t]\nseed = 42\n")
    b = _yaml(tmp_path, "b.yaml", "t: {seed: 7}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "sweepgen", "diff", a, b], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "t.seed: 42 -> 7\n1 change\n", "")


# the shipped worked example ----------------------------------------------------------------------

SWEEP = REPO / "generated" / "reward_shaping_comparison"
SHAPING = "sweep.kwargs.config.kwargs.debate_streamer.kwargs.reward_shaping_"


def committed(sweep: Path, spec: str) -> None:
    """The worked examples are committed renderings: a missing one fails these tests, never skips them."""
    assert (sweep / "sweep.lock.json").is_file(), (
        f"{sweep.relative_to(REPO)} is not rendered: run `sweepgen render specs/{spec}` and commit it"
    )


@pytest.fixture
def example_rendered() -> None:
    committed(SWEEP, "reward_shaping.yaml")


needs_example = pytest.mark.usefixtures("example_rendered")


@needs_example
def test_generated_identity_and_coma_differ_only_in_the_streamer_reward_shaping_arguments():
    a, b = str(SWEEP / "sweep_identity.py"), str(SWEEP / "sweep_coma_advantage.py")
    plain = _diff(a, b)
    assert plain.exit_code == 1
    assert plain.stdout.splitlines() == [
        f"{SHAPING}params: <absent> -> {{'n_rollouts_per_prompt': 4}}",
        f"{SHAPING}strategy: <absent> -> 'coma_advantage'",
        "2 changes",
    ]
    assert _diff(a, b, "--allow", "**.debate_streamer.kwargs.reward_shaping_*").exit_code == 0
    assert _diff(a, b, "--allow", f"{SHAPING}strategy", "--allow", f"{SHAPING}params.**").exit_code == 0
    assert _diff(a, b, "--allow", f"{SHAPING}strategy").exit_code == 1
    assert _diff(a, b, "--allow", "sweep.kwargs.config.kwargs.trainer.**").exit_code == 1


@needs_example
def test_every_pair_of_generated_variants_differs_only_in_reward_shaping():
    files = sorted(SWEEP.glob("sweep_*.py"))
    assert len(files) == 5
    for a in files:
        for b in files:
            result = _diff(str(a), str(b), "--allow", "**.debate_streamer.kwargs.reward_shaping_*.**")
            assert result.exit_code == 0, (a.name, b.name, result.output)
            assert (result.stdout == "no differences\n") == (a == b)
            shaping = _diff(str(a), str(b), "--allow", "**.debate_streamer.kwargs.reward_shaping_strategy")
            assert shaping.exit_code == (0 if a == b else 1)


@needs_example
def test_spec_variants_diff_like_their_rendered_files():
    spec = str(REPO / "specs" / "reward_shaping.yaml")
    result = _diff(
        f"{spec}:identity", f"{spec}:coma_advantage", "--allow", "debate_streamer.reward_shaping_*"
    )
    assert result.exit_code == 0
    assert [line.split(":")[0] for line in result.stdout.splitlines()[:-1]] == [
        "debate_streamer.reward_shaping_params",
        "debate_streamer.reward_shaping_strategy",
    ]
    missing = _diff(f"{spec}:identity", f"{spec}:coma")
    assert missing.exit_code == 2 and "no variant named 'coma'" in missing.stderr


def test_resolve_bases_compares_what_mmdet_configs_evaluate_to():
    r101 = str(FIXTURES / "faster_rcnn" / "faster_rcnn_r101_fpn_1x_coco.py")
    r50 = str(FIXTURES / "faster_rcnn" / "faster_rcnn_r50_fpn_1x_coco.py")
    as_written = _diff(r101, r50)
    assert [line.split(":")[0] for line in as_written.stdout.splitlines()[:-1]] == ["_base_", "model"]
    resolved = _diff("--resolve-bases", r101, r50)
    assert resolved.exit_code == 1
    assert resolved.stdout.splitlines() == [
        "model.backbone.depth: 101 -> 50",
        "model.backbone.init_cfg.checkpoint: 'torchvision://resnet101' -> 'torchvision://resnet50'",
        "2 changes",
    ]
    gate = _diff(
        "--resolve-bases",
        r101,
        r50,
        "--allow",
        "model.backbone.depth",
        "--allow",
        "model.backbone.init_cfg.checkpoint",
    )
    assert gate.exit_code == 0


RM = REPO / "generated" / "rm_ablation"


@pytest.fixture
def rm_rendered() -> None:
    committed(RM, "rm_ablation.yaml")


needs_rm = pytest.mark.usefixtures("rm_rendered")
LADDER = [
    ("A1_none", "A2_scheduler", ["--output_dir", "--scheduler", "--warmup_steps"]),
    ("A2_scheduler", "A3_label_smooth", ["--label_smoothing", "--output_dir"]),
    ("A3_label_smooth", "A4_early_stop", ["--early_stopping_patience", "--output_dir"]),
    ("A4_early_stop", "A5_lora_r8", ["--finetune", "--lora_alpha", "--lora_rank", "--output_dir"]),
    ("A5_lora_r8", "A6_lora_r16", ["--lora_alpha", "--lora_rank", "--output_dir"]),
]


@needs_rm
@pytest.mark.parametrize(("a", "b", "flags"), LADDER)
def test_rm_ablation_sbatch_steps_differ_only_in_their_stepped_flags(a, b, flags):
    result = _diff(str(RM / f"{a}.sbatch"), str(RM / f"{b}.sbatch"), "--format", "json")
    assert result.exit_code == 1
    paths = [change["path"] for change in json.loads(result.stdout)["changes"]]
    assert paths == [f'commands["rm.train"].{flag}' for flag in flags]
    gate = [x for f in flags for x in ("--allow", f"commands.*.{f}")]
    assert _diff(str(RM / f"{a}.sbatch"), str(RM / f"{b}.sbatch"), *gate).exit_code == 0
    # leave out any one stepped flag and the gate fails
    assert _diff(str(RM / f"{a}.sbatch"), str(RM / f"{b}.sbatch"), *gate[2:]).exit_code == 1


@needs_rm
def test_rm_ablation_diff_report_golden(golden):
    result = _diff(str(RM / "A4_early_stop.sbatch"), str(RM / "A5_lora_r8.sbatch"))
    golden("diff/rm_A4_vs_A5.txt", result.stdout)
    report = _diff(
        str(RM / "A4_early_stop.sbatch"),
        str(RM / "A5_lora_r8.sbatch"),
        "--format",
        "json",
        "--allow",
        "commands.*.--lora_*",
    )
    golden("diff/rm_A4_vs_A5.json", report.stdout.replace(str(RM), "generated/rm_ablation"))


def test_spec_variant_form_resolves_through_the_compile_api(tmp_path):
    (tmp_path / "t.j2").write_text("{{ config }}\n")
    spec = _yaml(
        tmp_path,
        "spec.yaml",
        'sweepgen: 1\nname: tiny\ntemplate: t.j2\noutput: "{{ variant.name }}.txt"\n'
        "base:\n  training: {seed: 42}\n  streamer: {strategy: identity}\n"
        "variants:\n  identity: {}\n  coma:\n    streamer.strategy: coma\nallow: [streamer.strategy]\n",
    )
    result = _diff(spec + ":identity", spec + ":coma")
    assert (result.exit_code, result.stdout) == (1, "streamer.strategy: 'identity' -> 'coma'\n1 change\n")
    typo = _diff(spec + ":identity", spec + ":comma")
    assert typo.exit_code == 2 and "no variant named 'comma'" in typo.stderr


def test_missing_spec_for_variant_form_is_a_missing_file(tmp_path):
    result = _diff(str(tmp_path / "spec.yaml") + ":identity", str(tmp_path / "spec.yaml") + ":x")
    assert result.exit_code == 2 and "no such file" in result.stderr
