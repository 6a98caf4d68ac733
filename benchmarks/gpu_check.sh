#!/usr/bin/env bash
# The prepared GPU check (issue 38): on a bare GPU machine that has PyTorch and nothing installable,
# from the repository root:
#     bash benchmarks/gpu_check.sh OUT_DIR            # GPU: every level below, under one deadline
#     bash benchmarks/gpu_check.sh OUT_DIR --cpu      # the same script with its GPU flags off (tests)
# 1. installs the wheels carried in .whl/ (no index, no dependencies: each one is named there, and
#    benchmarks/gpu_wheels.txt says which and how to download them) into
#    a private target, unless trl already imports; sweepgen and the trainer run from this tree;
# 2. builds the benchmark models (benchmarks/make_gpu_models.py);
# 3. runs each level as its own `bench_packing.py` invocation, in priority order, each with its own
#    time limit, skipping what no longer fits the total deadline (GPU_CHECK_DEADLINE seconds, default
#    450: the whole check stays under 8 minutes with set-up); a level that fails is recorded and the
#    next one runs, except when the first training level's bench_packing fails without results (the
#    harness is broken: the other levels are skipped, exit 1); a level whose arguments start with
#    @gen runs benchmarks/bench_generation.py instead (generation alone, one TRL generation per
#    setting) and its table goes below the levels';
# 4. writes OUT_DIR/levels/<level>.json (bench_packing's results) and .log, OUT_DIR/env.txt and one
#    table, OUT_DIR/table.md (benchmarks/gpu_check_table.py).
# GPU_CHECK_DRY=1 prints the levels (name|limit|arguments, then deadline|seconds) and stops there.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bash benchmarks/gpu_check.sh OUT_DIR [--cpu]}
mode=${2:-gpu}
deadline=${GPU_CHECK_DEADLINE:-450}
start=$SECONDS
mkdir -p "$out/levels"
PY=${PYTHON:-python3}

models=$(mktemp -d)
if [ "$mode" = gpu ]; then
  ss="--gpus 0 --bf16 --model $models/simplestories --batch 32 --generations 16 --completion-length 128 --steps 5"
  smol="--gpus 0 --bf16 --model $models/smollm135m --batch 32 --generations 8 --completion-length 256 --steps 3"
  eos="--gpus 0 --bf16 --model $models/simplestories-eos0.02 --batch 32 --generations 16 --completion-length 128 --steps 5"
  mps=--mps
else # the same levels, small enough for a CPU test: no GPU flags, no MPS
  ss="--model $models/simplestories --batch 8 --generations 4 --completion-length 8 --steps 2"
  smol=$ss eos="--model $models/simplestories-eos0.02 --batch 8 --generations 4 --completion-length 8 --steps 2"
  mps=
fi
# GPU_CHECK_STEPS=N: more steps for the SimpleStories levels (a closer look at fewer levels)
[ -n "${GPU_CHECK_STEPS:-}" ] && ss=${ss/--steps 5/--steps $GPU_CHECK_STEPS}
# Continuous batching with its cache sized to one generation batch (32 requests of at most ~150
# tokens fit 32 blocks of 256; 128 leave room): TRL builds a new manager at every generation, and
# sized from free memory its cache and masks cost more than the decoding (RESULTS.md §18). JSON
# without spaces: the arguments are split on whitespace below.
cb='--grpo use_transformers_continuous_batching=true --grpo transformers_continuous_batching_config={"num_blocks":128,"max_batch_tokens":1024}'
cbg='--grpo use_transformers_continuous_batching=true --grpo transformers_continuous_batching_config={"num_blocks":128,"max_batch_tokens":1024,"use_cuda_graph":true}'
# One TRL generation per setting, alternating (benchmarks/bench_generation.py): the generation alone,
# without training around it, for the settings the levels below train with
sized='"transformers_continuous_batching_config":{"num_blocks":128,"max_batch_tokens":1024'
gen="@gen ${ss% --steps*} --repeats 3 --variant default={} --variant static={\"cache_implementation\":\"static\"}"
gen+=" --variant cb_sized={\"use_transformers_continuous_batching\":true,$sized}}"
gen+=" --variant cb_graph={\"use_transformers_continuous_batching\":true,$sized,\"use_cuda_graph\":true}}"
gen=${gen/--gpus 0 /}

# name | seconds it may take | bench_packing arguments   (priority order: the first ones matter most).
# The levels §16 measured (trl_one, mps20, nomps20, mps12, nomps4, smol1) come after the ones it did
# not reach; each limit is what the level may take, a 5-step SimpleStories level took ~40 s on an H200.
# Worst case (every level before it at its limit, 60 s of set-up) eos_one and smol4 still start:
# tests/test_gpu_check_cpu.py checks that arithmetic against the default deadline.
levels=(
  "one|90|--levels 1 --trainer sweepgen $ss"
  "eos_one|80|--levels 1 --trainer sweepgen $eos"
  "gen|90|$gen"
  "static_one|80|--levels 1 --trainer sweepgen $ss --grpo cache_implementation=static"
  "smol4|110|--levels 4 --trainer sweepgen $smol $mps"
  "cb_sized_one|70|--levels 1 --trainer sweepgen $ss $cb"
  "cb_graph_one|70|--levels 1 --trainer sweepgen $ss $cbg"
  "compile_one|90|--levels 1 --trainer sweepgen $ss --grpo torch_compile=true"
  "eos_static_one|80|--levels 1 --trainer sweepgen $eos --grpo cache_implementation=static"
  "mps20|120|--levels 20 --trainer sweepgen $ss $mps"
  "trl_one|90|--levels 1 --trainer trl $ss"
  "nomps20|120|--levels 20 --trainer sweepgen $ss"
  "mps12|100|--levels 12 --trainer sweepgen $ss $mps"
  "nomps4|80|--levels 4 --trainer sweepgen $ss"
  "smol1|90|--levels 1 --trainer sweepgen $smol"
  "cb_one|80|--levels 1 --trainer sweepgen $ss --grpo use_transformers_continuous_batching=true"
  "trl_mps20|120|--levels 20 --trainer trl $ss $mps"
)
# GPU_CHECK_ONLY='one|trl_one' runs only those levels, in that order
if [ -n "${GPU_CHECK_ONLY:-}" ]; then
  mapfile -t levels < <(for name in ${GPU_CHECK_ONLY//|/ }; do printf '%s\n' "${levels[@]}" | grep "^$name|"; done)
fi
# GPU_CHECK_DRY=1: print the levels (name|limit|arguments) and stop before installing or running
if [ -n "${GPU_CHECK_DRY:-}" ]; then
  printf '%s\n' "${levels[@]}"
  echo "deadline|$deadline"
  rmdir "$models"
  exit 0
fi

if ! "$PY" -c 'import trl' 2>/dev/null; then
  [ -d .whl ] || { echo "trl is not importable and no .whl/ was carried" >&2; exit 2; }
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/gpu_check_site .whl/*.whl || exit 2
  export PYTHONPATH=/tmp/gpu_check_site${PYTHONPATH:+:$PYTHONPATH}
fi
# sweepgen from this tree; the trainer under the name it is installed as (package-dir trainer/)
pp=$(mktemp -d)
ln -s "$PWD/trainer" "$pp/sweepgen_trainer"
export PYTHONPATH=$PWD:$pp:${PYTHONPATH:-}
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONUNBUFFERED=1

# fail in seconds, not per level, when the carried packages do not import together
"$PY" -c 'import sweepgen.cli, sweepgen_trainer.training.grpo, sweepgen_trainer.run, datasets, trl' || exit 2

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 || true
  "$PY" - <<'EOF'
import platform, torch, transformers, trl, os
print(f"python {platform.python_version()} torch {torch.__version__} transformers {transformers.__version__} "
      f"trl {trl.__version__} cuda {torch.cuda.is_available()} cpus {os.cpu_count()}")
EOF
  git rev-parse HEAD 2>/dev/null || echo "commit: no git here"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

"$PY" benchmarks/make_gpu_models.py "$models" --only simplestories >/dev/null || exit 2
# the EOS model: on a GPU always; in CPU mode (the test) only when a level to run trains it
if [ "$mode" = gpu ] || [[ "${levels[*]}" == *simplestories-eos* ]]; then
  "$PY" benchmarks/make_gpu_models.py "$models" --only simplestories --eos-rate 0.02 || exit 2
fi
if [ "$mode" = gpu ]; then
  "$PY" benchmarks/make_gpu_models.py "$models" --only smollm135m >/dev/null || exit 2
fi

measured= broken= # broken: the first training level's bench_packing failed on its own (no results)
for level in "${levels[@]}"; do
  IFS='|' read -r name limit arguments <<<"$level"
  if [ -n "$broken" ]; then # the harness, not the setting: the next levels would fail the same way
    echo "{\"level\": \"$name\", \"skipped\": \"$broken failed in bench_packing itself\"}" >"$out/levels/$name.json"
    continue
  fi
  left=$((deadline - (SECONDS - start)))
  if [ "$left" -lt 45 ]; then
    echo "{\"level\": \"$name\", \"skipped\": \"deadline: ${left}s left\"}" >"$out/levels/$name.json"
    echo "== $name: skipped (${left}s left)"
    continue
  fi
  limit=$((limit * ${GPU_CHECK_LIMIT_SCALE:-1})) # a loaded CPU test machine needs more than a GPU
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (limit ${limit}s): $arguments"
  if [ "${arguments%% *}" = @gen ]; then # a bench_generation table, beside the levels' table
    # shellcheck disable=SC2086  # the arguments are words
    timeout -k 10 "$limit" "$PY" benchmarks/bench_generation.py ${arguments#@gen } \
      --json "$out/$name.json" >"$out/levels/$name.log" 2>&1
    echo "exit $?" >>"$out/levels/$name.log"
    tail -n 8 "$out/levels/$name.log"
    continue
  fi
  # shellcheck disable=SC2086  # the arguments are words
  timeout -k 10 "$((limit + 30))" "$PY" benchmarks/bench_packing.py $arguments --timeout "$limit" \
    --json "$out/levels/$name.json" >"$out/levels/$name.log" 2>&1
  rc=$?
  tail -n 4 "$out/levels/$name.log"
  if [ ! -f "$out/levels/$name.json" ]; then
    echo "{\"level\": \"$name\", \"failed\": \"exit $rc\"}" >"$out/levels/$name.json"
    # on a lent GPU every level once failed this way after its runs finished (RESULTS.md §52): stop
    # there rather than spend the lease; a level stopped by its limit (124, 137) is no such sign
    if [ -z "$measured" ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
      broken=$name
      echo "== $name: bench_packing failed without results (exit $rc): the check stops here"
    fi
  fi
  measured=1
done
"$PY" benchmarks/gpu_check_table.py "$out" | tee "$out/table.md"
for log in "$out"/levels/*.log; do # the generation-only tables (levels run with @gen)
  grep -q '^| variant |' "$log" && { echo; grep -E '^(machine:|\|)' "$log"; } | tee -a "$out/table.md"
done
echo "gpu_check: $((SECONDS - start)) s"
[ -z "$broken" ] || exit 1
