#!/usr/bin/env bash
# One call on a lent GPU machine (the device tool): CUTLASS's wheel from .whl/ if carried,
# the build from source, then the steps named, each logged; the logs come back as $OUT/logs.tgz.
#   steps: tests quick cands refit-kmajor refit-skinny refit-tile refit-own skinny-rows sets-PRECISION random-PRECISION
#   model-PRECISION[-OURS]
#   (skinny-rows: scripts/skinny_rows.cu, the row-major-B skinny kernels against cuBLAS, ROWS_N shapes of ROWS_SEED)
#   (refit-kmajor, refit-skinny, refit-tile, refit-own: CUTLASS's K-major copy costs, the skinny kernels'
#   parameters, those of CUTLASS's tile TILE (rows x columns x warps, 32x32x2) or gemmtiles' own tiles'
#   refitted on this GPU, exact_fit.fit_kmajor, fit_skinny, fit_tile or fit_own, and the steps after it
#   run on a table that holds that model line alone)
#   (quick: pytest on PYTEST_ARGS, default tests/test_auto.py, and -k "$PYTEST_K" if set)
#   (PRECISION: torch's highest, high, medium; OURS: gemmtiles' none, ieee, tf32, tf32x3)
set -u
cd "$(dirname "$0")/.."
# Logs gather in $LOGS and come back as one archive (the tool returns few files).
OUT=${OUT:-gpu-logs}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
# A second call in one command keeps the first's archive: logs-2.tgz, logs-3.tgz, ...
archive=$OUT/logs.tgz
n=2
while [ -e "$archive" ]; do archive=$OUT/logs-$n.tgz; n=$((n + 1)); done
trap 'tar -czf "$archive" -C "$LOGS" .' EXIT
export PYTHONUNBUFFERED=1 TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16}
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
echo "=== build ($(date +%T))"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$LOGS/gpu.txt"
python3 -m pip install -v --no-build-isolation --no-deps -e . >"$LOGS/build.log" 2>&1 \
  || { tail -40 "$LOGS/build.log"; exit 1; }
python3 -m gemmtiles.info | tail -8
for step in "$@"; do
  echo "=== $step ($(date +%T))"
  case $step in
    tests)  # each worker's BLAS on 2 threads: with a thread per core in every worker, the fit
      # tests' least squares (exact_fit) took minutes
      OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} python3 -m pytest tests -q ${PYTEST_X--x} -p no:cacheprovider -n 8 --hypothesis-profile=gpu ${PYTEST_ARGS:-} \
        >"$LOGS/tests.log" 2>&1
      tail -15 "$LOGS/tests.log" ;;
    quick)
      python3 -m pytest -q -x -p no:cacheprovider ${PYTEST_ARGS:-tests/test_auto.py} ${PYTEST_K:+-k "$PYTEST_K"} \
        >"$LOGS/quick.log" 2>&1
      tail -15 "$LOGS/quick.log" ;;
    sets-*)  # sets-PRECISION: the sets named in SETS (transformer and model), SETS_TIERS (auto) against cuBLAS
      python3 -m gemmtiles.bench --shapes "${SETS:-transformer,model}" --tiers "${SETS_TIERS:-auto}" --precision "${step#sets-}" \
        --budget 0.1 --out "$LOGS/$step" >"$LOGS/$step.txt" 2>&1
      grep -E "^[0-9].* auto " "$LOGS/$step.txt" | awk '{print $1, $2, $(NF-3), $(NF-2)}' ;;
    random-*)  # random-PRECISION: the random sample with gemmtiles' calls under torch's PRECISION (and,
      # for another than highest, under highest too: --against-highest)
      python3 -m gemmtiles.bench --shapes "random:${RANDOM_N:-120}:${RANDOM_SEED:-2}" --tiers "${BENCH_TIERS:-auto}" \
        --precision "${step#random-}" --budget 0.05 --repeats 10 --passes "${RANDOM_PASSES:-1}" --out "$LOGS/$step" \
        $([ "${step#random-}" = highest ] || echo --against-highest) >"$LOGS/$step.txt" 2>&1
      grep -A${RANDOM_TAIL:-12} "^speed against" "$LOGS/$step.txt"
      grep "more than 3% slower" "$LOGS/$step.txt" ;;
    cands)  # auto's candidate kernels forced one by one on the training sample, straight into
      # $OUT (a run cut off by the time limit keeps the shapes it finished)
      start=0  # a crash skips its shape and goes on (the log names the candidate)
      while :; do
        python3 scripts/measure_candidates.py --shapes "random:${CAND_N:-200}:${CAND_SEED:-1}" --start $start \
          --out "$OUT/candidates.csv" >>"$LOGS/cands.txt" 2>&1 && break
        last=$(grep -o '^shape [0-9]*' "$LOGS/cands.txt" | tail -1 | cut -d' ' -f2)
        grep '^shape ' "$LOGS/cands.txt" | tail -1
        [ -n "$last" ] && [ "$last" -ge "$start" ] || break
        start=$((last + 1))
      done
      grep -v '^shape ' "$LOGS/cands.txt" | tail -3 ;;
    refit-kmajor|refit-skinny|refit-tile|refit-own)  # one part of the cost model refitted on this GPU, the others
      # held at the model auto uses here (exact_fit.gpu_model: an earlier refit step's table, else the shipped fit
      # scaled to this GPU): CUTLASS's kernel on the NN and NT products of the training sample
      # (kmajor), the skinny kernels on its products of up to 16 rows (skinny), or gemmtiles' split tiles on
      # its products of 9-2048 rows and on those of its aligned draws (own), timed straight into $OUT
      part=${step#refit-}
      fit=(--"$part")
      sample="random:${CAND_N:-200}:${CAND_SEED:-1}"
      if [ "$part" = kmajor ]; then
        pick=(--layouts NN,NT --exact-kernels cutlass --splits 1,2,4,8,16)
      elif [ "$part" = tile ]; then
        pick=(--exact-kernels cutlass --tiles "${TILE:-32x32x2}")
        fit=(--tile "${TILE:-32x32x2}")
      elif [ "$part" = own ]; then
        pick=(--min-rows 9 --max-rows 2048 --kernels split_tile)
        sample="$sample,$sample:aligned"
        CAND_S=${CAND_S:-400}  # two samples: the aligned one, timed last, is what the edge costs need
      else
        pick=(--max-rows 16 --kernels skinny)
      fi
      timeout "${CAND_S:-150}" python3 scripts/measure_candidates.py --shapes "$sample" \
        "${pick[@]}" --repeats 3 --out "$OUT/cands-$part.csv" 2>"$LOGS/$step.err"
      tail -1 "$LOGS/$step.err"
      unset GEMMTILES_AUTO_TABLES
      export GEMMTILES_CACHE=$LOGS/cache
      mkdir -p "$GEMMTILES_CACHE/auto"
      read -r sms table < <(python3 -c 'import torch; from gemmtiles._ops import _C
print(torch.cuda.get_device_properties(0).multi_processor_count, _C.auto_table_file(torch.cuda.get_device_name()))')
      python3 -m gemmtiles.exact_fit "$OUT/cands-$part.csv" "${fit[@]}" --sms "$sms" \
        --table-out "$GEMMTILES_CACHE/auto/$table" | tee "$LOGS/$step.txt" | grep -v '^params' ;;
    skinny-rows)
      nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG scripts/skinny_rows.cu -o /tmp/skinny_rows \
        -lcublas >"$LOGS/skinny-rows-build.log" 2>&1 || { tail -5 "$LOGS/skinny-rows-build.log"; continue; }
      /tmp/skinny_rows "${ROWS_N:-40}" "${ROWS_SEED:-2}" | tee "$LOGS/skinny-rows.txt" | tail -5 ;;
    model-*)  # model-TORCH[-OURS]: torch's precision, gemmtiles' own setting (default none)
      IFS=- read -r _ torch_level ours <<<"$step"
      python3 -m gemmtiles.bench --model --precision "$torch_level" --fp32-precision "${ours:-none}" \
        --repeats ${MODEL_ROUNDS:-10} 2>&1 | tee "$LOGS/$step.txt"
      ;;
  esac
done
echo "=== done ($(date +%T))"
