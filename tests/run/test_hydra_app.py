"""A Hydra app (verl's `python -m verl.trainer.main_ppo` is one) takes its config by folder and name:
`--config-path {config_dir} --config-name {config_name}` runs each generated config with hydra-core's
own `@hydra.main`, each run reading its own values and writing its own checkpoint folder."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from click.testing import CliRunner

from sweepgen.cli import main
from sweepgen.run.core.plan.tasks import parse_command

APP = """
import os
import hydra


@hydra.main(version_base=None)
def main(cfg):
    seen = f"{cfg.actor.lr} {cfg.trainer.default_local_dir}"
    with open(os.path.join(os.environ["SWEEPGEN_RUN_DIR"], "seen.txt"), "w") as fh:
        fh.write(seen)


main()
"""
CONFIG = """trainer:
  project_name: p
  default_local_dir: checkpoints/${trainer.project_name}
actor: {lr: 1.0e-6}
"""


def test_each_config_runs_in_a_real_hydra_app_by_folder_and_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("app.py").write_text(APP)
    Path("ppo.yaml").write_text(CONFIG)
    made = CliRunner().invoke(main, ["init", "--from", "ppo.yaml", "--grid", "actor.lr=1e-6,3e-6"])
    assert made.exit_code == 0, made.output
    command = (
        f"{shlex.quote(sys.executable)} app.py --config-path {{config_dir}} --config-name {{config_name}} "
        "hydra.run.dir={run_dir}/hydra"
    )
    ran = CliRunner().invoke(main, ["run", "generated/ppo", "--command", command])
    assert ran.exit_code == 0, ran.output + "".join(p.read_text() for p in Path("runs").rglob("run.log"))
    for lr in ("1e-06", "3e-06"):
        seen = Path(f"runs/ppo/lr{lr}/seen.txt").read_text()
        assert seen == f"{float(lr)} runs/ppo/lr{lr}", seen


def test_a_command_naming_no_config_is_refused_and_config_name_is_enough():
    assert parse_command("app --config-path {config_dir} --config-name {config_name}") is not None
    refused = CliRunner().invoke(main, ["run", "generated/x", "--command", "app --config-path {config_dir}"])
    assert refused.exit_code == 2 and "must contain {config} (or {config_name}" in refused.output
