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
# Usage: package_install_test.sh BUILD_DIR HAVE_NCCL
# Needs root (mmdebstrap and chroot) and mmdebstrap (scripts/install-deps --test); exits 77
# (skipped) without root or when the build tree has the CUDA backend (the packages are built
# without it: scripts/package uses such a tree).
set -euo pipefail
build=$(realpath "$1")
have_nccl=${2:-OFF}

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIPPED: the package test needs root (mmdebstrap, chroot)"
  exit 77
fi
if [[ $have_nccl == ON ]]; then
  echo "SKIPPED: this build tree has the nccl backend; the packages are built without it (scripts/package)"
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
debs=("$work"/debs/*.deb)
for deb in "${debs[@]}"; do
  echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version): Depends: $(dpkg-deb -f "$deb" Depends)"
done
((${#debs[@]} == 2)) || { echo "FAILED: expected 2 packages, got ${#debs[@]}" >&2; exit 1; }

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
