"""The names of the files sweepgen and its trainer leave in sweep folders and run folders (and the
files `report` writes beside the runs): one list.

Each name is spelled here once, on the ground floor, so the trainer that writes a file and the run
commands that read it (status, report, the executors, check's view of the output tree) cannot drift
apart. The modules that own a file keep a short alias of its name where callers already use one.
"""

from __future__ import annotations

from typing import Final

# ---- a run folder: what the trainer writes --------------------------------------------------
CONFIG: Final = "config.yaml"  # the resolved config, every default written out
DATA: Final = "data.json"  # which data the run trains on (sha256, rows)
GRPO_ARGS: Final = "grpo_args.json"  # the trl.GRPOConfig the run was given
METRICS: Final = "metrics.jsonl"  # one JSON object per logging step
METRICS_CSV: Final = "metrics.csv"  # another trainer's metrics, read by `report`
SAMPLES: Final = "samples.jsonl"
SUMMARY: Final = "summary.json"  # the done file: written atomically, last, only on success
CHECKPOINTS: Final = "checkpoints"  # a folder of resumable checkpoints
TRAINER_STATE: Final = "trainer_state.json"  # transformers' Trainer state, in a run or checkpoint folder
ROUTING_META: Final = "routing.json"  # a routed checkpoint's ranks, alphas and mode

# ---- a run folder: what the executors write beside it ---------------------------------------
LOG: Final = "run.log"  # stdout and stderr, appended per attempt
STATUS: Final = "sweepgen_status.json"  # the run's state (sweepgen/run/core/base.py)
RUN_LOCK: Final = ".sweepgen.lock"  # the run's flock: its holder alone may start or run it
STOP_REQUEST: Final = ".sweepgen-stop.json"  # why the run is being stopped, for its supervisor
STATUS_SPARE: Final = ".sweepgen-status.spare"  # room kept for the run's end (run/core/end_room.py)
# beside the run folders: held while a local `sweepgen run` with --gpus picks a run's GPUs and
# starts it (run/local/gpu_share.py), so two of them count each other's runs
GPU_LOCK: Final = ".sweepgen-gpus.lock"
# beside the run folders: `cancel` asks a live local `sweepgen run` to drop the runs it has queued
CANCEL_QUEUED: Final = ".sweepgen-cancel.json"
RANK_NOTES: Final = ".sweepgen_ranks"  # a folder: a multi-process run's participants' notes

# ---- a sweep folder -------------------------------------------------------------------------
LOCK: Final = "sweep.lock.json"  # written by `render`, read by every command
RENDER_JOURNAL: Final = ".sweepgen-journal.json"  # makes a render a transaction
RUN_STATE: Final = ".sweepgen-run.json"  # the command line `run` was started with
DECIDE_STATE: Final = ".sweepgen-decide.json"  # `run --until-decided`: the rule and every look
DECIDE_LOCK: Final = ".sweepgen-decide.lock"  # held while a `run --until-decided` reads and writes it
SEARCH_DIR: Final = ".search"  # a folder: a search's study journal, its locks, its stop request
SEARCH_JOURNAL: Final = "study.journal"  # in SEARCH_DIR: the Optuna study (its lock: this name + ".flock")
SEARCH_STOP: Final = "stop"  # in SEARCH_DIR: `cancel` asks the controllers to stop
SEARCH_SHARED_LOCK: Final = "controller.lock"  # in SEARCH_DIR: the controllers' shared bookkeeping
SLURM_DIR: Final = ".sweepgen_slurm"  # a folder in the runs root: submitit's files, the jobs journal
SLURM_JOBS: Final = "jobs.json"  # in SLURM_DIR: the jobs journal
SLURM_SUBMIT_LOCK: Final = "submit.lock"  # in SLURM_DIR: one submission of a sweep at a time

# ---- a runs folder (or --out): what `report` writes -----------------------------------------
REPORT_CSV: Final = "report.csv"  # one row per run
REPORT_PNG: Final = "report.png"  # the best groups' curves (matplotlib)
STATISTICS_CSV: Final = "statistics.csv"  # one row per seed group, its comparison with the baseline
STATISTICS_JSON: Final = "statistics.json"  # the same rows, with the methods and the context
REPORT_HTML: Final = "report.html"  # one self-contained page
IMPORTANCE_CSV: Final = "importance.csv"  # the parameter importance report.html shows
# every file a report writes: a later report replaces them or removes those it does not write
# (only those its record names, with the content it records: never a file sweepgen did not write)
REPORT_RECORD: Final = ".sweepgen-report.json"  # which of them the last report wrote, by digest
REPORT_FILES: Final = (REPORT_CSV, REPORT_PNG, STATISTICS_CSV, STATISTICS_JSON, REPORT_HTML, IMPORTANCE_CSV)
