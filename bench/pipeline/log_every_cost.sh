#!/bin/sh
# The trainer-side cost of the metric interval: ringside-trainer at --log-every 1 against 10 (the
# default), for the MLP (default data) and the CNN, runs alternated, REPEAT times each. Prints one
# line per run: samples/s from the end record ("type":"end", docs/metrics.md), wall seconds, and
# the CPU other processes took meanwhile (busy time in /proc/stat minus the run's own, % of all
# cores). stdout (the JSON Lines) goes to a file, as under the agent; --quiet as given.
# Usage: bench/pipeline/log_every_cost.sh [TRAINER] [REPEAT]   (bench/README.md, "pipeline")
set -eu
trainer=${1:-build/release/trainer/ringside-trainer}
repeat=${2:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cores=$(nproc)
tck=$(getconf CLK_TCK)

busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }

run() {  # label, trainer arguments...
  label=$1
  shift
  b0=$(busy)
  t0=$(date +%s.%N)
  mpirun --allow-run-as-root --bind-to none -np 2 "$trainer" "$@" >"$out/stdout" 2>"$out/stderr"
  t1=$(date +%s.%N)
  b1=$(busy)
  times >"$out/times"  # a builtin, not in a subshell: the children's ticks are this shell's
  own=$(awk -v tck="$tck" 'NR==2{split($1,u,"m");split($2,s,"m");
        printf "%.0f", (u[1]*60+u[2]+s[1]*60+s[2])*tck}' "$out/times")
  grep '"type":"end"' "$out/stdout" | sed 's/.*"samples_per_s":\([0-9.e+]*\).*/\1/' |
    awk -v label="$label" -v t0="$t0" -v t1="$t1" -v b="$((b1 - b0))" -v own="$own" \
        -v prev="${prev_own:-0}" -v cores="$cores" -v tck="$tck" -v lines="$(wc -l <"$out/stdout")" '{
      wall = t1 - t0; other = (b - (own - prev)) / tck; if (other < 0) other = 0;
      printf "%-28s %10.0f samples/s  %6.1f s  %7d stdout lines  others %5.1f%% of the cores\n",
             label, $1, wall, lines, 100 * other / (wall * cores) }'
  prev_own=$own
}

i=1
while [ "$i" -le "$repeat" ]; do
  run "mlp --log-every 1" --epochs 1 --log-every 1 --quiet
  run "mlp --log-every 10" --epochs 1 --log-every 10 --quiet
  run "cnn --log-every 1" --model cnn --train-samples 20000 --epochs 1 --log-every 1 --quiet
  run "cnn --log-every 10" --model cnn --train-samples 20000 --epochs 1 --log-every 10 --quiet
  i=$((i + 1))
done
