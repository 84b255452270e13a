#!/usr/bin/env bash
# Installs gVisor's runsc at /usr/local/bin/runsc, built from Debian's packaged Go sources.
#
# Why this way: Debian 12 and 13 ship no runsc binary, but Debian 13 (trixie) ships gVisor's Go sources
# (golang-gvisor-gvisor-dev) with every Go dependency packaged as golang-*-dev. We fetch those .debs
# and trixie's Go toolchain with a PRIVATE apt configuration (the system's apt sources are not touched),
# unpack them with dpkg -x into $FORGECTL_GVISOR_DIR and build runsc in GOPATH mode, the way Debian
# builds it. Nothing is downloaded but Debian packages. Debian's sources also lack systrap's
# prebuilt signal-handler blob (a placeholder, no C source), so this runsc runs on the ptrace
# platform: scripts/ensure-docker.sh registers it with --platform=ptrace.
#
# Cached by the resolved package versions: a second run with the same versions is instant, and
# GOCACHE lives under the same directory so a rebuild after a version bump is quick.
set -euo pipefail

dir=${FORGECTL_GVISOR_DIR:-/var/cache/forgectl/gvisor}
dest=${FORGECTL_RUNSC:-/usr/local/bin/runsc}
mirror=${FORGECTL_TRIXIE_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
roots=(golang-gvisor-gvisor-dev golang-go)

mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" "$dir/gocache"
echo "deb [signed-by=$keyring] $mirror trixie main" >"$dir/apt/sources.list"
: >"$dir/apt/status"
# Every path apt reads or writes is under $dir: the host's sources, lists, cache and dpkg status
# are neither used nor changed.
apt_opts=(
  -o "Dir::Etc::SourceList=$dir/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::State::status=$dir/apt/status"
  -o "Dir::Cache=$dir/apt/cache" -o "Dir::Etc::Preferences=/dev/null"
  -o "Dir::Etc::PreferencesParts=/dev/null" -o "APT::Architecture=$(dpkg --print-architecture)"
  -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
)

apt-get "${apt_opts[@]}" -qq update

# The closure of the roots' Depends, limited to what a Go build reads (Go sources and the toolchain);
# C libraries and the like are the host's business and runsc links none.
mapfile -t pkgs < <(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances "${roots[@]}" |
  grep -E '^(golang-|gccgo)' | grep -v '^golang-.*-doc$' | sort -u)
[ ${#pkgs[@]} -gt 0 ] || { echo "install-runsc: trixie lists give no golang packages" >&2; exit 1; }

stamp=""
for p in "${pkgs[@]}"; do
  v=$(apt-cache "${apt_opts[@]}" policy "$p" | awk '/Candidate:/ {print $2}')
  [ "$v" != "(none)" ] && stamp+="$p=$v"$'\n'
done
if [ -x "$dest" ] && [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$(printf '%s' "$stamp")" ]; then
  echo "install-runsc: $dest is current ($(grep '^golang-gvisor' "$dir/stamp"))"
  exit 0
fi

rm -rf "$dir/root" "$dir/debs"
mkdir -p "$dir/root" "$dir/debs"
(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download $(printf '%s\n' "$stamp" | grep . | tr '\n' ' '))
for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done

goroot=$(ls -d "$dir"/root/usr/lib/go-1.* | sort -V | tail -n1)
gopath=$dir/root/usr/share/gocode
[ -d "$gopath/src/gvisor.dev/gvisor/runsc" ] || { echo "install-runsc: no runsc sources in $gopath" >&2; exit 1; }

# The vDSO runsc maps into every sandboxed process: Debian ships its C sources but replaces the
# prebuilt vdso_<arch>.so with a 1-byte placeholder (runsc then panics: "failed to parse vdso.so as
# ELF"). Built here with a linker script of our own, written to what the sentry's loader checks
# (pkg/sentry/loader/vdso.go): one PT_LOAD from file offset 0 with memsz == filesz, nothing
# writable, `_params` = the page just before the vDSO, __kernel_rt_sigreturn exported.
build_vdso() {
  local src=$gopath/src/gvisor.dev/gvisor arch out
  case "$(uname -m)" in
    x86_64) arch=amd64 ;;
    aarch64) arch=arm64 ;;
    *) echo "install-runsc: no vDSO recipe for $(uname -m)" >&2; return 1 ;;
  esac
  out=$src/pkg/sentry/loader/vdsodata/vdso_$arch.so
  cat >"$dir/vdso.lds" <<'LDS'
SECTIONS {
  _params = . - 0x1000;
  . = SIZEOF_HEADERS;
  .hash : { *(.hash) } :text
  .gnu.hash : { *(.gnu.hash) }
  .dynsym : { *(.dynsym) }
  .dynstr : { *(.dynstr) }
  .gnu.version : { *(.gnu.version) }
  .gnu.version_d : { *(.gnu.version_d) }
  .gnu.version_r : { *(.gnu.version_r) }
  .note : { *(.note.*) } :text :note
  .eh_frame_hdr : { *(.eh_frame_hdr) } :text :eh_frame_hdr
  .eh_frame : { KEEP(*(.eh_frame)) } :text
  .dynamic : { *(.dynamic) } :text :dynamic
  .rodata : { *(.rodata*) } :text
  .text : { *(.text*) } :text
  /DISCARD/ : { *(.data*) *(.bss*) *(.got*) *(.plt*) *(.comment) }
}
PHDRS {
  text PT_LOAD FLAGS(5) FILEHDR PHDRS;
  dynamic PT_DYNAMIC FLAGS(4);
  note PT_NOTE FLAGS(4);
  eh_frame_hdr PT_GNU_EH_FRAME;
}
VERSION {
  LINUX_2.6 {
    global:
      clock_gettime; __vdso_clock_gettime; gettimeofday; __vdso_gettimeofday; time; __vdso_time;
      getcpu; __vdso_getcpu; __kernel_rt_sigreturn; __kernel_clock_gettime;
      __kernel_gettimeofday; __kernel_clock_getres;
    local: *;
  };
}
LDS
  (cd "$src" && g++ -I. -O2 -std=c++11 -fPIC -fno-stack-protector -fno-exceptions -fno-builtin \
    -fuse-ld=gold -nostdlib -shared -Wl,--hash-style=sysv -Wl,-soname=linux-vdso.so.1 \
    -Wl,-T,"$dir/vdso.lds" -Wl,--build-id=none -Wl,-z,max-page-size=4096 \
    -o "$out" vdso/vdso.cc vdso/vdso_time.cc)
  [ "$(readelf -lW "$out" | grep -c ' LOAD ')" = 1 ] || { echo "install-runsc: the vDSO has more than one PT_LOAD" >&2; return 1; }
}
build_vdso

# runsc refuses to network when it believes it runs in the host's network namespace, and believes so
# when /proc/sys/net/core/rmem_default exists; newer kernels (6.x) show that file in every
# namespace, so every networked container failed ("cannot run with network enabled in root
# network namespace"). Comparing namespace inodes is not possible from where runsc checks (init's
# is unreadable, its own process already sits in the container's), so the check is dropped: under
# Docker the namespace is always one Docker made for the container (forgectl never asks for host
# networking, and runsc does not serve --network host from Docker in any case).
patch_root_ns_check() {
  python3 - "$gopath/src/gvisor.dev/gvisor/runsc/sandbox/network.go" <<'PY'
import re, sys
path = sys.argv[1]
src = open(path).read()
new = """func isRootNS() (bool, error) {
	return false, nil
}
"""
out, n = re.subn(r"func isRootNS\(\) \(bool, error\) \{\n.*?\n\}\n", new, src, count=1, flags=re.S)
if n != 1:
    sys.exit("install-runsc: isRootNS not found in " + path)
open(path, "w").write(out)
PY
}
patch_root_ns_check

# GOPATH mode as dh-golang builds it; CGO off: runsc is a static binary.
out=$dir/runsc.new
env -i PATH="$goroot/bin:/usr/bin:/bin" HOME="$dir" GOROOT="$goroot" GOPATH="$gopath" \
  GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOCACHE="$dir/gocache" GOTOOLCHAIN=local \
  nice -n 10 "$goroot/bin/go" build -o "$out" gvisor.dev/gvisor/runsc
install -m 0755 "$out" "$dest"
rm -f "$out"
printf '%s' "$stamp" >"$dir/stamp"
echo "install-runsc: installed $dest ($("$dest" --version 2>/dev/null | head -n1))"
