#!/usr/bin/env bash
# Issue 94's 16-core figures in one bounded run, for a lent many-core machine (run from the repository's root):
#   OUT=/some/folder benchmarks/run_16_cores.sh          the sizes of the targets (about 8 minutes on 16 cores)
#   OUT=/some/folder benchmarks/run_16_cores.sh small    the same steps on small inputs (a check of this script)
# Each step has its own time limit, writes its whole output to $OUT/<step>.log and prints its last lines; a failed
# or stopped step does not stop the next. The steps, most wanted first:
#   cgs50   whole Gibbs fits, 4M tokens, V = 5,000, K = 50, on 1, 4, 8 and 16 threads against tomotopy's workers
#   pipe    `dptopic train --unit document` on 10^6 planted documents against one CountVectorizer pass
#   big     the word-ordered sampler at V = 50,000, K = 1,000 on 10M tokens: one core, and 16 against tomotopy's
#   cgs200  as cgs50 at K = 200
#   phases  where the 10^6 run's time goes, step by step
#   jobs    the 10^6 run with the trainer on every core (`--jobs`), under /usr/bin/time
# numba's caches are filled first, while the 10^6 corpus is written (two processes on an idle machine), so that
# no timed step compiles.
set -u
OUT=${OUT:-/tmp/dptopic-16-cores}
PY=$(command -v "${PY:-python3}") || exit 1
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ "${1:-}" = small ]; then
    docs=20000 cgs=200000 big=300000 bigv=5000 bigk=100 iters=5 warm=2000
else
    docs=1000000 cgs=4000000 big=10000000 bigv=50000 bigk=1000 iters=30 warm=20000
fi
corpus="${TMPDIR:-/tmp}/planted-$docs.jsonl"

step() {
    local name=$1 limit=$2
    shift 2
    echo "== $name: $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    grep -v -e RuntimeWarning -e 'return self._train' "$OUT/$name.log" | tail -n 14
    echo "== $name: exit $rc after $(date +%T)"
}

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|L2|L3)' || true    # hardware threads a core: read the scaling with it
"$PY" -c "import sys, numpy, numba, sklearn, tomotopy, dptopic
print('Python', sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, 'scikit-learn',
      sklearn.__version__, 'tomotopy', tomotopy.__version__, 'dptopic', dptopic.__version__)" || exit 1

"$PY" -c "import sys; sys.path.insert(0, 'benchmarks'); from bench_pipeline import write_planted
write_planted(sys.argv[1], int(sys.argv[2]))" "$corpus" "$docs" &
writer=$!
step warm 150 "$PY" benchmarks/bench_pipeline.py --docs "$warm" --routes train
wait $writer || echo "writing $corpus failed"

cd benchmarks || exit 1
step cgs50 200 "$PY" bench_cgs_large.py --tokens "$cgs" --vocab 5000 --topics 50 --iters "$iters" \
    --threads 1 4 8 16 --samplers sparse warp
step pipe 200 "$PY" bench_pipeline.py --corpus "$corpus" --routes sklearn train
step big 150 "$PY" bench_cgs_large.py --tokens "$big" --vocab "$bigv" --topics "$bigk" --iters 10 \
    --samplers warp --threads 1 16 --tomotopy-threads 16
step cgs200 150 "$PY" bench_cgs_large.py --tokens "$cgs" --vocab 5000 --topics 200 --iters 20 \
    --threads 1 4 8 16 --samplers sparse warp
step phases 90 "$PY" bench_pipeline.py --corpus "$corpus" --phases
ledger=$(mktemp -d)
step jobs 120 env DPTOPIC_LEDGER="$ledger/ledger.sqlite" XDG_DATA_HOME="$ledger" /usr/bin/time -f "%e s wall, %U s user, %S s system, %M KB peak" "$PY" -m dptopic \
    train --corpus "$corpus" --unit document --epsilon 1 --topics 20 --out "$ledger/m" --overwrite --quiet \
    --jobs "$(nproc)"
rm -rf "$ledger"
