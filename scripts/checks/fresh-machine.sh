#!/usr/bin/env bash
# The README's `npm install && npm test` on a machine with nothing of the project's on it. CI's own
# machine has accumulated tools (PgBouncer among them), so it cannot see a newcomer's path: here a
# clean clone runs both commands, as root, in a bare Debian bookworm root file system (debootstrap
# minbase through scripts/image-base.sh and its cache) to which only git (Debian's) and Node.js 24
# with npm (the npm registry's `node` and `npm` packages) are added. Whatever else the suite needs
# (PostgreSQL, PgBouncer) it must bring itself. .ci/run's npm test on Node.js 24 is this run.
# Needs root (debootstrap, chroot, mounts). Prints the time of each step.
set -euo pipefail
cd "$(dirname "$0")/../.."
node_major=24
npm_major=11 # the npm that Node.js 24 ships with

work=$(mktemp -d /var/tmp/community-layer-fresh.XXXXXX)
root="$work/root"
cleanup() {
  # Anything the run left running in the chroot (a server of a failed test) holds its mounts.
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && kill -KILL "${proc#/proc/}" 2>/dev/null
  done
  for mount in dev/shm dev sys proc; do
    mountpoint -q "$root/$mount" 2>/dev/null && { umount "$root/$mount" || umount -l "$root/$mount"; }
  done
  # Only once nothing of the host is mounted inside any more.
  if findmnt -rno TARGET | grep -q "^$root/"; then
    echo "fresh-machine: $work still has mounts; left in place" >&2
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
step() { echo "fresh-machine: $1 in $(($(date +%s) - $2)) s"; }

started=$(date +%s)
bash scripts/image-base.sh "$work/base.tar" git
mkdir "$root"
tar --numeric-owner -xpf "$work/base.tar" -C "$root"
step "bare Debian bookworm (minbase) with git" "$started"

# Node.js: the official binary in the registry's `node` package; npm: the registry's `npm` package.
node_bin=$(npm exec --yes --package="node@$node_major" -- node -p 'process.execPath')
cp "$(readlink -f "$node_bin")" "$root/usr/local/bin/node"
npm pack --silent --pack-destination "$work" "npm@$npm_major" >/dev/null
mkdir -p "$root/usr/local/lib/node_modules"
tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules"
mv "$root/usr/local/lib/node_modules/package" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

# The checkout's HEAD as a bundle, cloned inside into root's home (which only root can enter).
git bundle create --quiet "$root/tmp/checkout.bundle" HEAD
# The machine's network, as any machine here has it: its names (/etc/hosts, which an installed Debian
# has and debootstrap leaves to the installer: localhost, the host name), name resolution, and the CA
# Node.js is told to trust (NODE_EXTRA_CA_CERTS, e.g. a TLS-inspecting proxy's) to reach the registry.
cp /etc/hosts /etc/resolv.conf "$root/etc/"
network=()
if [ -f "${NODE_EXTRA_CA_CERTS:-}" ]; then
  mkdir -p "$root/etc/ssl"
  cp "$NODE_EXTRA_CA_CERTS" "$root/etc/ssl/node-extra-ca.crt"
  network=(NODE_EXTRA_CA_CERTS=/etc/ssl/node-extra-ca.crt)
fi
mount -t proc proc "$root/proc"
mount -t sysfs -o ro sysfs "$root/sys"
mount --bind /dev "$root/dev"
# PostgreSQL's shared memory: a /dev/shm of the chroot's own.
mount -t tmpfs -o mode=1777,size=1g tmpfs "$root/dev/shm"

inside() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb "${network[@]}" \
    PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin bash -euo pipefail -c "$1"
}
inside 'git -c advice.detachedHead=false clone --quiet /tmp/checkout.bundle /root/community-layer && git -C /root/community-layer log --oneline -1'
echo "fresh-machine: Node.js $(inside 'node --version'), npm $(inside 'npm --version')"
started=$(date +%s)
inside 'cd /root/community-layer && npm install --no-audit --no-fund'
step "npm install" "$started"
started=$(date +%s)
inside 'cd /root/community-layer && npm test'
step "npm test" "$started"
