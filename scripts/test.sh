#!/usr/bin/env bash
# README command 2: set up, then run every check and test, in four lanes (stops after a red lane):
#   lint  ruff check, ruff format --check, mypy, lint-imports (all configured in pyproject.toml), the
#         mean block complexity (scripts/complexity.py) and `sweepgen check` on our own specs, in .venv
#   core  every test that needs none of the [train], [slurm], [plot] extras nor a browser (-m "not
#         train and not slurm and not plot and not browser"), in .venv-light: `pip install -e '.[dev]'`
#         only, where `import torch` fails
#   load  the signal and timing tests once more, beside a CPU-burning process per core (.venv-light),
#         and beside the full lane when that runs too (its output shown after the full lane's)
#   full  the trainer, end-to-end, Slurm, plot and browser tests (-m "train or slurm or plot or
#         browser"), in .venv; the browser tests install Debian's chromium when it is missing
# The core lane starts once .venv-light is set up: .venv's dependencies (torch and the rest: the
# longest part of the set-up) install beside it, then the lint lane runs there, beside the core lane
# (their output shown after it).
# The core and full lanes run on pytest-xdist workers (-n TEST_WORKERS, default: one per core, and
# one more in the full lane; 0 runs them in pytest's own process) with --dist loadgroup:
# tests/xdist_groups.py keeps the tests on a Slurm test cluster, and the tests of a module with a
# module-scoped fixture, each on one worker. The load lane stays in one process.
# Tests marked `gpu` need a CUDA device, which CI does not have: run them by hand (pytest -m gpu).
# Nothing is skipped for a missing dependency: a test that needs an extra carries its marker and fails
# when the extra is missing. Arguments go to both pytest lanes (e.g. -x, -k NAME, --durations=20);
# LANES="core full" runs only the lanes named; KEEP_GOING=1 runs every lane even after a red one
# (and still exits non-zero).
set -euo pipefail
cd "$(dirname "$0")/.."
lanes=" ${LANES:-lint core load full} "
# GNU nproc answers OMP_NUM_THREADS when it is set (1 below, for torch): count the cores without it
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# the full lane gets one worker more: the one holding the Slurm tests mostly waits on the cluster
core_xdist=(-n "${TEST_WORKERS:-$cores}" --dist loadgroup)
full_xdist=(-n "${TEST_WORKERS:-$((cores + 1))}" --dist loadgroup)

lane() { printf '\n===== lane %s =====\n' "$1"; }

# pytest exits 5 when a selection holds no test (e.g. -k matching only one lane's tests): that lane
# is then not a failure, but if no pytest lane ran a test at all, this script exits 5 too.
pytest_lanes=0 empty_lanes=0 red=()
failed_lane() { # LANE RC
  red+=("$1")
  if [ "${KEEP_GOING:-0}" != 1 ]; then
    lint_result || true # a lint lane still running beside the core lane: its output first
    load_result || true # and the load lane beside the full lane: it ends by itself, burners too
    exit "$2"
  fi
}
lint_pid="" lint_log="" lint_named=""
lint_result() { # waits for the job beside the core lane (.venv's dependencies, then the lint lane if
  # asked for), shows its output; 1 when the lint lane was red; a failed set-up ends the script
  [ -n "$lint_pid" ] || return 0
  local rc=0
  wait "$lint_pid" || rc=$?
  lint_pid=""
  if [ -n "$lint_named" ] || [ "$rc" -ne 0 ]; then
    lane "${lint_named:-set-up of .venv}"
    cat "$lint_log"
  fi
  rm -f "$lint_log"
  if [ "$rc" -eq 3 ]; then
    echo "set-up of .venv failed (scripts/setup.sh full deps)" >&2
    exit 3
  fi
  return "$rc"
}
load_pid="" load_log=""
load_result() { # waits for the load lane beside the full lane, shows its output, returns its status
  [ -n "$load_pid" ] || return 0
  local rc=0
  wait "$load_pid" || rc=$?
  load_pid=""
  lane load
  cat "$load_log"
  rm -f "$load_log"
  return "$rc"
}

run_pytest() { # LANE COMMAND...
  local name=$1 rc=0
  shift
  "$@" || rc=$?
  pytest_lanes=$((pytest_lanes + 1))
  if [ "$rc" -eq 5 ]; then
    empty_lanes=$((empty_lanes + 1))
    echo "(no test selected in this lane)"
  elif [ "$rc" -ne 0 ]; then
    failed_lane "$name" "$rc"
  fi
}

# .venv-light's set-up also proves that torch, trl, transformers... are not importable there.
# With the core lane: .venv-light first (and .venv's bare venv beside it), then sweepgen itself into
# .venv (seconds; both strict editable installs rebuild the one link tree under build/, which no lane
# may see half-built), and .venv's dependencies beside the core lane (setup.sh's `venv`, `project`
# and `deps` parts). Otherwise both venvs at once (pip mostly waits on the disk or the network).
full_deps=0
if [[ $lanes == *" core "* ]]; then
  bash scripts/setup.sh full venv &
  full_setup=$!
  bash scripts/setup.sh light
  wait "$full_setup"
  bash scripts/setup.sh full project
  full_deps=1
else
  bash scripts/setup.sh &
  full_setup=$!
  if [[ $lanes == *" load "* ]]; then bash scripts/setup.sh light; fi
  wait "$full_setup"
fi
# The machines set PYTHONDONTWRITEBYTECODE, so every process the tests start (each `sweepgen`, each
# run's supervisor and trainer) would compile the modules it imports again: compile them once, where
# they are imported from (the checkout, and the strict editable install's link tree)
.venv/bin/python -m compileall -q sweepgen trainer $(ls -d build/__editable__.* 2>/dev/null)

lint_lane() {
  local failed=()
  .venv/bin/ruff check . || failed+=("ruff check")
  .venv/bin/ruff format --check . || failed+=("ruff format --check")
  .venv/bin/mypy || failed+=(mypy)
  .venv/bin/lint-imports || failed+=(lint-imports)
  .venv/bin/python scripts/complexity.py --check || failed+=("complexity")
  .venv/bin/sweepgen check || failed+=("sweepgen check")
  if [ ${#failed[@]} -gt 0 ]; then
    printf 'lint lane failed: %s\n' "${failed[*]}"
    return 1
  fi
}

beside_core() { # .venv's dependencies, then the lint lane if asked for; 3 when the set-up failed
  bash scripts/setup.sh full deps || return 3
  if [ -n "$lint_named" ]; then lint_lane; fi
}

# The lint lane is one process at a time (mypy the longest): it runs beside the core lane, its output
# kept and shown once the core lane ends; a red lint lane still stops the lanes after the core lane.
if [ "$full_deps" = 1 ]; then
  if [[ $lanes == *" lint "* ]]; then lint_named=lint; fi
  lint_log=$(mktemp)
  beside_core > "$lint_log" 2>&1 &
  lint_pid=$!
elif [[ $lanes == *" lint "* ]]; then
  lane lint
  lint_lane || failed_lane lint 1
fi

if [[ $lanes == *" core "* ]]; then
  lane core
  run_pytest core .venv-light/bin/python -m pytest "${core_xdist[@]}" -m "not train and not slurm and not plot and not browser and not gpu" "$@"
  lint_result || failed_lane lint 1
fi

load_lane() { # BURNERS: the signal and timing tests again, beside that many CPU-burning neighbours:
  # they wait for states, never for fixed sleeps, so a busy machine makes them slow, never red
  local burners=() rc=0
  for _ in $(seq "$1"); do
    .venv-light/bin/python -c 'while True: pass' &
    burners+=($!)
  done
  shift
  .venv-light/bin/python -m pytest -m "not train and not slurm and not plot and not browser and not gpu" \
    tests/run/test_local.py tests/run/test_search.py tests/run/test_run_exactly_once.py \
    tests/run/test_run_disk_faults.py -k "interrupt or sigterm or ctrl_c or stop_detached or exactly_once or concurrent or disk" "$@" ||
    rc=$?
  for pid in "${burners[@]}"; do kill "$pid"; done # a red load lane leaves no burner behind either
  return "$rc"
}
# The load lane runs beside the full lane (its output kept and shown after it): the full lane's
# workers (one more than the cores, importing torch and training) are then its load, as the burners
# (one per core) are when it runs alone; burners beside them would only slow the full lane down.
if [[ $lanes == *" load "* ]]; then
  if [[ $lanes == *" full "* ]]; then
    load_log=$(mktemp)
    load_lane 0 "$@" > "$load_log" 2>&1 &
    load_pid=$!
  else
    lane load
    run_pytest load load_lane "$cores" "$@"
  fi
fi

if [[ $lanes == *" full "* ]]; then
  lane full
  run_pytest full .venv/bin/python -m pytest "${full_xdist[@]}" -m "(train or slurm or plot or browser) and not gpu" "$@"
fi
if [ -n "$load_pid" ]; then run_pytest load load_result; fi

if [ ${#red[@]} -gt 0 ]; then
  printf '\nred lanes: %s\n' "${red[*]}" >&2
  exit 1
fi
if [ "$pytest_lanes" -gt 0 ] && [ "$empty_lanes" -eq "$pytest_lanes" ]; then
  echo "no test selected in any lane" >&2
  exit 5
fi
