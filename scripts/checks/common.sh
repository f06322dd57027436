# Helpers shared by the production checks (sourced, not run). Each check starts its own database.

# A real PostgreSQL for the check (scripts/database.ts), its URLs in $1 once it is up; its pid in $database_pid.
start_database() {
  local env_file=$1
  shift
  rm -f "$env_file"
  # One process (no npx or tsx wrapper in between), so SIGTERM reaches it.
  node --import tsx scripts/database.ts --write-env "$env_file" "$@" &
  database_pid=$!
  for _ in $(seq 240); do
    [ -s "$env_file" ] && return 0
    kill -0 "$database_pid" 2>/dev/null || { echo "check: the database did not start" >&2; return 1; }
    sleep 0.5
  done
  echo "check: the database did not start within 120 s" >&2
  return 1
}

stop_database() {
  if [ -n "${database_pid:-}" ] && kill -0 "$database_pid" 2>/dev/null; then
    kill -TERM "$database_pid"
    wait "$database_pid" || true
  fi
}

free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

# Waits until http://127.0.0.1:$1/readyz answers 200 (at most $2 seconds), while process/container $3 lives.
wait_ready() {
  local port=$1 seconds=$2 alive=$3
  for _ in $(seq $((seconds * 2))); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null && return 0
    eval "$alive" || { echo "check: the service exited before it was ready" >&2; return 1; }
    sleep 0.5
  done
  echo "check: /readyz not 200 within $seconds s" >&2
  return 1
}

# One signal for user 42 with the service token $2 at port $1: it must be forwarded.
send_signal() {
  local port=$1 token=$2 answer
  answer=$(curl -fsS "http://127.0.0.1:$port/graphql" -H 'content-type: application/json' -H "authorization: Bearer $token" \
    --data '{"query":"mutation ($input: SignalInput!) { signal(input: $input) { forwarded } }","variables":{"input":{"userId":"42","itemId":"check","kind":"LIKE"}}}')
  # The answer also carries extensions.cost (fair share): only data and errors are judged.
  if ! node -e 'const a = JSON.parse(process.argv[1]); process.exit(!a.errors && a.data?.signal?.forwarded === true ? 0 : 1)' "$answer"; then
    echo "check: unexpected GraphQL answer: $answer" >&2
    return 1
  fi
  echo "check: GraphQL signal forwarded"
}

CHECK_SECRET=$(head -c 32 /dev/urandom | base64 | tr -d '=+/\n')

# The pid of the node process running `$2` among the descendants of $1 (npm runs scripts through a shell).
descendant_running() {
  local parent=$1 pattern=$2 child
  for child in $(ps -o pid= --ppid "$parent"); do
    if [ "$(cat "/proc/$child/comm" 2>/dev/null)" = node ] && grep -qF -- "$pattern" "/proc/$child/cmdline" 2>/dev/null; then echo "$child"; return 0; fi
    descendant_running "$child" "$pattern" && return 0
  done
  return 1
}
