#!/usr/bin/env bash
# `npm run image:pgbouncer`: builds the PgBouncer image deploy/kubernetes runs (deploy/image/pgbouncer.Containerfile)
# with buildah, from Debian's pgbouncer package (no container registry). Needs root (debootstrap, buildah).
#   PGBOUNCER_IMAGE_TAG  default localhost/pgbouncer:latest
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${PGBOUNCER_IMAGE_TAG:-localhost/pgbouncer:latest}
started=$(date +%s)

if ! command -v buildah >/dev/null || ! command -v podman >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah podman >/dev/null
fi
context=$(mktemp -d /var/tmp/community-layer-pgbouncer-image.XXXXXX)
trap 'rm -rf "$context"' EXIT

bash scripts/image-base.sh "$context/base.tar" ca-certificates,pgbouncer
buildah bud --quiet --format docker --layers=false -f deploy/image/pgbouncer.Containerfile -t "$tag" "$context" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$tag")
version=$(podman run --rm --runtime runc --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096 "$tag" --version 2>/dev/null | head -n1 || true)
echo "image: built $tag (${version:-PgBouncer}) in $(($(date +%s) - started)) s, $((size / 1000000)) MB"
