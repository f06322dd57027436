#!/usr/bin/env bash
# Runs deploy/kubernetes/community-layer.yaml for real with `podman kube play`, against a PostgreSQL of
# its own on loopback, with the images `npm run image` and `npm run image:pgbouncer` built: the
# migrate Job runs to exit 0 as the database's owner and grants the app role, the instances run as that
# role (not the owner, no superuser), PgBouncer (Debian's, from its image) pools the requests, the serving
# instance and the delivery-only instance turn ready, a GraphQL signal goes through PgBouncer, Prometheus
# text answers on the metrics port at a non-loopback address, and stopping the pod drains the service
# to exit 0. What podman 4.3 on one host needs changed is changed by scripts/checks/kube-local.ts (its
# header says what and why); the rest is played as written. Podman here: runc and explicit ulimits
# (scripts/checks/image.sh says why), given through a containers.conf of the check's own.
# Not exercised here, because kube play has no such thing: Services, PodDisruptionBudgets, topology
# spread, probes other than liveness, replicas beyond one (test/deploy-manifest.test.ts checks them).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/checks/common.sh
tag=${IMAGE_TAG:-localhost/community-layer:latest}
work=$(mktemp -d /var/tmp/community-layer-kube.XXXXXX)
env_file="$work/database.env"
started=$(date +%s)
cleanup() {
  for file in services migrate; do [ -f "$work/$file.yaml" ] && podman kube down "$work/$file.yaml" >/dev/null 2>&1 || true; done
  podman secret rm community-layer community-layer-migrate >/dev/null 2>&1 || true
  stop_database
  rm -rf "$work"
}
trap cleanup EXIT

if ! command -v runc >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runc >/dev/null
fi
for image in "$tag" localhost/pgbouncer:latest; do
  podman image exists "$image" || { echo "check: $image is missing: run npm run image and npm run image:pgbouncer first" >&2; exit 1; }
done
nofile=$(ulimit -Hn)
cat >"$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$work/containers.conf"

start_database "$env_file" --role-limits --two-roles
ports=$(for _ in 1 2 3 4 5; do free_port; done | paste -sd,)
IFS=, read -r port metrics_port delivery_port _ _ <<<"$ports"
node --import tsx scripts/checks/kube-local.ts --env-file "$env_file" --out "$work" --ports "$ports"
for secret in community-layer community-layer-migrate; do
  podman secret rm "$secret" >/dev/null 2>&1 || true
  podman secret create "$secret" "$work/$secret.secret.json" >/dev/null
done

# The Job first: migrated, exit 0 (the instances refuse a schema behind theirs).
# kube play turns a livenessProbe into a healthcheck, whose systemd timer is absent here (logged, harmless).
play() { podman kube play "$1" >/dev/null 2> >(grep -v healthcheck >&2); }
play "$work/migrate.yaml"
code=$(podman wait community-layer-migrate-migrate)
if [ "$code" != 0 ]; then podman logs community-layer-migrate-migrate >&2; echo "check: the migrate Job exited $code" >&2; exit 1; fi
migrated=$(podman logs community-layer-migrate-migrate 2>&1)
grep -q '"msg":"migrat' <<<"$migrated" && grep -q '"role":"community_layer_app".*"msg":"privileges granted"' <<<"$migrated" || { echo "$migrated" >&2; exit 1; }
echo "check: the migrate Job migrated as the owner and granted community_layer_app (exit 0)"

play "$work/services.yaml"
server=community-layer-pod-0-community-layer
alive() { echo "[ \"\$(podman inspect --format '{{.State.Running}}' $1)\" = true ]"; }
wait_ready "$port" 90 "$(alive "$server")" || { podman logs "$server" >&2; podman logs community-layer-pgbouncer-pod-0-pgbouncer >&2 || true; exit 1; }
wait_ready "$delivery_port" 90 "$(alive community-layer-delivery-pod-0-community-layer)" || { podman logs community-layer-delivery-pod-0-community-layer >&2; exit 1; }
echo "check: the serving and the delivery-only instances are ready"
podman exec community-layer-delivery-pod-0-community-layer node -e 'process.exit(process.env.WEBHOOK_DELIVERY === "on" ? 0 : 1)'
podman exec "$server" node -e 'process.exit(process.env.WEBHOOK_DELIVERY === "off" ? 0 : 1)'
podman exec "$server" node -e 'process.exit(new URL(process.env.DATABASE_LISTEN_URL).username === "community_layer_app" ? 0 : 1)'
# Every container as the manifest says: not root, a read-only root file system.
for container in "$server" community-layer-delivery-pod-0-community-layer community-layer-pgbouncer-pod-0-pgbouncer; do
  users=$(podman top "$container" user | tail -n +2 | sort -u | paste -sd,)
  readonly=$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$container")
  if [ "$users" = root ] || [ -z "$users" ] || [ "$readonly" != true ]; then echo "check: $container runs as '$users', read-only root: $readonly" >&2; exit 1; fi
done
echo "check: every container runs as a non-root user on a read-only root"
send_signal "$port" "$(podman exec "$server" node dist/src/cli/token.js --service kube-check --scope signals:write)"
# Prometheus scrapes from another host: the metrics listener must answer on a non-loopback address.
address=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep -v ':' | head -n1 || true)
grep -q '^# HELP community_' <<<"$(curl -fsS "http://${address:-127.0.0.1}:$metrics_port/metrics")" || { echo "check: no metrics at ${address:-127.0.0.1}:$metrics_port" >&2; exit 1; }
grep -q 'login attempt: db=community_layer' <<<"$(podman logs community-layer-pgbouncer-pod-0-pgbouncer 2>&1)" || { echo "check: nothing went through PgBouncer" >&2; exit 1; }
echo "check: /metrics answers at ${address:-127.0.0.1}:$metrics_port (METRICS_HOST from the manifest)"

podman pod stop --time 40 community-layer-pod-0 >/dev/null 2> >(grep -v healthcheck >&2)
code=$(podman inspect --format '{{.State.ExitCode}}' "$server")
grep -q '"msg":"stopped"' <<<"$(podman logs "$server" 2>&1)" || { podman logs "$server" >&2; exit 1; }
if [ "$code" != 0 ]; then echo "check: the serving instance exited $code after SIGTERM" >&2; exit 1; fi
echo "check: the manifest ran with podman kube play: migrated, served through PgBouncer, drained on SIGTERM (exit 0), in $(($(date +%s) - started)) s"
