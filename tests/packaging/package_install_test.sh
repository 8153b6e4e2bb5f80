#!/usr/bin/env bash
# package_install_test (ctest label `package`): builds the Debian packages from a build tree with
# CPack, installs them with `apt-get install ./ringside*.deb` into a pristine Debian 12 root (an
# mmdebstrap minbase with nothing else installed, so a missing Depends shows), and checks the
# installed Ringside as a user would meet it:
#   ringside-agent --help, ringside-trainer --help; the agent's system user and its 0700 state
#   directory; `ringside-agent authorize` as root writes files the agent's user owns; the GUI
#   starts offscreen with its local agent (--smoke-test); systemd-analyze verify accepts the
#   unit; desktop-file-validate and appstreamcli validate accept the desktop entry and metainfo;
#   dpkg -r removes both packages and their files.
# When the build tree has the nccl plugin, CPack also makes ringside-node-cuda: its control fields
# are checked (its name, version, section, the Depends on ringside-node of the same version and on
# NVIDIA's packages for the build's CUDA), its one file and that file's one exported symbol; then
# it is installed in the same root without its CUDA dependencies (NVIDIA's repository is not
# reachable from the test), where ringside-trainer must find the plugin, name the CUDA library it
# cannot load and exit 1 for --backend nccl, and train on mpi for --backend auto.
# Usage: package_install_test.sh BUILD_DIR HAVE_NCCL [CUDA_MAJOR CUDA_MINOR CUDNN_MAJOR PLUGIN_DIR]
#   PLUGIN_DIR: where the plugin installs, relative to the prefix (lib/ringside)
# Needs root (mmdebstrap and chroot) and mmdebstrap (scripts/install-deps --test); exits 77
# (skipped) without root.
set -euo pipefail
build=$(realpath "$1")
have_nccl=${2:-OFF}
cuda_major=${3:-}; cuda_minor=${4:-}; cudnn_major=${5:-}; plugin_dir=${6:-lib/ringside}

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIPPED: the package test needs root (mmdebstrap, chroot)"
  exit 77
fi
command -v mmdebstrap >/dev/null ||
  { echo "FAILED: mmdebstrap is missing: run scripts/install-deps --test" >&2; exit 1; }

work=$(mktemp -d /var/tmp/ringside-package-test.XXXXXX)
root=$work/root
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
check() {  # check DESCRIPTION COMMAND...: runs COMMAND in the root; fails the test if it fails
  local what=$1; shift
  if ! in_root "$@"; then echo "FAILED: $what" >&2; exit 1; fi
  echo "ok: $what"
}

step "building the packages (cpack)"
cpack --config "$build/CPackConfig.cmake" -B "$work/debs" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; echo "FAILED: cpack" >&2; exit 1; }
all_debs=("$work"/debs/*.deb)
debs=()
cuda_deb=
for deb in "${all_debs[@]}"; do
  echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version): Depends: $(dpkg-deb -f "$deb" Depends)"
  case "$(dpkg-deb -f "$deb" Package)" in
    ringside-node-cuda) cuda_deb=$deb ;;
    *) debs+=("$deb") ;;
  esac
done
expected=2; [[ $have_nccl == ON ]] && expected=3
((${#all_debs[@]} == expected)) ||
  { echo "FAILED: expected $expected packages, got ${#all_debs[@]}" >&2; exit 1; }
((${#debs[@]} == 2)) || { echo "FAILED: expected ringside and ringside-node" >&2; exit 1; }
node_deb=
for d in "${debs[@]}"; do [[ $(dpkg-deb -f "$d" Package) == ringside-node ]] && node_deb=$d; done
[[ -n $node_deb ]] || { echo "FAILED: no ringside-node package" >&2; exit 1; }
if dpkg-deb -c "$node_deb" | grep -q 'libringside-nccl\.so'; then
  echo "FAILED: ringside-node carries the nccl plugin" >&2; exit 1
fi
if dpkg-deb -f "$node_deb" Depends | grep -Eq 'cuda|nccl|cudnn|cublas'; then
  echo "FAILED: ringside-node depends on a CUDA package: $(dpkg-deb -f "$node_deb" Depends)" >&2; exit 1
fi
echo "ok: ringside-node carries no CUDA and depends on none"

if [[ $have_nccl == ON ]]; then
  step "ringside-node-cuda's control fields and contents"
  [[ -n $cuda_deb ]] || { echo "FAILED: no ringside-node-cuda package" >&2; exit 1; }
  field() { dpkg-deb -f "$cuda_deb" "$1"; }
  version=$(dpkg-deb -f "$node_deb" Version)
  [[ $(field Version) == "$version" ]] ||
    { echo "FAILED: ringside-node-cuda $(field Version), ringside-node $version" >&2; exit 1; }
  [[ $(field Architecture) == "$(dpkg --print-architecture)" ]] ||
    { echo "FAILED: Architecture $(field Architecture)" >&2; exit 1; }
  [[ $(field Section) == contrib/science ]] || { echo "FAILED: Section $(field Section)" >&2; exit 1; }
  [[ -n $(field Description) ]] || { echo "FAILED: no Description" >&2; exit 1; }
  # Depends, one entry at a time: NVIDIA's names for the CUDA this build used.
  depends=$(field Depends)
  IFS=, read -ra entries <<<"$depends"
  declare -A have=()
  for e in "${entries[@]}"; do e=${e# }; have[${e%% *}]=$e; done
  for want in "ringside-node (= $version)" "libcudnn${cudnn_major}-cuda-${cuda_major}" \
              "libcublas-${cuda_major}-${cuda_minor}" "cuda-cudart-${cuda_major}-${cuda_minor}"; do
    [[ ${have[${want%% *}]:-} == "$want" ]] ||
      { echo "FAILED: Depends lacks '$want': $depends" >&2; exit 1; }
  done
  [[ ${have[libnccl2]:-} =~ ^libnccl2\ \(\>=\ 2\.[0-9]+\)$ ]] ||
    { echo "FAILED: Depends lacks 'libnccl2 (>= 2.N)': $depends" >&2; exit 1; }
  ((${#entries[@]} == 5)) || { echo "FAILED: unexpected Depends entries: $depends" >&2; exit 1; }
  echo "ok: Depends: $depends"
  files=$(dpkg-deb -c "$cuda_deb" | awk '$1 !~ /^d/ {print $NF}' | sort | tr '\n' ' ')
  [[ $files == "./usr/$plugin_dir/libringside-nccl.so ./usr/share/doc/ringside-node-cuda/copyright " ]] ||
    { echo "FAILED: ringside-node-cuda holds: $files" >&2; exit 1; }
  mkdir -p "$work/cuda-x"; dpkg-deb -x "$cuda_deb" "$work/cuda-x"
  exported=$(nm -D --defined-only "$work/cuda-x/usr/$plugin_dir/libringside-nccl.so" | awk '{print $3}')
  [[ $exported == ringsideNcclBackend_v1 ]] ||
    { echo "FAILED: the plugin exports: $exported" >&2; exit 1; }
  echo "ok: /usr/$plugin_dir/libringside-nccl.so, exporting ringsideNcclBackend_v1 alone"
fi

step "creating a pristine Debian 12 root"
sources=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[[ -n $sources ]] || sources=$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null || true)
[[ -n $sources ]] || { echo "FAILED: no apt sources on this machine" >&2; exit 1; }
printf '%s\n' "$sources" | grep -v '^#' |
  mmdebstrap --quiet --variant=minbase bookworm "$root" - >"$work/mmdebstrap.log" 2>&1 ||
  { cat "$work/mmdebstrap.log" >&2; echo "FAILED: mmdebstrap" >&2; exit 1; }
for m in proc sys dev dev/pts; do
  mkdir -p "$root/$m"; mount --bind "/$m" "$root/$m"; mounted+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"

step "apt-get install ./ringside*.deb"
in_root sh -c 'cd /tmp/debs && apt-get update -q >/dev/null &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./ringside*.deb' >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; echo "FAILED: apt-get install" >&2; exit 1; }
echo "ok: installed $(in_root dpkg-query -W -f='${Package} ${Version}, ' ringside ringside-node)"

step "the installed programs"
check "ringside-agent --help" sh -c 'ringside-agent --help >/dev/null'
check "ringside-trainer --help" sh -c 'ringside-trainer --help >/dev/null'
check "the agent's system user exists" getent passwd ringside-agent
check "/var/lib/ringside-agent belongs to ringside-agent, mode 0700" \
  sh -c 'test "$(stat -c %U:%a /var/lib/ringside-agent)" = ringside-agent:700'
key=$(in_root ringside-agent --state-dir /tmp/keys print-public-key)
check "ringside-agent authorize as root writes the allowlist as ringside-agent" \
  sh -c "ringside-agent authorize '$key' >/dev/null &&
         test \"\$(stat -c %U /var/lib/ringside-agent/allowlist)\" = ringside-agent"
check "the GUI starts offscreen with its local agent (ringside --smoke-test)" \
  sh -c 'QT_QPA_PLATFORM=offscreen ringside --smoke-test --data-dir /tmp/gui'

step "validating the unit, desktop entry and metainfo"
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  systemd desktop-file-utils appstream' >"$work/tools.log" 2>&1 ||
  { cat "$work/tools.log" >&2; echo "FAILED: installing the validators" >&2; exit 1; }
check "systemd-analyze verify ringside-agent.service" \
  sh -c 'out=$(systemd-analyze verify /usr/lib/systemd/system/ringside-agent.service 2>&1);
         echo "$out"; test -z "$out"'
check "desktop-file-validate" desktop-file-validate /usr/share/applications/org.ringside.Ringside.desktop
check "appstreamcli validate" \
  appstreamcli validate --no-net /usr/share/metainfo/org.ringside.Ringside.metainfo.xml

if [[ $have_nccl == ON ]]; then
  step "ringside-node-cuda without NVIDIA's libraries (dpkg --force-depends)"
  mkdir -p "$root/tmp/cuda-deb"; cp "$cuda_deb" "$root/tmp/cuda-deb/"
  in_root sh -c 'dpkg --force-depends -i /tmp/cuda-deb/*.deb' >"$work/cuda-install.log" 2>&1 ||
    { cat "$work/cuda-install.log" >&2; echo "FAILED: dpkg -i ringside-node-cuda" >&2; exit 1; }
  set +e
  nccl=$(in_root sh -c 'cd /tmp && ringside-trainer --backend nccl --max-steps 1 \
    --train-samples 256 --test-samples 256 --global-batch 64 2>&1')
  code=$?
  set -e
  echo "$nccl" | tail -n 3
  [[ $code == 1 ]] || { echo "FAILED: --backend nccl exited $code, expected 1" >&2; exit 1; }
  grep -q "plugin /usr/$plugin_dir/libringside-nccl.so needs lib[a-zA-Z]*\.so\.[0-9]*, .*NVIDIA's Debian package" <<<"$nccl" ||
    { echo "FAILED: the message does not name the missing CUDA library and its package" >&2; exit 1; }
  echo "ok: --backend nccl names the missing CUDA library and its package, exit 1"
  check "--backend auto trains on mpi without NVIDIA's libraries" \
    sh -c 'cd /tmp && ringside-trainer --backend auto --max-steps 2 --train-samples 256 \
      --test-samples 256 --global-batch 64 >auto.out 2>auto.err &&
      grep -q "backend auto chose mpi: the nccl backend.s plugin /usr/.*/libringside-nccl.so needs" auto.err &&
      grep -q "\"backend\":\"mpi\"" auto.out'
  in_root dpkg -r ringside-node-cuda >"$work/cuda-remove.log" 2>&1 ||
    { cat "$work/cuda-remove.log" >&2; echo "FAILED: dpkg -r ringside-node-cuda" >&2; exit 1; }
  [[ ! -e $root/usr/$plugin_dir/libringside-nccl.so ]] ||
    { echo "FAILED: the plugin is still there after dpkg -r" >&2; exit 1; }
  echo "ok: dpkg -r ringside-node-cuda removed the plugin"
fi

step "dpkg -r"
in_root dpkg -r ringside ringside-node >"$work/remove.log" 2>&1 ||
  { cat "$work/remove.log" >&2; echo "FAILED: dpkg -r" >&2; exit 1; }
for f in /usr/bin/ringside /usr/bin/ringside-agent /usr/bin/ringside-trainer \
         /usr/lib/systemd/system/ringside-agent.service \
         /usr/share/applications/org.ringside.Ringside.desktop; do
  if [[ -e $root$f ]]; then echo "FAILED: $f is still there after dpkg -r" >&2; exit 1; fi
done
echo "ok: dpkg -r removed both packages and their files"
echo
echo "package_install_test: all checks passed"
