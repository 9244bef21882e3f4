#!/bin/bash
# The native runner side by side with the MPI library's same algorithm forced and with the Python
# runner, at NP ranks (issue 37, items 3 and 4), and the LBM halo exchange on both runners.
#
#   NP=16 OUT=/tmp/native16 bash benchmarks/native16.sh        # from the project root, after make
#   NP=2 SIZES=64K,1M bash benchmarks/native16.sh               # the same at 2 ranks (a 2-core box)
#
# On the 16-core machine of ../shared/device/ (no Rust, no network): prepare.sh copies
# benchmarks/ to .dev/bench; there, `SECTIONS=none OUT=$OUT bash .dev/run.sh` installs the wheels
# into /tmp/hcp (and prints the machine), then `OUT=$OUT bash .dev/bench/native16.sh` finds them
# (HC, MPIEXEC and PYTHONPATH as run.sh sets them) and runs at NP=16 (about 5 minutes).
#
# Sections (SECTIONS, default "allreduce alltoall lbm"):
#   allreduce  recursive doubling, ring and Rabenseifner (Open MPI's coll_tuned_allreduce_algorithm
#              3, 4, 6 forced) at SIZES, native runner (C loop for both) and Python runner (Python
#              loop for both), --check; then the ring with HYPERCUBOID_WAIT=yield (the old wait);
#   alltoall   linear, pairwise and Bruck (coll_tuned_alltoall_algorithm 1, 2, 3) at A2A_SIZES;
#   lbm        the proxy at NP ranks (64^3 per rank, reduced / blocking / nonblocking exchange) and
#              weak scaling 1..NP ranks (reduced), halo on the native runner and on the Python one.
# Prints a log with the load average before and after, one "ours / library" line per algorithm
# and size, and writes the JSON rows to $OUT.
set -u
NP=${NP:-16}
O=${OUT:-/tmp/native16}; mkdir -p "$O"
SIZES=${SIZES:-64K,1M,4M}; A2A_SIZES=${A2A_SIZES:-1K,64K}
SECTIONS=${SECTIONS:-allreduce alltoall lbm}
if [ -z "${HC:-}" ] && [ -x /tmp/hcp/hc/hypercuboid ]; then # installed by ../shared/device/run.sh
  D=$(cd "$(dirname "$0")/.." && pwd)
  export PYTHONPATH=$(ls -d /tmp/hcp/lib/python3*/site-packages):$D/pkg PATH=/tmp/hcp/bin:$PATH
  export LD_LIBRARY_PATH=/tmp/hcp/lib HYPERCUBOID_CACHE=/tmp/hccache HYPERCUBOID_MPICC=/tmp/hcp/bin/mpicc
  HC=/tmp/hcp/hc/hypercuboid MPIEXEC=/tmp/hcp/bin/mpiexec PYTHON=python3
fi
HC=${HC:-.venv/bin/hypercuboid}; MPIEXEC=${MPIEXEC:-.venv/bin/mpiexec}
PY=${PYTHON:-$(dirname "$HC")/python}; [ -x "$PY" ] || PY=python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,sm
export OPENBLAS_NUM_THREADS=1 PYTHONUNBUFFERED=1
BIND="--bind-to core"; [ "$NP" -gt "$(nproc)" ] && BIND="--bind-to none"
MX="$MPIEXEC --oversubscribe $BIND"
on() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }
force() { echo OMPI_MCA_coll_tuned_use_dynamic_rules=1 "OMPI_MCA_coll_tuned_$1_algorithm=$2"; }
echo "== native16: NP=$NP, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
$MPIEXEC --version 2>&1 | head -1

# ratio lines from the JSON rows of one bench run: ours (the schedule) / the library (native)
ratios() {
  "$PY" - "$@" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))
rows = rows["rows"] if isinstance(rows, dict) else rows
lib = {r["bytes"]: r["median_us"] for r in rows if r["algorithm"] == "native"}
for r in rows:
    if r["algorithm"] != "native" and r["bytes"] in lib:
        ok = {True: "valid", False: "INVALID", None: ""}[r.get("valid")]
        print(f"  {sys.argv[2]:<40} {r['algorithm']:<20} {r['runner']:<7} {r['bytes']:>8} B "
              f"ours {r['median_us']:10.2f} us  library {lib[r['bytes']]:10.2f} us  "
              f"ratio {r['median_us'] / lib[r['bytes']]:5.2f} {ok}")
EOF
}

if on allreduce; then
  echo "== allreduce, $NP ranks: ours / Open MPI's same algorithm forced (median, OSU style)"
  # the first algorithm of a job is measured first: each comparison runs in both orders
  for pair in "3 recursive_doubling" "4 ring" "6 rabenseifner"; do set -- $pair
    for run in "native $2,native ours first" "native native,$2 library first" "python $2,native ours first"; do
      set -- $1 $2 $run; j=$O/allreduce_$2_$3_$5.json
      env $(force allreduce $1) timeout 300 $MX -n "$NP" "$HC" bench allreduce -a "$4" \
        --sizes "$SIZES" --runner $3 --check --json "$j" --force -q >/dev/null 2>"$O/err" \
        || { echo "  $2 $3 failed: $(tail -2 "$O/err")"; set -- $1 $2; continue; }
      ratios "$j" "forced $1, runner $3, $5 $6"
      set -- $1 $2
    done
  done
  j=$O/allreduce_ring_yield.json
  HYPERCUBOID_WAIT=yield env $(force allreduce 4) timeout 300 $MX -x HYPERCUBOID_WAIT -n "$NP" \
    "$HC" bench allreduce -a ring,native --sizes "$SIZES" --runner native --json "$j" --force -q \
    >/dev/null 2>"$O/err" && ratios "$j" "forced 4, HYPERCUBOID_WAIT=yield"
fi

if on alltoall; then
  echo "== alltoall, $NP ranks: ours / Open MPI's same algorithm forced"
  for pair in "1 linear" "2 pairwise" "3 bruck"; do set -- $pair
    for order in "$2,native" "native,$2"; do
      j=$O/alltoall_$2_${order%%,*}.json
      env $(force alltoall $1) timeout 300 $MX -n "$NP" "$HC" bench alltoall -a "$order" \
        --sizes "$A2A_SIZES" --runner native --check --json "$j" --force -q >/dev/null 2>"$O/err" \
        || { echo "  $2 failed: $(tail -2 "$O/err")"; continue; }
      who=ours; [ "${order%%,*}" = native ] && who=library
      ratios "$j" "forced $1, runner native, $who first"
    done
  done
fi

lbm() { # ranks lattice decomp halo runner
  j=$O/lbm_$1_$4_$5.json
  timeout 300 $MX -n "$1" "$HC" lbm run --lattice "$2" --decomp "$3" --steps 40 --halo "$4" \
    --runner "$5" --json "$j" --force -q >/dev/null 2>"$O/err" \
    || { echo "  np=$1 $4 $5 failed: $(tail -2 "$O/err")"; return; }
  "$PY" - "$j" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
n, step = d["steps"], d["elapsed_s"] / d["steps"]
print(f"  np={d['ranks']:<3} {d['halo']:<12} {d['runner']:<7} {d['mlups']:8.1f} MLUPS  "
      f"step {step * 1e3:7.2f} ms  halo {d['halo_s'] / n * 1e3:7.2f} ms/step "
      f"({d['halo_s'] / d['elapsed_s']:5.1%} of the run)  kernel {d['kernel_s'] / n * 1e3:7.2f} ms/step")
EOF
}
dims() { case $1 in 1) echo "64x64x64 1x1x1";; 2) echo "128x64x64 2x1x1";; 4) echo "128x128x64 2x2x1";;
  8) echo "128x128x128 2x2x2";; 16) echo "256x128x128 4x2x2";; *) echo "$((64 * $1))x64x64 ${1}x1x1";; esac; }
if on lbm; then
  echo "== lbm proxy, $NP ranks, 64^3 per rank: halo on the native runner and on the Python one"
  set -- $(dims "$NP")
  for h in reduced blocking nonblocking; do for r in native python; do lbm "$NP" "$1" "$2" $h $r; done; done
  echo "-- weak scaling, reduced exchange"
  for n in 1 2 4 8 16; do [ "$n" -gt "$NP" ] && continue; set -- $(dims $n)
    for r in native python; do lbm $n "$1" "$2" reduced $r; done
  done
fi
rm -f "$O/err"
echo "== done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
