"""``python -m sweepgen_trainer.eval RUN_DIR [--checkpoint NAME|PATH] [--scales R,F]``: routing eval again.

Loads a saved checkpoint of a routed (or baseline) run with the adapter ranks read from the checkpoint
(tensor shapes, cross-checked with its routing.json), then samples and scores completions exactly as
the in-training eval does (same prompts, seed, detector and task reward, from RUN_DIR/config.yaml).
Default: the run's eval modes on its newest checkpoint. ``--scales 1,0`` evaluates one custom pair.
Prints one JSON object ``{"checkpoint", "step", "results": {mode: {metric: value}}}`` on stdout.
Exit codes: 0 ok, 2 bad input, 70 a bug.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweepgen.errors import ConfigError, SweepgenError

if TYPE_CHECKING:  # annotations only: --help answers before the trainer loads
    from sweepgen_trainer.rundir.outputs import RunDir


def _parse_scales(text: str) -> tuple[float, float]:
    try:
        retain, forget = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--scales wants two numbers `retain,forget` (e.g. 1,0), got {text!r}"
        ) from None
    return retain, forget


def _evaluate(
    run_dir: Path, checkpoint: str | None = None, scales: tuple[float, float] | None = None
) -> dict[str, Any]:
    from sweepgen_trainer.configfile import load_config  # noqa: PLC0415 - lazy: --help and bad arguments answer before the trainer loads
    from sweepgen_trainer.routing.checkpoint import load_routed_model  # noqa: PLC0415 - lazy: as above
    from sweepgen_trainer.routing.evaluation import evaluate_run  # noqa: PLC0415 - lazy: as above
    from sweepgen_trainer.routing.trainer import nest_eval  # noqa: PLC0415 - lazy: as above (torch and TRL load here)
    from sweepgen_trainer.rundir.outputs import RunDir  # noqa: PLC0415 - lazy: as above

    rd = RunDir(run_dir)
    if not rd.config.is_file():
        raise ConfigError(f"{rd.config} does not exist", hint="pass a run directory written by the trainer")
    cfg = load_config(rd.config)
    if cfg.routing is None:
        raise ConfigError(
            f"run {cfg.run_name!r} has no `routing` section",
            key="routing",
            hint="sweepgen_trainer.eval re-evaluates runs trained with gradient routing or its baseline",
        )
    folder = _checkpoint_folder(rd, checkpoint)
    model, tokenizer, meta = load_routed_model(folder, cfg.model.dtype, seed=cfg.seed)
    if scales is None:
        modes = {k: tuple(v) for k, v in meta["eval_modes"].items()}
    else:
        if meta["ranks"]["forget"] == 0 and scales[1] != 0:
            raise ConfigError(
                f"{folder} is a baseline checkpoint with no forget adapter; its forget scale must be 0",
                hint="use --scales R,0",
            )
        modes = {f"scales_{scales[0]:g}_{scales[1]:g}": scales}
    flat = evaluate_run(model, tokenizer, cfg, modes=modes)  # the training eval's prompts and settings
    step = int(folder.name.rsplit("-", 1)[-1]) if folder.name.startswith("checkpoint-") else None
    nested = nest_eval(flat, meta["mode"], step or 0)
    results = {k: v for k, v in nested.items() if isinstance(v, dict)}
    return {
        "checkpoint": str(folder),
        "step": step,
        "mode": meta["mode"],
        "ranks": meta["ranks"],
        "results": results,
    }


def _checkpoint_folder(rd: RunDir, checkpoint: str | None) -> Path:
    if checkpoint is None:
        folder = rd.last_checkpoint()
        if folder is None:
            raise ConfigError(
                f"{rd.checkpoints} holds no complete checkpoint",
                hint="checkpoints are written every logging.save_steps steps and at the end",
            )
        return folder
    for candidate in (Path(checkpoint), rd.checkpoints / checkpoint):
        if candidate.is_dir():
            return candidate
    raise ConfigError(
        f"checkpoint {checkpoint!r} is neither a folder nor a name under {rd.checkpoints}",
        hint="pass e.g. --checkpoint checkpoint-40 or a path to a checkpoint folder",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sweepgen_trainer.eval", description=__doc__.split("\n")[0]
    )
    parser.add_argument("run_dir", type=Path, help="a run directory (holds config.yaml and checkpoints/)")
    parser.add_argument(
        "--checkpoint", help="checkpoint name under RUN_DIR/checkpoints or a folder (default: newest)"
    )
    parser.add_argument(
        "--scales", type=_parse_scales, help="one `retain,forget` scale pair instead of the eval modes"
    )
    args = parser.parse_args(argv)
    try:
        result = _evaluate(args.run_dir, args.checkpoint, args.scales)
    except SweepgenError as err:
        print(err.format(), file=sys.stderr)
        return err.exit_code
    except Exception:  # noqa: BLE001 - a bug: show everything
        traceback.print_exc()
        print("internal error: this is a bug in the sweepgen trainer; please report it", file=sys.stderr)
        return 70
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
