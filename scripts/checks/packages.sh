#!/usr/bin/env bash
# The packages as a team gets them: both packed with `npm pack`, installed into a fresh project
# outside the repository, and their README examples (the first ```js block) run as plain ESM on
# Node.js 20 (this machine's), 22 and 24 against a real server (`npm start` on a real PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/checks/common.sh
repo=$(pwd)
project=$(mktemp -d "${TMPDIR:-/tmp}/community-layer-packages.XXXXXX")
env_file="$project.database.env"
server=
trap '[ -n "$server" ] && kill -TERM "$(descendant_running "$server" dist/src/main.js)" 2>/dev/null; stop_database; rm -rf "$project" "$project.log"' EXIT
# Readable by others: a non-root user (or a container) can use the project too.
chmod 755 "$project"

# prepack builds each package's dist/; the tarball holds only what `files` names.
npm pack --workspace packages/sender --workspace packages/settings-client --pack-destination "$project" --silent >/dev/null
for tarball in "$project"/*.tgz; do
  if tar -tzf "$tarball" | grep -qv -e '^package/dist/.*\.\(js\|d\.ts\)$' -e '^package/\(package\.json\|README\.md\|CHANGELOG\.md\|LICENSE\)$'; then
    echo "check: $(basename "$tarball") holds more than dist/, README, CHANGELOG, LICENSE:" >&2
    tar -tzf "$tarball" >&2
    exit 1
  fi
done
cd "$project"
echo '{ "name": "team-project", "private": true }' >package.json
npm install --no-audit --no-fund --loglevel=error ./*.tgz
for readme in sender settings-client; do
  awk '/^```js$/ { inside = 1; next } /^```$/ && inside { exit } inside' "node_modules/@community-layer/$readme/README.md" >"$readme.mjs"
  [ -s "$readme.mjs" ] || { echo "check: no js example in the $readme README" >&2; exit 1; }
done
cd "$repo"

start_database "$env_file"
set -a
. "$env_file"
NODE_ENV=production AUTH_JWT_SECRET=$CHECK_SECRET LOG_LEVEL=warn METRICS_PORT=0
set +a
npm run -s migrate
port=$(free_port)
MIGRATE_ON_START=false PORT=$port npm start >"$project.log" 2>&1 &
server=$!
wait_ready "$port" 120 "kill -0 $server 2>/dev/null" || { cat "$project.log" >&2; exit 1; }
export COMMUNITY_URL="http://127.0.0.1:$port/graphql"
export COMMUNITY_SERVICE_TOKEN
COMMUNITY_SERVICE_TOKEN=$(npm run -s token -- --service packages-check --scope signals:write)

run_examples() {
  local node_bin=$1 user=$2 output
  export COMMUNITY_USER_TOKEN
  COMMUNITY_USER_TOKEN=$(npm run -s token -- --sub "$user")
  output=$(cd "$project" && "$node_bin" sender.mjs 2>&1) || { echo "$output" >&2; exit 1; }
  grep -qx 'forwarded forwarded invalid' <<<"$output" || { echo "check: sender example on $("$node_bin" --version): $output" >&2; exit 1; }
  output=$(cd "$project" && "$node_bin" settings-client.mjs 2>&1) || { echo "$output" >&2; exit 1; }
  grep -qx 'LEFT, leaves: 1' <<<"$output" || { echo "check: settings-client example on $("$node_bin" --version): $output" >&2; exit 1; }
  echo "check: both README examples ran from the tarballs on Node.js $("$node_bin" --version)"
}

run_examples "$(command -v node)" 900020
for major in 22 24; do
  node_dir=$(npm exec --yes --package="node@$major" -- node -p 'require("node:path").dirname(process.execPath)')
  run_examples "$node_dir/node" "9000$major"
done
