#!/usr/bin/env bash
# The emulated aarch64 board: a chroot "board" reached over ssh, for the board-side tests and
# for trying the board tools by hand (docs/board.md).
#
#   scripts/board.sh [--dir DIR] setup|start|stop|status
#
# setup   lays out the board's filesystem (DIR/rootfs: /userdata /app /tmp /root/.ssh /etc ...),
#         its ssh host key and a client key pair (DIR/keys), and an aarch64 busybox so that
#         `uname -m` says aarch64 (busybox-static:arm64, downloaded once into the cache with a
#         private apt state; nothing arm64 is installed on the host). Idempotent.
# start   registers qemu-aarch64 with binfmt_misc (F flag, so aarch64 executables run inside
#         the chroot), creates the network namespace NAME with a veth pair (board at
#         127.77.N.2:22), then runs OpenSSH's sshd chrooted into the rootfs in its own mount,
#         UTS (hostname NAME) and PID namespaces, with the host's /usr mounted read-only.
#         Waits (at most 10 s) until the port answers, then prints the connection details and
#         writes them to DIR/board.env (BOARD_HOST BOARD_PORT BOARD_USER BOARD_KEY
#         BOARD_HOST_KEY_PUB BOARD_KNOWN_HOSTS BOARD_ROOTFS BOARD_NAME). Idempotent.
# stop    ends sshd (TERM, then KILL) and with it every board process, deletes the network
#         namespace (veth, routes). The board's mounts live only in its own mount namespace.
#         Idempotent; safe in a `trap ... EXIT`.
# status  prints "running HOST:PORT" (exit 0) or "stopped" (exit 3).
#
# Settings (environment):
#   OPENBPU_BOARD_DIR  board folder (default ~/.cache/openbpu/board; --dir wins)
#   BOARD_NAME         netns / hostname, at most 12 characters (default board0)
#   BOARD_SUBNET       the board's /24 as 127.77.N (default: N = the digits that end BOARD_NAME)
#   BOARD_NETNS        1 (default) or 0: no namespace, sshd on 127.0.0.1 and a free port
#                      (BOARD_PORT, default the first free one from 2222)
#   BOARD_BUSYBOX      auto (default: use it if it can be had), 1 (required) or 0 (none)
#   OPENBPU_CACHE      where the busybox .deb is kept (default ~/.cache/openbpu)
# Needs root, qemu-user-static, binfmt-support, openssh-server/-client, iproute2, util-linux.
set -euo pipefail

self=$(readlink -f "$0")
die() { echo "board.sh: $*" >&2; exit 1; }
log() { echo "board.sh: $*" >&2; }

dir=${OPENBPU_BOARD_DIR:-$HOME/.cache/openbpu/board}
cmd=
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    setup|start|stop|status|__inner) cmd=$1; shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (setup|start|stop|status, --dir DIR)" ;;
  esac
done
[ -n "$cmd" ] || die "usage: board.sh [--dir DIR] setup|start|stop|status"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rootfs=$dir/rootfs keys=$dir/keys state=$dir/state
cache=${OPENBPU_CACHE:-$HOME/.cache/openbpu}

# ---------------------------------------------------------------------------------------------
# setup

fetch_busybox() {  # prints the path of an unpacked aarch64 busybox, or nothing
  local debs=$cache/board-debs apt_state=$cache/board-apt deb
  deb=$(ls "$debs"/busybox-static_*_arm64.deb 2>/dev/null | head -n1 || true)
  if [ -z "$deb" ]; then
    log "downloading busybox-static:arm64 (once, into $debs)"
    mkdir -p "$debs" "$apt_state/lists/partial" "$apt_state/cache/archives/partial"
    : >"$apt_state/status"
    # A private apt state that sees only arm64: the host's dpkg architectures stay as they are.
    local apt=(apt-get -q -o APT::Architecture=arm64 -o APT::Architectures::=arm64
      -o Dir::State::Lists="$apt_state/lists" -o Dir::Cache="$apt_state/cache"
      -o Dir::State::status="$apt_state/status" -o APT::Sandbox::User=root)
    if "${apt[@]}" update >"$apt_state/update.log" 2>&1 &&
       (cd "$debs" && "${apt[@]}" download busybox-static) >"$apt_state/download.log" 2>&1; then
      deb=$(ls "$debs"/busybox-static_*_arm64.deb 2>/dev/null | head -n1 || true)
    fi
    rm -rf "$apt_state/lists" "$apt_state/cache"
  fi
  [ -n "$deb" ] || return 0
  rm -rf "$dir/busybox-deb"
  dpkg-deb -x "$deb" "$dir/busybox-deb"
  [ -x "$dir/busybox-deb/bin/busybox" ] && echo "$dir/busybox-deb/bin/busybox"
}

do_setup() {
  [ "$(id -u)" -eq 0 ] || die "setup needs root"
  for t in ssh-keygen dpkg-deb; do command -v $t >/dev/null || die "$t is missing (scripts/install_deps.sh)"; done
  mkdir -p "$keys" "$state"
  [ -f "$keys/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "openbpu-board-host" -f "$keys/ssh_host_ed25519_key"
  [ -f "$keys/client_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C "openbpu-board-client" -f "$keys/client_ed25519"
  chmod 600 "$keys/ssh_host_ed25519_key" "$keys/client_ed25519"

  mkdir -p "$rootfs"
  cd "$rootfs"
  mkdir -p usr app userdata tmp root/.ssh etc/ssh dev proc sys run var/log var/tmp opt/board/bin lib
  chmod 700 root root/.ssh; chmod 1777 tmp var/tmp
  touch var/log/lastlog var/log/wtmp
  # The host's /usr (bind-mounted read-only at start) serves sshd and bash.
  ln -sfn usr/bin bin; ln -sfn usr/sbin sbin; ln -sfn usr/lib64 lib64
  ln -sfn ../usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu
  # The board's own aarch64 runtime (the cross toolchain's glibc / libstdc++), in the standard
  # places, for dynamically linked aarch64 programs. OpenBPU's board tools are static.
  rm -rf lib/aarch64-linux-gnu lib/ld-linux-aarch64.so.1
  if [ -f /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]; then
    mkdir -p lib/aarch64-linux-gnu
    find /usr/aarch64-linux-gnu/lib -maxdepth 1 -name '*.so.[0-9]*' \
      ! -name 'lib[ahlmtu]san.so*' ! -name 'libhwasan.so*' -exec cp -a {} lib/aarch64-linux-gnu/ \;
    ln -sfn aarch64-linux-gnu/ld-linux-aarch64.so.1 lib/ld-linux-aarch64.so.1
  fi

  local bb=
  if [ "${BOARD_BUSYBOX:-auto}" != 0 ]; then
    bb=$(fetch_busybox || true)
    if [ -z "$bb" ]; then
      [ "${BOARD_BUSYBOX:-auto}" = 1 ] && die "busybox-static:arm64 could not be had (see $cache/board-apt/*.log)"
      log "no aarch64 busybox: \`uname -m\` on the board will say x86_64"
    fi
  fi
  rm -f opt/board/bin/*
  if [ -n "$bb" ]; then
    cp "$bb" opt/board/bin/busybox
    ln -s busybox opt/board/bin/uname; ln -s busybox opt/board/bin/arch
  fi

  printf 'root:x:0:0:root:/root:/bin/bash\nsshd:x:100:65534::/run/sshd:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >etc/passwd
  printf 'root:x:0:\nnogroup:x:65534:\n' >etc/group
  printf 'root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n' >etc/shadow
  chmod 640 etc/shadow
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >etc/nsswitch.conf
  printf '127.0.0.1 localhost\n' >etc/hosts
  printf 'board\n' >etc/hostname
  printf 'OpenBPU emulated aarch64 board (scripts/board.sh): chroot + qemu-user via binfmt_misc\n' >etc/board-release
  cp "$keys/ssh_host_ed25519_key" "$keys/ssh_host_ed25519_key.pub" etc/ssh/
  chmod 600 etc/ssh/ssh_host_ed25519_key
  cp "$keys/client_ed25519.pub" root/.ssh/authorized_keys
  chmod 600 root/.ssh/authorized_keys
  log "set up in $dir"
}

# ---------------------------------------------------------------------------------------------
# start / stop / status

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
launcher_pid() { cat "$state/launcher.pid" 2>/dev/null || true; }
children() { cat "/proc/$1/task/$1/children" 2>/dev/null || true; }
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

load_state() {  # the settings of the last start
  name='' netns='' host='' port='' veth=''
  [ -f "$state/board.conf" ] && . "$state/board.conf"
  return 0
}

do_stop() {
  load_state
  local pid
  pid=$(launcher_pid)
  if alive "$pid"; then
    # unshare --fork ignores SIGTERM: signal its child (sshd, PID 1 of the board's PID
    # namespace); when it ends, the kernel ends every other board process.
    local c
    for c in $(children "$pid"); do kill -TERM "$c" 2>/dev/null || true; done
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.05; done
    if alive "$pid"; then
      log "sshd did not end on TERM: KILL"
      for c in $(children "$pid"); do kill -KILL "$c" 2>/dev/null || true; done
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 50); do alive "$pid" || break; sleep 0.05; done
    fi
    alive "$pid" && die "the board's launcher (pid $pid) does not end"
  fi
  rm -f "$state/launcher.pid"
  if [ -n "$netns" ] && ip netns list | grep -qw "^$netns"; then
    local left
    left=$(ip netns pids "$netns" 2>/dev/null || true)
    [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
    ip netns del "$netns"
  fi
  # iproute2 makes /run/netns a mount point on its first netns; take it back when none is left.
  if mountpoint -q /run/netns 2>/dev/null && [ -z "$(ls -A /run/netns)" ]; then umount /run/netns || true; fi
  # The veth pair goes with the namespace, but the kernel removes the host end asynchronously
  # (between a `show` and a `del` it may vanish); a start that failed halfway may leave it.
  if [ -n "$veth" ]; then
    ip link del "${veth}h" 2>/dev/null || true
    for _ in $(seq 100); do ip link show "${veth}h" >/dev/null 2>&1 || break; sleep 0.02; done
    ! ip link show "${veth}h" >/dev/null 2>&1 || die "the host end ${veth}h of the board's veth pair does not go away (ip link del ${veth}h)"
  fi
  rm -f "$state/board.conf" "$dir/board.env"
  return 0
}

setup_binfmt() {
  local entry=/proc/sys/fs/binfmt_misc/qemu-aarch64
  [ -f /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
    die "cannot mount binfmt_misc on /proc/sys/fs/binfmt_misc: the board needs aarch64 executables to run directly (qemu-user via binfmt_misc)"
  if ! grep -q '^enabled' "$entry" 2>/dev/null; then
    command -v update-binfmts >/dev/null || die "update-binfmts is missing (apt install binfmt-support qemu-user-static)"
    update-binfmts --enable qemu-aarch64 || die "update-binfmts --enable qemu-aarch64 failed (is qemu-user-static installed?)"
  fi
  grep -q '^enabled' "$entry" 2>/dev/null || die "qemu-aarch64 is not enabled in binfmt_misc"
  grep -q '^flags:.*F' "$entry" ||
    die "binfmt_misc's qemu-aarch64 entry lacks the F (fix-binary) flag, so aarch64 programs cannot run inside the board's chroot; re-register it from qemu-user-static (update-binfmts --disable qemu-aarch64 && update-binfmts --enable qemu-aarch64)"
}

free_port() {
  local p=${BOARD_PORT:-2222}
  while ss -Hltn "sport = :$p" | grep -q .; do p=$((p + 1)); done
  echo "$p"
}

do_start() {
  [ "$(id -u)" -eq 0 ] || die "start needs root"
  [ -f "$rootfs/etc/ssh/ssh_host_ed25519_key" ] || die "$dir is not set up (board.sh --dir $dir setup)"
  for t in ip unshare setsid chroot ssh-keygen; do command -v $t >/dev/null || die "$t is missing (scripts/install_deps.sh)"; done
  [ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd is missing (apt install openssh-server)"
  if alive "$(launcher_pid)"; then
    load_state
    if port_open "$host" "$port"; then log "already running"; print_env; return 0; fi
  fi
  do_stop

  name=${BOARD_NAME:-board0}
  [[ "$name" =~ ^[a-z][a-z0-9]{0,11}$ ]] || die "BOARD_NAME '$name': 1-12 lower-case letters / digits"
  local netns_on=${BOARD_NETNS:-1} sub=
  if [ "$netns_on" = 1 ]; then
    if [ -n "${BOARD_SUBNET:-}" ]; then sub=$BOARD_SUBNET
    elif [[ "$name" =~ ([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le 255 ]; then sub=127.77.$((10#${BASH_REMATCH[1]}))
    else die "BOARD_NAME '$name' does not end in a number 0-255: set BOARD_SUBNET=127.77.N"; fi
    [[ "$sub" =~ ^127\.[0-9]+\.[0-9]+$ ]] || die "BOARD_SUBNET '$sub': expected 127.X.N"
    netns=$name veth=vb$name host=$sub.2 port=22
    ! ip netns list | grep -qw "^$netns" || die "network namespace $netns exists already (another board named $name? board.sh --dir ITS_DIR stop, or ip netns del $netns)"
    ! ip route show table local | grep -q "^$sub.0/24 " || die "$sub.0/24 is used by another board: pick another BOARD_NAME / BOARD_SUBNET"
  else
    netns='' veth='' host=127.0.0.1 port=$(free_port)
  fi
  printf 'name=%q\nnetns=%q\nhost=%q\nport=%q\nveth=%q\n' "$name" "$netns" "$host" "$port" "$veth" >"$state/board.conf"
  # Any failure from here on (set -e) leaves nothing behind.
  trap 'if [ $? -ne 0 ]; then log "start failed; cleaning up"; do_stop; fi' EXIT

  setup_binfmt

  local launch=()
  if [ -n "$netns" ]; then
    # 127.x addresses on a veth need route_localnet and a /24 in the local table on both ends
    # (else the host's "local 127.0.0.0/8 dev lo" route takes the traffic).
    ip netns add "$netns"
    ip link add "${veth}h" type veth peer name "${veth}b"
    ip link set "${veth}b" netns "$netns"
    echo 1 >"/proc/sys/net/ipv4/conf/${veth}h/route_localnet"
    ip addr add "$sub.1/24" dev "${veth}h"
    ip link set "${veth}h" up
    ip route add "$sub.0/24" dev "${veth}h" src "$sub.1" table local
    ip netns exec "$netns" sh -ec "
      ip link set lo up
      echo 1 >/proc/sys/net/ipv4/conf/${veth}b/route_localnet
      ip addr add $sub.2/24 dev ${veth}b
      ip link set ${veth}b up
      ip route add $sub.0/24 dev ${veth}b src $sub.2 table local"
    launch=(ip netns exec "$netns")
  fi

  # sshd_config: everything the board's sessions get is on the single SetEnv line (sshd uses
  # only the first SetEnv line). /opt/board/bin (aarch64 busybox uname / arch) comes first.
  cat >"$rootfs/etc/ssh/sshd_config" <<EOF
HostKey /etc/ssh/ssh_host_ed25519_key
PidFile /run/sshd.pid
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
Subsystem sftp internal-sftp
Port $port
ListenAddress $host
SetEnv PATH=/opt/board/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
  rm -f "$state/launcher.pid"
  : >"$state/sshd.log"
  BOARD_HOSTNAME=$name setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' launcher "$state/launcher.pid" \
    "${launch[@]}" unshare --mount --uts --pid --fork --kill-child=SIGKILL "$self" --dir "$dir" __inner \
    </dev/null >>"$state/sshd.log" 2>&1 &

  local pid='' ok=''
  for _ in $(seq 100); do  # 10 s at most
    pid=$(launcher_pid)
    if [ -n "$pid" ] && ! alive "$pid"; then break; fi
    if port_open "$host" "$port"; then ok=1; break; fi
    sleep 0.1
  done
  if [ -z "$ok" ]; then
    log "sshd did not come up on $host:$port within 10 s; its log:"
    sed 's/^/  /' "$state/sshd.log" >&2
    exit 1
  fi
  trap - EXIT
  write_env
  print_env
}

write_env() {
  local hk=$keys/ssh_host_ed25519_key.pub kh=$dir/known_hosts hostspec=$host
  [ "$port" = 22 ] || hostspec="[$host]:$port"
  echo "$hostspec $(cut -d' ' -f1,2 "$hk")" >"$kh"
  # %q: a path with spaces, quotes or $() is sourced as the path it is, never run.
  {
    echo "# Written by scripts/board.sh start; source it: . board.env"
    printf 'BOARD_NAME=%q\nBOARD_HOST=%q\nBOARD_PORT=%q\nBOARD_USER=root\nBOARD_KEY=%q\n' "$name" "$host" "$port" \
      "$keys/client_ed25519"
    printf 'BOARD_HOST_KEY_PUB=%q\nBOARD_KNOWN_HOSTS=%q\nBOARD_ROOTFS=%q\n' "$hk" "$kh" "$rootfs"
  } >"$dir/board.env"
}

print_env() {
  echo "board $name running: ssh -i $keys/client_ed25519 -p $port -o UserKnownHostsFile=$dir/known_hosts root@$host"
  cat "$dir/board.env"
}

do_status() {
  load_state
  if alive "$(launcher_pid)" && [ -n "$host" ] && port_open "$host" "$port"; then
    echo "running $host:$port ($name, $dir)"
  else
    echo "stopped"
    return 3
  fi
}

# Runs in the board's new mount / UTS / PID namespaces (PID 1 there): assemble the root, then
# become sshd. Every mount made here disappears with the namespace.
do_inner() {
  local r=$rootfs
  mount --make-rprivate /
  mount --bind /usr "$r/usr"
  mount -o remount,bind,ro "$r/usr"
  # Hide the host's aarch64 libraries: the board has only its own runtime (rootfs/lib).
  local d
  for d in usr/aarch64-linux-gnu usr/lib/aarch64-linux-gnu usr/local; do
    [ -d "$r/$d" ] && mount -t tmpfs -o ro,mode=755 tmpfs "$r/$d"
  done
  mount -t proc proc "$r/proc"
  mount -t sysfs sysfs "$r/sys" 2>/dev/null || mount --rbind /sys "$r/sys"
  mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
  mount -t tmpfs -o mode=755 tmpfs "$r/run"
  mkdir -m 755 "$r/run/sshd"
  # A minimal /dev: the usual character devices and a private devpts (ssh -t).
  mount -t tmpfs -o mode=755 tmpfs "$r/dev"
  for d in null zero full random urandom tty; do
    touch "$r/dev/$d"; mount --bind "/dev/$d" "$r/dev/$d"
  done
  mkdir -p "$r/dev/pts" "$r/dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$r/dev/pts"
  ln -s pts/ptmx "$r/dev/ptmx"
  ln -s /proc/self/fd "$r/dev/fd"
  mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm"
  hostname "${BOARD_HOSTNAME:-board}"
  echo "${BOARD_HOSTNAME:-board}" >"$r/etc/hostname"
  exec chroot "$r" /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config
}

if [ "$cmd" = start ] || [ "$cmd" = stop ]; then
  [ "$(id -u)" -eq 0 ] || die "$cmd needs root (network namespace, mounts, chroot, binfmt_misc)"
fi
case "$cmd" in
  setup) do_setup ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  __inner) do_inner ;;
esac
