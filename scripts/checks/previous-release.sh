#!/usr/bin/env bash
# The previous release's build on the current schema (docs/operations.md, "Rollouts and rollbacks"):
# the commit named in .ci/previous-release is built in a temporary tree (git archive, npm ci, npm run
# build), a fresh PostgreSQL is migrated by THIS checkout's migrate, and the previous build is started
# on it with MIGRATE_ON_START=false, as an old pod rescheduled during a rollout (or a rollback) is.
# What it must do follows from the migrations it does not know:
# - none, or all `expand` and it reads the compatibility records: it serves (/readyz, then a leave);
# - otherwise it must refuse to start, naming both versions. A release from before the records
#   (src/db/migrations/compatibility.ts; 3447053 is one) refuses any newer schema, expand or not:
#   it cannot know what a newer migration promises, so refusing is its correct behaviour.
# Update .ci/previous-release to each release's commit when it is tagged (an argument overrides it).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/checks/common.sh
started=$SECONDS
previous=${1:-$(tr -d "[:space:]" <.ci/previous-release)}
tree=$(mktemp -d /var/tmp/community-layer-previous.XXXXXX)
env_file="$tree.database.env"
log="$tree.log"
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; stop_database; rm -rf "$tree" "$env_file" "$log"' EXIT

git archive "$previous" | tar -x -C "$tree"
(cd "$tree" && npm ci --no-audit --no-fund --loglevel=error && npm run -s build >/dev/null 2>&1)
echo "check: previous release $previous built in $((SECONDS - started)) s"

migrations_of() { (cd "$1/src/db/migrations" && ls [0-9]*.ts | sed 's/\.ts$//' | sort); }
unknown=$(comm -23 <(migrations_of .) <(migrations_of "$tree") | paste -sd ' ')
current_latest=$(migrations_of . | tail -1)
previous_latest=$(migrations_of "$tree" | tail -1)
contracts=$(node --import tsx --input-type=module -e '
  const { migrations } = await import("./src/db/migrations/index.ts");
  console.log(process.argv.slice(1).filter((name) => migrations[name].compatibility === "contract").join(" "));' $unknown)
if [ -z "$unknown" ] || { [ -e "$tree/src/db/migrations/compatibility.ts" ] && [ -z "$contracts" ]; }; then
  expected=serves
else
  expected=refuses
fi
echo "check: the schema has ${unknown:-no migrations} the previous release does not know${contracts:+ (contract: $contracts)}: it must say it $expected"

start_database "$env_file"
set -a
. "$env_file"
NODE_ENV=production AUTH_JWT_SECRET=$CHECK_SECRET LOG_LEVEL=info METRICS_PORT=0 MIGRATE_ON_START=false
set +a
node scripts/cli.mjs migrate
port=$(free_port)
(cd "$tree" && PORT=$port exec node dist/src/main.js) >"$log" 2>&1 &
server=$!

if [ "$expected" = refuses ]; then
  status=0
  wait "$server" || status=$?
  server=
  grep -q "the database schema is newer than this build: it is at $current_latest.*it knows up to $previous_latest" "$log" && [ "$status" -ne 0 ] || {
    echo "check: the previous release did not refuse the newer schema naming both versions (exit $status):" >&2
    cat "$log" >&2
    exit 1
  }
  echo "check: the previous release refuses the current schema ($current_latest), naming its own ($previous_latest)"
else
  wait_ready "$port" 60 "kill -0 $server 2>/dev/null" || { cat "$log" >&2; exit 1; }
  user_token=$(node scripts/cli.mjs token --sub 4242)
  answer=$(curl -fsS "http://127.0.0.1:$port/graphql" -H 'content-type: application/json' -H "authorization: Bearer $user_token" \
    --data '{"query":"mutation { leaveCommunityLayer { userId status } }"}')
  node -e 'const a = JSON.parse(process.argv[1]); process.exit(!a.errors && a.data?.leaveCommunityLayer?.status === "LEFT" ? 0 : 1)' "$answer" || {
    echo "check: unexpected answer to a leave: $answer" >&2
    exit 1
  }
  echo "check: the previous release serves on the current schema ($current_latest): ready, and a leave answered LEFT"
fi
echo "check: previous release done in $((SECONDS - started)) s"
