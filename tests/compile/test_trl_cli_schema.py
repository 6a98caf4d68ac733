"""`schema: trl:grpo` without trl's import: the schema cached for the installed version is what
`init`, `render` and `check` use; unknown commands and wrong keys are refused, every key named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main
from sweepgen.compile.schema import trl_cli
from sweepgen.errors import Location, SpecError

CACHED = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "model_name_or_path": {"type": "string"},
        "dataset_name": {"type": "string"},
        "reward_funcs": {"type": "array", "items": {"type": "string"}},
        "beta": {"type": "number"},
        "loss_type": {
            "type": "string",
            "enum": ["dapo", "dr_grpo", "grpo"],
            "$comment": "trl raises for any other value, trl/trainer/grpo_trainer.py:3138",
        },
        "seed": {"type": "integer"},
        "dtype": {"type": "string"},
        "torch_compile": {"type": "boolean"},
        "output_dir": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "x-sweepgen": {
        "source": "trl:grpo",
        "format": trl_cli.CACHE_FORMAT,
        "package": "trl",
        "version": "9.9.9",
        "accelerate": trl_cli.accelerate_version(),
        "transformers": trl_cli.installed_version("transformers"),
    },
}
TRL_CONFIG = """\
model_name_or_path: Qwen/Qwen2-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [think_format_reward]
output_dir: out/grpo
beta: 0.04
loss_type: dr_grpo
seed: 1
"""


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder, and trl 9.9.9's `grpo` schema in the cache (trl itself is never imported)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(trl_cli, "trl_version", lambda: "9.9.9")
    # the export's release is the installed one here, wherever trl is really installed (in the full
    # lane's venv a real trl would make every refusal say the file was exported from another release)
    real = trl_cli.installed_version
    monkeypatch.setattr(trl_cli, "installed_version", lambda p: "9.9.9" if p == "trl" else real(p))
    folder = tmp_path / "cache" / "sweepgen" / "schemas" / "trl-9.9.9"
    folder.mkdir(parents=True)
    (folder / "grpo.json").write_text(json.dumps(CACHED))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


def test_the_cached_schema_is_used_and_a_stale_or_foreign_cache_file_is_not(cached, monkeypatch):
    monkeypatch.setitem(sys.modules, "trl.scripts.grpo", None)  # a build fails, wherever trl is installed
    loc = Location("spec.yaml")
    assert trl_cli.command_schema("grpo", loc)["properties"]["beta"] == {"type": "number"}
    path = cached.parent / "cache" / "sweepgen" / "schemas" / "trl-9.9.9" / "grpo.json"
    stamp = CACHED["x-sweepgen"]
    # a cache file for another source, or written by a sweepgen that built schemas otherwise, is
    # not trusted: it is built again (and here fails)
    for other in (
        {**stamp, "source": "trl:dpo"},
        {**stamp, "format": trl_cli.CACHE_FORMAT - 1},
        {**stamp, "accelerate": "0.0.1"},  # another accelerate: other launch options
        {**stamp, "transformers": "0.0.1"},  # another transformers: other TrainingArguments fields
    ):
        path.write_text(json.dumps({**CACHED, "x-sweepgen": other}))
        with pytest.raises(SpecError, match="cannot read the config classes of `trl grpo`"):
            trl_cli.command_schema("grpo", loc)


def test_a_command_that_is_not_a_training_command_is_refused_with_the_list(cached):
    with pytest.raises(SpecError) as err:
        trl_cli.command_schema("vllm_serve", Location("spec.yaml"))
    assert "trl:grpo" in (err.value.hint or "") and "trl:sft" in (err.value.hint or "")
    assert trl_cli.command_of("trl:GRPOConfig") is None and trl_cli.command_of("trl:grpo") == "grpo"


def test_init_from_a_trl_config_starts_a_spec_that_renders(cached):
    (cached / "grpo.yaml").write_text(TRL_CONFIG)
    result = CliRunner().invoke(main, ["init", "--from", "grpo.yaml", "--schema", "trl:grpo"])
    assert result.exit_code == 0, result.output
    exported = json.loads((cached / "schemas" / "grpo.json").read_text())
    assert exported["properties"] == CACHED["properties"]
    assert CliRunner().invoke(main, ["render"]).exit_code == 0
    assert CliRunner().invoke(main, ["check"]).exit_code == 0


def test_every_wrong_key_is_named_with_a_did_you_mean(cached):
    (cached / "grpo.yaml").write_text(TRL_CONFIG + "reward_func: [x]\nbta: 0.1\n")
    result = CliRunner().invoke(main, ["init", "--from", "grpo.yaml", "--schema", "trl:grpo"])
    assert result.exit_code == 2
    assert "`reward_func`: key not allowed by the schema (did you mean `reward_funcs`?)" in result.output
    assert "`bta`: key not allowed by the schema (did you mean `beta`?)" in result.output


def test_a_key_renamed_by_dropping_a_word_is_named_by_its_new_name(cached):
    # transformers renamed `torch_dtype` to `dtype`; by spelling alone `torch_compile` is closer
    (cached / "grpo.yaml").write_text(TRL_CONFIG + "torch_dtype: bfloat16\n")
    result = CliRunner().invoke(main, ["init", "--from", "grpo.yaml", "--schema", "trl:grpo"])
    assert result.exit_code == 2
    assert "`torch_dtype`: key not allowed by the schema (did you mean `dtype`?)" in result.output
    assert not (cached / "specs").exists()  # nothing left behind


def test_a_misspelled_key_is_shown_first_and_a_string_for_a_list_says_write_a_list(cached):
    config = TRL_CONFIG.replace("reward_funcs: [think_format_reward]", "reward_funcs: think_format_reward")
    (cached / "grpo.yaml").write_text(config + "bta: 0.1\n")
    result = CliRunner().invoke(main, ["init", "--from", "grpo.yaml", "--schema", "trl:grpo"])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "grpo.yaml:8:" in said  # the misspelled key's line, before the schema's order puts it last
    assert "grpo.yaml does not fit trl:grpo: `bta`: key not allowed" in said
    (cached / "grpo.yaml").write_text(config)
    result = CliRunner().invoke(main, ["init", "--from", "grpo.yaml", "--schema", "trl:grpo"])
    said = " ".join(result.output.split())
    assert "`reward_funcs`: expected array, got string; value 'think_format_reward'" in said
    assert "hint: write it as a list: [think_format_reward]" in said


def test_a_spec_naming_trl_grpo_records_the_release_in_its_lock(cached):
    (cached / "templates").mkdir()
    (cached / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (cached / "specs").mkdir()
    (cached / "specs" / "g.yaml").write_text(
        "sweepgen: 1\nname: g\ntemplate: ../templates/t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        "schema: trl:grpo\nbase: {beta: 0.0, loss_type: grpo}\ngrid: {beta: [0.0, 0.04]}\n"
    )
    assert CliRunner().invoke(main, ["render", "specs/g.yaml"]).exit_code == 0
    lock = json.loads((cached / "generated" / "g" / "sweep.lock.json").read_text())
    assert lock["inputs"]["module:trl"] == "trl==9.9.9"


def test_check_keeps_no_schema_it_built_in_the_cache_and_render_does(cached, monkeypatch):
    """`check` is a reading command (a pull request's CI, the pre-commit hook): it writes nothing,
    the user's cache folder included. Before, a `check` that built trl's schema (no cache yet)
    wrote it into ~/.cache/sweepgen; `render`, a writer, keeps it for the next command."""
    test_a_spec_naming_trl_grpo_records_the_release_in_its_lock(cached)
    path = cached.parent / "cache" / "sweepgen" / "schemas" / "trl-9.9.9" / "grpo.json"
    path.unlink()
    monkeypatch.setattr(trl_cli, "_build", lambda command, version, loc: CACHED)  # as importing trl would
    result = CliRunner().invoke(main, ["check"])
    assert result.exit_code == 0, result.output
    assert not path.exists()
    # and says what that cost, and how a writer keeps it for the next `check`
    said = " ".join(result.stderr.split())
    assert "note: imported trl to build the schema of trl:grpo" in said, said
    assert "`sweepgen schema --export trl:grpo > /dev/null`" in said and "which `check` only reads" in said
    assert CliRunner().invoke(main, ["render", "specs/g.yaml"]).exit_code == 0
    assert json.loads(path.read_text())["properties"] == CACHED["properties"]


def test_a_value_trl_raises_for_is_named_where_it_was_written_with_a_did_you_mean(cached):
    """In the config: its line. In `--grid`: the option (the spec holding the grid was never written)."""
    (cached / "grpo.yaml").write_text(TRL_CONFIG.replace("loss_type: dr_grpo", "loss_type: dapoo"))
    result = CliRunner().invoke(main, ["init", "--from", "grpo.yaml", "--schema", "trl:grpo"])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.startswith(
        "grpo.yaml:6:12: error: grpo.yaml does not fit trl:grpo: `loss_type`: must be one of"
    )
    assert "(trl raises for any other value, trl/trainer/grpo_trainer.py:3138); did you mean 'dapo'?" in said
    (cached / "grpo.yaml").write_text(TRL_CONFIG)
    grid = ["--grid", "loss_type=grpo,dr_grop"]
    result = CliRunner().invoke(main, ["init", "--from", "grpo.yaml", "--schema", "trl:grpo", *grid])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.startswith("--grid: error: --grid sets a value trl:grpo refuses: `loss_type`: must be one of")
    assert (
        "did you mean 'dr_grpo'?; value 'dr_grop' (set by grid)" in said
        and "hint: fix the value in --grid" in said
    )
    assert not (cached / "specs").exists()  # nothing left behind
