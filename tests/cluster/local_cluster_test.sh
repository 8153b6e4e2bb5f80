#!/usr/bin/env bash
# The local cluster (scripts/local-cluster): brings up 2 nodes, checks the JSON it prints, the
# nodes' host names, their PID, /tmp and /etc/hosts namespaces, runs one Open MPI job across
# both nodes through scripts/local-cluster-rsh (4 ranks of `hostname`, and 30 steps of the
# trainer when the dataset is installed), takes the cluster down and checks nothing is left.
# Usage: local_cluster_test.sh [BIN_DIR]   (a build tree; default: build/release of this checkout)
# Exit status: 0 passed, 1 failed, 77 skipped (not root, or `scripts/local-cluster check` finds
# that a cluster cannot be made here; the reason is printed).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin_dir=$(cd "${1:-$root/build/release}" && pwd)
cluster="$root/scripts/local-cluster"
rsh="$root/scripts/local-cluster-rsh"
state=/run/ringside-local-cluster
data=/usr/share/datasets/fashion-mnist

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

[[ $(id -u) -eq 0 ]] || skip "the local cluster needs root (namespaces, interfaces, mounts)"
case "$root/ ${bin_dir:-}/" in
  /tmp/* | /dev/shm/* | *" /tmp/"* | *" /dev/shm/"*)
    skip "the checkout or build tree is under /tmp or /dev/shm, which the nodes have their own of" ;;
esac
for tool in ip unshare nsenter mpirun /usr/bin/python3; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
# What `up` needs (namespaces, bridges, veth pairs, a / it can make private), tried without
# changing anything.
why=$("$cluster" check) || skip "$why"
[[ -x $bin_dir/agent/ringside-agent ]] || fail "no ringside-agent in $bin_dir/agent"
if [[ -e $state ]] || ip netns list | grep '^rs-node-' >/dev/null; then
  fail "a local cluster is already up; this test does not take down what it did not make: run \`$cluster down\`"
fi

tmp=$(mktemp -d)
cleanup() {
  local status=$?
  if ((status != 0)) && [[ -d $state ]]; then
    echo "--- status, broker and agent logs at the failure:" >&2
    "$cluster" status >&2 || true
    tail -n 20 "$state/rsh.log" >&2 || true
    tail -n 20 /var/lib/ringside-local-cluster/node-*/agent.log >&2 || true
  fi
  "$cluster" down || status=1
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # so that a timeout or Ctrl-C, too, takes the cluster down

# The machine's mounts where the cluster could leave some (ip netns add makes /run/netns a mount
# point; in a chroot, a node binds / onto itself, in its own namespace only): `down` must leave
# them as they were.
cluster_mounts() {
  awk '$5 == "/" || $5 ~ /^\/run\/(netns|sshd)/ || $5 ~ /ringside-local-cluster/ { print $5 }' \
    /proc/self/mountinfo | sort
}
mounts_before=$(cluster_mounts)
echo "--- up 2"
"$cluster" up 2 --bin-dir "$bin_dir" >"$tmp/cluster.json"
# One JSON document with both nodes; every node's endpoints on its own address in one /24; keys
# of 40 Z85 characters; the client's secret key readable by root alone; the same as cluster.json.
/usr/bin/python3 - "$tmp/cluster.json" "$state/cluster.json" <<'EOF'
import json, os, stat, sys
cluster = json.load(open(sys.argv[1]))
assert cluster == json.load(open(sys.argv[2])), "stdout differs from cluster.json"
nodes = cluster["nodes"]
assert [n["name"] for n in nodes] == ["node-1", "node-2"], nodes
subnets = set()
for n in nodes:
    address = n["address"]
    subnets.add(address.rsplit(".", 1)[0])
    assert n["control"] == f"tcp://{address}:47600", n
    assert n["events"] == f"tcp://{address}:47601", n
    assert len(n["agent_public_key"]) == 40, n
assert len(subnets) == 1 and nodes[0]["address"] != nodes[1]["address"], nodes
assert len(cluster["client_public_key"]) == 40
secret = os.stat(cluster["client_secret_key_file"])
assert stat.S_IMODE(secret.st_mode) == 0o600 and secret.st_uid == 0, oct(secret.st_mode)
print("cluster JSON: 2 nodes on", subnets.pop() + ".0/24")
EOF
address_2=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["nodes"][1]["address"])' "$tmp/cluster.json")
"$cluster" status >/dev/null || fail "status does not report both agents alive"
# What `down` must remove, recorded while it is there.
pids=$(cat "$state"/node-*/holder.pid "$state"/node-*/agent.pid "$state/rsh.pid")

echo "--- UTS: host names"
[[ $("$cluster" exec node-1 hostname) == node-1 ]] || fail "node-1's host name is not node-1"
[[ $("$cluster" exec node-2 hostname) == node-2 ]] || fail "node-2's host name is not node-2"
[[ $("$cluster" exec "$address_2" hostname) == node-2 ]] || fail "exec by address did not reach node-2"
set +e
"$cluster" exec node-2 sh -c 'exit 7'
[[ $? -eq 7 ]] || fail "exec does not pass on the command's exit status"
set -e

echo "--- PID: node-2 does not see node-1's processes"
setsid "$cluster" exec node-1 sleep 31415 </dev/null >/dev/null 2>&1 &
disown
# Every /proc/<pid>/cmdline of a node, one per line.
cmdlines() {
  # shellcheck disable=SC2016  # expanded in the node
  "$cluster" exec "$1" sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <"$p/cmdline" 2>/dev/null; echo; done'
}
# Whether node $1 runs the sleep. grep reads all its input (no -q): with pipefail, an early exit
# would make cmdlines die of SIGPIPE and the pipeline fail although the line was found.
runs_sleep() { cmdlines "$1" | grep '^sleep 31415' >/dev/null; }
for _ in $(seq 50); do
  runs_sleep node-1 && break
  sleep 0.1
done
runs_sleep node-1 || fail "node-1 does not see its own sleep 31415"
if runs_sleep node-2; then fail "node-2 sees node-1's sleep 31415"; fi
[[ $(cmdlines node-2 | grep -c 'ringside-agent') -eq 1 ]] || fail "node-2 does not see exactly one agent"
[[ $("$cluster" exec node-2 cat /proc/1/comm) == bash ]] || fail "pid 1 of node-2 is not its holder"

echo "--- mount: /tmp and /etc/hosts"
"$cluster" exec node-1 sh -c "echo one >/tmp/marker-$$"
[[ $("$cluster" exec node-1 cat "/tmp/marker-$$") == one ]] || fail "node-1 lost its /tmp file"
if "$cluster" exec node-2 test -e "/tmp/marker-$$"; then fail "node-2 sees node-1's /tmp"; fi
[[ ! -e /tmp/marker-$$ ]] || fail "the machine sees node-1's /tmp"
[[ $("$cluster" exec node-1 getent hosts node-2 | awk '{ print $1 }') == "$address_2" ]] ||
  fail "node-2 does not resolve to $address_2 in node-1"

echo "--- remote launcher"
set +e
"$rsh" node-9 true 2>/dev/null
[[ $? -eq 255 ]] || fail "local-cluster-rsh to an unknown host does not exit 255"
set -e
# shellcheck disable=SC2016  # expanded in node-2
[[ $("$cluster" exec node-1 "$rsh" node-2 'echo $(hostname) $USER') == "node-2 root" ]] ||
  fail "local-cluster-rsh from node-1 does not run in node-2"

echo "--- Open MPI across the nodes: 4 ranks of hostname"
# shellcheck disable=SC2054  # the commas are the host list's
mpirun_across=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpirun --mca plm_rsh_agent "$rsh" --host node-1:2,node-2:2 -np 4)
"$cluster" exec node-1 "${mpirun_across[@]}" hostname | sort >"$tmp/hostnames"
cat "$tmp/hostnames"
[[ $(tr '\n' ' ' <"$tmp/hostnames") == "node-1 node-1 node-2 node-2 " ]] ||
  fail "the 4 ranks did not run 2 on node-1 and 2 on node-2"

if [[ -d $data ]]; then
  echo "--- Open MPI across the nodes: 4 trainer ranks, 30 steps"
  "$cluster" exec node-1 sh -c 'cd /tmp && "$@"' sh "${mpirun_across[@]}" \
    "$bin_dir/trainer/ringside-trainer" --epochs 1 --max-steps 30 --quiet \
    --checkpoint-dir /tmp/checkpoints >"$tmp/trainer.out"
  grep '"type":"end"' "$tmp/trainer.out"
  grep -q '"status":"completed"' "$tmp/trainer.out" || fail "the 2-node trainer run did not complete"
else
  echo "--- (no dataset at $data: the trainer run is left out)"
fi

gui=$bin_dir/gui/ringside
if [[ -x $gui ]]; then
  echo "--- ringside --local-cluster --smoke-test: the GUI reaches both nodes with the cluster's key"
  QT_QPA_PLATFORM=offscreen "$gui" --data-dir "$tmp/gui" --local-cluster --smoke-test \
    >"$tmp/smoke.out" 2>&1 || { cat "$tmp/smoke.out" >&2; fail "the GUI's smoke test failed on the local cluster"; }
  grep 'local cluster nodes node-1, node-2 online' "$tmp/smoke.out" ||
    fail "the GUI's smoke test did not see both nodes online: $(cat "$tmp/smoke.out")"
else
  echo "--- (no GUI at $gui: its smoke test is left out)"
fi

echo "--- down"
trap - EXIT
"$cluster" down
leftovers=$(ip -o link show | awk -F': ' '{ print $2 }' | grep -E '^rs-(br0|veth-)' || true)
[[ -z $leftovers ]] || fail "interfaces left after down: $leftovers"
! ip netns list | grep '^rs-node-' >/dev/null || fail "network namespaces left after down: $(ip netns list)"
for pid in $pids; do
  # A zombie is gone as far as the cluster goes: only its parent can reap it.
  if [[ -e /proc/$pid ]] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
    fail "process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) is left after down"
  fi
done
[[ ! -e $state && ! -e /var/lib/ringside-local-cluster ]] || fail "state directories left after down"
mounts_after=$(cluster_mounts)
[[ $mounts_after == "$mounts_before" ]] ||
  fail "the machine's mounts changed: $(diff <(echo "$mounts_before") <(echo "$mounts_after") | grep '^[<>]')"
rm -rf "$tmp"
echo "local cluster: up, namespaces, launcher, 2-node MPI job and down all as expected"
