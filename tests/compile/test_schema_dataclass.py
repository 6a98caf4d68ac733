"""`schema:` naming a dataclass (TRL's GRPOConfig, transformers' TrainingArguments): every variant is
checked field by field through pydantic's TypeAdapter, strictly, with unknown keys rejected and the
error at the spec's file:line. The example spec for TRL's own `trl grpo` CLI passes `check`."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

pytestmark = pytest.mark.train  # TRL's GRPOConfig and transformers' TrainingArguments are the schemas
ROOT = Path(__file__).resolve().parents[2]
SPEC = "specs/trl_grpo_cli.yaml"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def trl_project(cli_cwd):
    for rel in (SPEC, "templates/trl_grpo_cli.yaml.j2"):
        (cli_cwd / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, cli_cwd / rel)
    return cli_cwd


def line_of(path: str, text: str) -> int:
    return next(i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line)


def test_the_trl_cli_example_passes_check(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = cli("check", SPEC)
    assert result.exit_code == 0, result.output


def test_a_typo_in_a_trl_key_fails_with_file_line_and_the_right_name(trl_project):
    spec = Path(SPEC)
    spec.write_text(spec.read_text().replace("  max_completion_length: 256", "  max_completion_lenght: 256"))
    result = cli("render", SPEC)
    assert result.exit_code == 2, result.output
    line = line_of(SPEC, "max_completion_lenght: 256")
    assert f"{SPEC}:{line}:" in result.stderr
    assert (
        "`max_completion_lenght`: unknown field of GRPOConfig (did you mean `max_completion_length`?)"
        in result.stderr
    )
    assert "Traceback" not in result.output
    assert not Path("generated/trl_grpo_cli").exists()  # nothing written


@pytest.mark.parametrize(
    ("line", "bad", "message"),
    [
        (
            "  temperature: 1.0",
            '  temperature: "1.0"',
            "`temperature`: Input should be a valid number",
        ),
        ("  max_steps: 500", "  max_steps: 500.0", "`max_steps`: Input should be a valid integer"),
        ("  bf16: true", "  bf16: 1", "`bf16`: Input should be a valid boolean"),
    ],
)
def test_strict_types_as_everywhere_else(trl_project, line, bad, message):
    spec = Path(SPEC)
    spec.write_text(spec.read_text().replace(line, bad))
    result = cli("check", SPEC)  # check reports on stdout (its --format decides how)
    assert result.exit_code == 2, result.output
    assert message in result.output and f"{SPEC}:{line_of(SPEC, bad.strip())}:" in result.output


def test_a_value_trl_s_code_raises_for_is_refused_with_the_line_that_raises(trl_project):
    """GRPOConfig types loss_type as str and takes `grpoo`; GRPOTrainer raises for it only in its loss,
    after the model is loaded and the first batch generated."""
    spec = Path(SPEC)
    spec.write_text(spec.read_text().replace("  beta: 0.0\n", "  beta: 0.0\n  loss_type: grpoo\n"))
    result = cli("check", SPEC)
    assert result.exit_code == 2, result.output
    assert f"{SPEC}:{line_of(SPEC, 'loss_type: grpoo')}:" in result.output
    assert "did you mean 'grpo'?" in result.output and "trl/trainer/grpo_trainer.py:" in result.output
    spec.write_text(spec.read_text().replace("loss_type: grpoo", "loss_type: dr_grpo"))
    assert cli("render", SPEC).exit_code == 0


def test_transformers_training_arguments_as_a_schema(cli_cwd):
    Path("templates/t.yaml.j2").parent.mkdir(parents=True)
    Path("templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    Path("specs").mkdir()
    Path("specs/s.yaml").write_text(
        "sweepgen: 1\nname: s\ntemplate: ../templates/t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        "schema: transformers:TrainingArguments\n"
        "base: {output_dir: runs/x, learning_rate: 1.0e-5, seed: 1}\n"
        "grid: {seed: [1, 2]}\n"
    )
    assert cli("render", "specs/s.yaml").exit_code == 0
    Path("specs/s.yaml").write_text(
        Path("specs/s.yaml").read_text().replace("learning_rate: 1.0e-5", "learning_rat: 1.0e-5")
    )
    result = cli("render", "specs/s.yaml")
    assert (
        result.exit_code == 2
        and "unknown field of TrainingArguments (did you mean `learning_rate`?)" in result.stderr
    )


def test_a_class_that_is_neither_is_refused(cli_cwd):
    Path("templates").mkdir()
    Path("templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    Path("specs").mkdir()
    Path("specs/s.yaml").write_text(
        "sweepgen: 1\nname: s\ntemplate: ../templates/t.yaml.j2\noutput: a.yaml\n"
        "schema: pathlib:Path\nbase: {a: 1}\n"
    )
    result = cli("render", "specs/s.yaml")
    assert result.exit_code == 2 and "not a pydantic model class or a dataclass" in result.stderr
    assert "specs/s.yaml:5:" in result.stderr


def test_trls_own_cli_parser_reads_every_rendered_config():
    """What `trl grpo --config FILE` does with the file: TrlParser over its three dataclasses, no
    extra keys allowed. bf16 is turned off first, only because this CPU machine cannot run it."""
    import yaml
    from trl import GRPOConfig, ModelConfig, ScriptArguments, TrlParser

    parser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))
    files = sorted((ROOT / "generated" / "trl_grpo_cli").glob("*.yaml"))
    assert len(files) == 4
    for path in files:
        data = yaml.safe_load(path.read_text())
        script, grpo, model = parser.parse_dict({**data, "bf16": False}, allow_extra_keys=False)
        assert grpo.beta == data["beta"] and grpo.learning_rate == data["learning_rate"]
        assert grpo.output_dir == data["output_dir"]
        assert model.model_name_or_path == data["model_name_or_path"]
        assert script.dataset_name == data["dataset_name"]


def test_the_committed_trl_schema_file_is_the_export_of_the_installed_trl():
    """schemas/trl_grpo_config.json (what the pre-commit test and the README use) is what
    `sweepgen schema --export trl:GRPOConfig` writes for the pinned trl; its enums come from the
    types or from the code that raises for any other value, never from help text (loss_type's help
    quotes 'sequence' and 'max_completion_length')."""
    import json

    result = cli("schema", "--export", "trl:GRPOConfig")
    assert result.exit_code == 0, result.output
    committed = (ROOT / "schemas" / "trl_grpo_config.json").read_text()
    assert result.stdout == committed, "re-export: sweepgen schema --export trl:GRPOConfig -o schemas/..."
    schema = json.loads(committed)
    loss_type = schema["properties"]["loss_type"]
    assert "grpo" in loss_type["enum"] and "sequence" not in loss_type["enum"]
    assert "trl/trainer/grpo_trainer.py:" in loss_type["$comment"]
    # `SchedulerType | str`, cast to the enum by TrainingArguments: its values only
    assert "cosine" in schema["properties"]["lr_scheduler_type"]["enum"]
    assert "anyOf" not in schema["properties"]["lr_scheduler_type"]
    assert schema["x-sweepgen"]["package"] == "trl"


@pytest.mark.parametrize(
    ("bad", "key", "says"),
    [
        ("  num_generations: 1", "num_generations: 1", "compare at least 2 completions of each prompt"),
        (
            "  num_generations: 8\n  generation_batch_size: 16\n  steps_per_generation: 2",
            "steps_per_generation: 2",
            "generation_batch_size or steps_per_generation, not both",
        ),
        ("  num_generations: 8\n  auto_find_batch_size: true", "auto_find_batch_size: true", "GRPO and RLOO"),
        ("  num_generations: 8\n  log_completions_hub_repo: me/c", "hub_repo: me/c", "only when"),
        (
            "  num_generations: 8\n  vllm_importance_sampling_mode: token_truncate\n"
            "  vllm_importance_sampling_clip_max: null",
            "vllm_importance_sampling_clip_max: null",
            "a *_truncate vllm_importance_sampling_mode needs",
        ),
        (
            "  num_generations: 8\n  eval_strategy: steps\n  eval_steps: 2.5",
            "eval_steps: 2.5",
            "eval_steps above 1 to be a whole",
        ),
        (
            "  num_generations: 8\n  vllm_importance_sampling_clip_min: 3.5",
            "clip_min: 3.5",
            "clip_min (3.5) must be below vllm_importance_sampling_clip_max (3.0",
        ),
    ],
)
def test_a_class_schema_refuses_what_trl_raises_at_the_start_as_the_command_schema_does(
    trl_project, bad, key, says
):
    """`schema: trl:GRPOConfig` took a group size of 1 and both ways of sizing the generation batch,
    which GRPOConfig's __post_init__ raises for at the run's start; `trl:grpo` refused them."""
    spec = Path(SPEC)
    spec.write_text(spec.read_text().replace("  num_generations: 8", bad))
    result = cli("check", SPEC)
    assert result.exit_code == 2, result.output
    assert f"{SPEC}:{line_of(SPEC, key)}:" in result.output and says in result.output


def test_the_class_export_carries_the_refusals_and_a_project_class_does_not(tmp_path):
    import dataclasses
    import json

    from sweepgen.compile.schema import export, jsonschema_subset

    schema = json.loads((ROOT / "schemas" / "trl_grpo_config.json").read_text())
    problems = jsonschema_subset.validate({"generation_batch_size": 16, "steps_per_generation": 2}, schema)
    assert [p for p, _ in problems] == ["steps_per_generation"]
    assert jsonschema_subset.validate({"num_generations": 1}, schema)

    @dataclasses.dataclass
    class Own:  # a project's own class: its num_generations is its own
        num_generations: int = 1
        generation_batch_size: int = 2
        steps_per_generation: int = 1

    own = export.export("mine:Own", Own)
    assert "allOf" not in own and not jsonschema_subset.validate({"num_generations": 1}, own)


# values GRPOConfig's own __post_init__ raises for (or takes), each with the class that decides
_POST_INIT_CASES = [
    {"auto_find_batch_size": True},
    {"auto_find_batch_size": False},
    {"log_completions_hub_repo": "me/c"},
    {"log_completions_hub_repo": "me/c", "log_completions": True},
    {"vllm_importance_sampling_mode": "token_truncate", "vllm_importance_sampling_clip_max": None},
    {
        "vllm_importance_sampling_mode": "sequence_truncate",
        "vllm_importance_sampling_clip_max": None,
        "vllm_importance_sampling_clip_min": 0.5,
    },
    {
        "vllm_importance_sampling_mode": "token_truncate",
        "vllm_importance_sampling_clip_max": None,
        "vllm_importance_sampling_correction": False,
    },
    {"vllm_importance_sampling_mode": "sequence_mask", "vllm_importance_sampling_clip_max": None},
    # transformers' TrainingArguments._validate_args, under every TRL class
    {"fp16": True, "bf16": True},
    {"fp16": True, "bf16": False},
    {"bf16": True},  # fp16 unset: false
    {"fp16": True},
    {"bf16_full_eval": True},
    {"fp16_full_eval": True, "bf16_full_eval": True},
    {"lr_scheduler_type": "reduce_lr_on_plateau"},
    {"lr_scheduler_type": "greedy", "eval_strategy": "no"},
    {"lr_scheduler_type": "reduce_lr_on_plateau", "eval_strategy": "epoch"},
    {"warmup_steps": -1},
    {"warmup_steps": 0.5},
    {"logging_steps": 0},
    {"logging_steps": 0, "logging_strategy": "no"},
    {"torch_empty_cache_steps": 0},
    {"torch_empty_cache_steps": 4},
    {"dataloader_prefetch_factor": 2},
    {"dataloader_prefetch_factor": 2, "dataloader_num_workers": 1},
    # a *_steps above 1 under its "steps" strategy: whole (2.0 taken), fractions below 1 taken
    {"logging_steps": 2.5},
    {"logging_steps": 2.0},
    {"logging_steps": 0.5},
    {"logging_steps": 2.5, "logging_strategy": "no"},
    {"save_steps": 7.5},
    {"save_steps": 8.0},
    {"save_steps": 7.5, "save_strategy": "epoch"},
    {"eval_steps": 2.5, "eval_strategy": "steps"},
    {"eval_steps": 3.0, "eval_strategy": "steps"},
    {"eval_steps": 2.5},
]


@pytest.mark.parametrize("name", ["GRPOConfig", "RLOOConfig", "SFTConfig"])
def test_the_class_schema_refuses_exactly_what_the_class_s_post_init_raises_for(tmp_path, name):
    """TRL itself is the oracle: each case is built with the class (in-process, on the CPU) and
    validated against its export; auto_find_batch_size is GRPO's and RLOO's refusal, never SFT's
    (a class with GRPO's keys but not its __post_init__ takes it); transformers' TrainingArguments'
    own refusals hold under each."""
    import warnings

    import trl

    from sweepgen.compile.schema import export, jsonschema_subset

    cls = getattr(trl, name)
    schema = export.export(f"trl:{name}", cls)
    for case in (c for c in _POST_INIT_CASES if set(c) <= set(schema["properties"])):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cls(**{"output_dir": str(tmp_path), "use_cpu": True, "bf16": False, **case})
            raised = False
        except ValueError:
            raised = True
        assert bool(jsonschema_subset.validate(case, schema)) is raised, (name, case)


_BEST = {"load_best_model_at_end": True, "eval_strategy": "steps", "save_strategy": "steps"}
# two numbers against each other, which no JSON Schema says: GRPO's clip bounds, and transformers'
# save_steps a multiple of eval_steps (unset: logging_steps) under load_best_model_at_end
_ACROSS_CASES = [
    {"vllm_importance_sampling_clip_min": 0.5},
    {"vllm_importance_sampling_clip_min": 3.0},
    {"vllm_importance_sampling_clip_min": 4.0, "vllm_importance_sampling_clip_max": None},
    {"vllm_importance_sampling_clip_min": 2.0, "vllm_importance_sampling_clip_max": 2.0},
    {"vllm_importance_sampling_clip_min": 0.5, "vllm_importance_sampling_clip_max": 0.4},
    {**_BEST, "eval_steps": 10, "save_steps": 25},
    {**_BEST, "eval_steps": 10, "save_steps": 30},
    {**_BEST, "eval_steps": 10.0, "save_steps": 30.0},
    {**_BEST, "save_steps": 25},  # eval_steps from logging_steps (10 in TRL's classes)
    {**_BEST, "save_steps": 20},
    {**_BEST, "logging_steps": 7},  # save_steps' default 500
    {**_BEST, "eval_steps": 0.1, "save_steps": 0.3},
    {**_BEST, "eval_steps": 0.2, "save_steps": 0.3},
    {**_BEST, "eval_steps": 0.1, "save_steps": 20},
    {**_BEST, "eval_steps": 10, "save_steps": 25, "save_strategy": "best"},
    {**_BEST, "eval_steps": 10, "save_steps": 25, "load_best_model_at_end": False},
    # eval_steps unset or 0 under eval_strategy steps: every logging_steps, which must be above 0
    {"eval_strategy": "steps", "logging_strategy": "no", "logging_steps": 0},
    {"eval_strategy": "steps", "logging_strategy": "no", "logging_steps": 0, "eval_steps": 0},
    {"eval_strategy": "steps", "logging_strategy": "no", "logging_steps": 0, "eval_steps": 5},
    {"eval_strategy": "steps", "logging_strategy": "no", "logging_steps": -1},
    {"eval_strategy": "epoch", "logging_strategy": "no", "logging_steps": 0},
]


@pytest.mark.parametrize("name", ["GRPOConfig", "RLOOConfig", "SFTConfig"])
def test_the_class_and_command_schemas_refuse_exactly_what_two_numbers_make_trl_raise_for(tmp_path, name):
    """TRL's classes built in-process are the oracle for `schema: trl:<Class>` and the `trl:<command>`
    schema alike: each case is refused by both exactly when the class raises."""
    import warnings

    import trl

    from sweepgen.compile.schema import validate
    from sweepgen.errors import Location

    cls = getattr(trl, name)
    fields = {f.name for f in dataclasses.fields(cls)}
    by_class = validate._dataclass_validator(cls, f"trl:{name}", Location("spec"))
    command = validate.command_validator(name.removesuffix("Config").lower(), Location("spec"))
    for case in (c for c in _ACROSS_CASES if set(c) <= fields):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cls(**{"output_dir": str(tmp_path), "use_cpu": True, "bf16": False, **case})
            raised = False
        except ValueError:
            raised = True
        assert bool(by_class(case)) is raised, (name, case, by_class(case))
        assert bool(command(case)) is raised, (name, case, command(case))
