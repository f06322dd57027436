import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { kubeSecrets } from '../../src/cli/kube-secret-objects.js';

/**
 * `node --import tsx scripts/checks/kube-local.ts --env-file F --out DIR --ports SERVER,METRICS,DELIVERY,DELIVERY_METRICS,PGBOUNCER`:
 * deploy/kubernetes/community-layer.yaml made runnable by podman 4.3's `kube play` on one host, against
 * the check's PostgreSQL on loopback (F: DATABASE_URL, the app role's, and OWNER_DATABASE_URL, as
 * `scripts/database.ts --two-roles` writes them). Only what a
 * single host or podman 4.3 needs is changed; everything else (images, pull policy, commands, probes,
 * security contexts, settings) is played as written:
 * - hostNetwork, one replica each, and each Deployment's ports moved to free ones (no cluster network,
 *   no Service, no DNS: PgBouncer and PostgreSQL are reached on 127.0.0.1); no declared container ports
 *   (podman refuses them on the host's network) and probes by port number; ConfigMap variables inlined
 *   under each container's env (podman 4.3 gives envFrom precedence over env, Kubernetes the reverse);
 * - the Job becomes a Pod with the Job's own template (`kube play` 4.3 runs Pods, Deployments,
 *   ConfigMaps and PVCs only), written to its own file so it runs, and must succeed, first;
 * - the Secrets come from kube-secrets (as docs/operations.md says) and are written as podman secrets
 *   (`podman secret create NAME FILE` for each NAME.secret.json, a JSON map of base64 values: what kube play 4.3 reads for
 *   `secretRef`); PgBouncer's userlist is mounted from a ConfigMap, since kube play 4.3 panics on a
 *   `secret` volume (nil pointer in VolumeFromSecret).
 */
const { values } = parseArgs({ options: { 'env-file': { type: 'string' }, out: { type: 'string' }, ports: { type: 'string' } } });
if (!values['env-file'] || !values.out || !values.ports) throw new Error('usage: kube-local.ts --env-file F --out DIR --ports A,B,C,D,E');
const numbers = values.ports.split(',').map(Number);
if (numbers.length !== 5 || numbers.some((port) => !Number.isInteger(port) || port <= 0)) throw new Error('--ports: five port numbers');
const [server, serverMetrics, delivery, deliveryMetrics, pgbouncer] = numbers as [number, number, number, number, number];
const environment = Object.fromEntries(
  (await readFile(values['env-file'], 'utf8'))
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);
if (!environment.DATABASE_URL || !environment.OWNER_DATABASE_URL)
  throw new Error(`${values['env-file']}: no DATABASE_URL or OWNER_DATABASE_URL`);
const postgres = new URL(environment.DATABASE_URL);

const manifest = path.join(import.meta.dirname, '../../deploy/kubernetes/community-layer.yaml');
const objects = parseAllDocuments(await readFile(manifest, 'utf8')).map((document) => document.toJS());
const configMaps = new Map<string, Record<string, string>>(
  objects.filter((object) => object.kind === 'ConfigMap').map((object) => [object.metadata.name, object.data]),
);
const ports: Partial<Record<string, [http: number, metrics: number]>> = {
  'community-layer': [server, serverMetrics],
  'community-layer-delivery': [delivery, deliveryMetrics],
};

function onHost(spec: any, name: string) {
  spec.hostNetwork = true;
  for (const container of spec.containers) {
    const [http, metrics] = ports[name] ?? [];
    // podman 4.3 lets envFrom win over env (Kubernetes does the reverse): the ConfigMap is inlined
    // under the container's own env, so WEBHOOK_DELIVERY=on of the delivery Deployment holds.
    const inlined = (container.envFrom ?? []).filter((source: any) => source.configMapRef);
    const variables = new Map<string, string>();
    for (const source of inlined)
      for (const [key, value] of Object.entries(configMaps.get(source.configMapRef.name) ?? {})) variables.set(key, String(value));
    for (const { name: key, value } of container.env ?? []) variables.set(key, value);
    if (http !== undefined) {
      variables.set('PORT', String(http));
      variables.set('METRICS_PORT', String(metrics));
    }
    if (inlined.length > 0 || http !== undefined) {
      container.env = [...variables].map(([key, value]) => ({ name: key, value }));
      container.envFrom = container.envFrom.filter((source: any) => !source.configMapRef);
    }
    // On the host's network a declared port is a mapping to podman, which it refuses; probes name ports.
    const named: Record<string, number | undefined> = { http, metrics, pgbouncer };
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'].map((key) => container[key]).filter(Boolean)) {
      const action = probe.httpGet ?? probe.tcpSocket;
      if (typeof action?.port === 'string') action.port = named[action.port];
    }
    delete container.ports;
  }
  for (const volume of spec.volumes ?? []) {
    if (volume.secret) volume.configMap = { name: `${volume.secret.secretName}-secret` };
    delete volume.secret;
  }
}

const [appSecret, pgbouncerSecret, migrateSecret] = await kubeSecrets({
  listenUrl: postgres.href,
  ownerUrl: environment.OWNER_DATABASE_URL,
  pooler: `127.0.0.1:${pgbouncer}`,
});
const first: unknown[] = [];
const rest: unknown[] = [];
for (const object of objects) {
  if (object.kind === 'ConfigMap') {
    if (object.metadata.name === 'community-layer-pgbouncer') {
      object.data['pgbouncer.ini'] = object.data['pgbouncer.ini']
        .replace(/host=\S+ port=\d+/, `host=${postgres.hostname} port=${postgres.port}`)
        .replace(/listen_addr = \S+/, 'listen_addr = 127.0.0.1')
        .replace(/listen_port = \d+/, `listen_port = ${pgbouncer}`);
    }
    first.push(object);
    rest.push(object);
  } else if (object.kind === 'Job') {
    const { metadata, spec } = object.spec.template;
    onHost(spec, object.metadata.name);
    first.push({ apiVersion: 'v1', kind: 'Pod', metadata: { ...metadata, name: object.metadata.name }, spec });
  } else if (object.kind === 'Deployment') {
    object.spec.replicas = 1;
    onHost(object.spec.template.spec, object.metadata.name);
    rest.push(object);
  }
}
rest.push({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `${pgbouncerSecret.metadata.name}-secret` },
  data: pgbouncerSecret.stringData,
});

await mkdir(values.out, { recursive: true });
// JSON, which is YAML too, with every string quoted (podman's YAML 1.1 parser would read `off` as false).
const yaml = (documents: unknown[]) => documents.map((document) => JSON.stringify(document, null, 2)).join('\n---\n');
await writeFile(path.join(values.out, 'migrate.yaml'), yaml(first));
await writeFile(path.join(values.out, 'services.yaml'), yaml(rest));
for (const secret of [appSecret, migrateSecret]) {
  const podmanSecret = Object.fromEntries(
    Object.entries(secret.stringData).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  );
  await writeFile(path.join(values.out, `${secret.metadata.name}.secret.json`), JSON.stringify(podmanSecret), { mode: 0o600 });
}
