#!/usr/bin/env bash
# ctest: docs/examples/ringside_client.py (Python, pyzmq + protobuf) against a real agent with
# CURVE: key exchange, node info, launching a 2-rank trainer run and following it from seq 0 to
# its end, gap-free; runs queued on busy slots, one cancelled, one started by the agent; an ASHA
# sweep of the PyTorch example.
# Usage: python_client_test.sh AGENT TRAINER MPIRUN CLIENT PB2_DIR
set -euo pipefail
agent=$1 trainer=$2 mpirun=$3 client=$4 pb2=$5
python=/usr/bin/python3  # Debian's interpreter: it sees python3-zmq and python3-protobuf
tmp=$(mktemp -d)
agent_pid=
cleanup() {
  local status=$?
  if [[ -n "$agent_pid" ]]; then
    kill "$agent_pid" 2>/dev/null
    # The agent must shut down cleanly on SIGTERM.
    if ! wait "$agent_pid"; then
      echo "ringside-agent did not exit cleanly on SIGTERM" >&2
      status=1
    fi
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

client_key=$("$python" "$client" --pb2 "$pb2" --keys "$tmp/client" tcp://127.0.0.1 public-key)
"$agent" --state-dir "$tmp/state" authorize "$client_key"
agent_key=$("$agent" --state-dir "$tmp/state" print-public-key)
"$agent" --state-dir "$tmp/state" --control-port 0 --events-port 0 --trainer "$trainer" \
  --mpirun "$mpirun" --ready-file "$tmp/ready.json" 2>"$tmp/agent.err" &
agent_pid=$!
# The agent writes its ready file (AgentReady as JSON, docs/protocol.md) once it serves.
for _ in $(seq 300); do
  [[ -s "$tmp/ready.json" ]] && break
  sleep 0.1
done
port_of() {  # port_of FIELD: the port of that endpoint in the ready file
  "$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]].rsplit(":", 1)[1])' \
    "$tmp/ready.json" "$1"
}
control=$(port_of control_endpoint 2>/dev/null || true)
events=$(port_of events_endpoint 2>/dev/null || true)
[[ -n "$control" && -n "$events" ]] || { cat "$tmp/agent.err"; echo "agent did not start" >&2; exit 1; }

run_client() {
  "$python" "$client" --pb2 "$pb2" --keys "$tmp/client" --agent-key="$agent_key" \
    --control-port "$control" --events-port "$events" tcp://127.0.0.1 "$@"
}
run_client info | tee "$tmp/info.out"
grep -q "^node " "$tmp/info.out"

echo '{"backend": "mpi", "epochs": 1, "train_samples": 5000, "test_samples": 1000}' >"$tmp/spec.json"
run_client launch "$tmp/spec.json" --ranks 2 --follow | tee "$tmp/follow.out"
grep -q "^state COMPLETED" "$tmp/follow.out"
samples=$(grep -o 'followed [^:]*: [0-9]* samples' "$tmp/follow.out" | grep -o '[0-9]* samples' | cut -d' ' -f1)
[[ "$samples" -gt 0 ]] || { echo "no samples followed" >&2; exit 1; }
run_client info | grep -q "COMPLETED"

# The queue from a script (docs/queue.md): a run that takes every CPU slot, then two more; they
# wait, the low-priority one is moved ahead (high priority) and cancelled, and the other starts by
# itself and completes.
slots=$(run_client info | sed -n 's|.*; [0-9]*/\([0-9]*\) CPU slots used;.*|\1|p')
[[ "$slots" -ge 1 ]] || { echo "no CPU slot count in the node's info" >&2; exit 1; }
run_client launch "$tmp/spec.json" --ranks "$slots" --name all-slots | tee "$tmp/first.out"
grep -q "(STARTING)" "$tmp/first.out"
run_client launch "$tmp/spec.json" --ranks 1 --name next | tee "$tmp/second.out"
grep -q "(QUEUED: position 1, waiting for 1 CPU slot: 0 of $slots free; $slots slot" "$tmp/second.out"
run_client launch "$tmp/spec.json" --ranks 1 --name later --priority low | tee "$tmp/third.out"
grep -q "(QUEUED: position 2, " "$tmp/third.out"
third=$(awk '{print $2}' "$tmp/third.out")
run_client move "$third" --priority high | tee "$tmp/move.out"  # ahead of the normal one
grep -q "QUEUED position 1" "$tmp/move.out"
run_client cancel "$third" | tee "$tmp/cancel.out"
grep -q "STOPPED cancelled while queued" "$tmp/cancel.out"
second=$(awk '{print $2}' "$tmp/second.out")
run_client follow "$second" | tee "$tmp/queued-follow.out"
grep -q "^state COMPLETED" "$tmp/queued-follow.out"

# A sweep of the PyTorch example (docs/sweeps.md): its learning rate from the trial ("{lr}" in its
# arguments), ASHA on test/accuracy; the worst trial is stopped at the first rung with the rule's
# reason, and each trial's script ran with its own value (its train/lr, the peak of its schedule).
example=$(cd "$(dirname "$client")/../../examples/pytorch" && pwd)/ddp_fashion_mnist.py
cat >"$tmp/sweep.json" <<EOF
{"name": "example-lr", "method": "GRID", "metric": "test/accuracy", "max_concurrent": 2,
 "base": {"ranks_per_node": 1, "python": {"script": "$example",
   "args": ["--epochs", "4", "--train-samples", "2000", "--test-samples", "500", "--log-every",
            "5", "--inject-delay", "0:50", "--lr", "{lr}"]}},
 "parameters": [{"name": "lr", "values": [0.1, 0.00001, 0.05, 0.00003]}],
 "early_stopping": {"asha": {"eta": 2, "grace_period": 1, "max_resource": 4}}}
EOF
run_client sweep "$tmp/sweep.json" --follow | tee "$tmp/sweep.out"
grep -q "^sweep .* SWEEP_COMPLETED all 4 trials ended; best: trial [02] " "$tmp/sweep.out"
grep -q "^  trial 3 \[lr=3e-05\] STOPPED .* stopped at rung 0 (1 epoch): test/accuracy" "$tmp/sweep.out"
for trial in 0 1 2 3; do
  run=$(sed -n "s/^  trial $trial \[lr=\([^]]*\)\] [A-Z]* run \([^ ]*\) .*/\1 \2/p" "$tmp/sweep.out")
  lr=${run% *} id=${run#* }
  # follow exits 1 for a run that did not complete (a stopped trial): its output is what counts.
  first_lr=$( (run_client follow "$id" || true) | awk '/^step [0-9]+ train\/lr / { if (!n++) print $4 }')
  "$python" -c 'import sys; lr, seen = map(float, sys.argv[1:]); sys.exit(abs(seen - lr) > 0.05 * lr)' \
    "$lr" "$first_lr" || { echo "trial $trial ran with train/lr $first_lr, not $lr" >&2; exit 1; }
done

# A client whose key the agent does not know gets no answer (and says so).
if "$python" "$client" --pb2 "$pb2" --keys "$tmp/stranger" --agent-key="$agent_key" \
    --control-port "$control" --events-port "$events" tcp://127.0.0.1 info 2>"$tmp/stranger.err"; then
  echo "an unknown client was served" >&2
  exit 1
fi
grep -q "authorized" "$tmp/stranger.err"
echo "python client: info, launch, follow ($samples samples), the queue, a sweep and refusal all as expected"
