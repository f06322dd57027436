import { readFile } from 'node:fs/promises';
import { ConfigMap, Pod, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { kubeSecrets } from '../src/cli/kube-secret-objects.js';
import { loadConfig } from '../src/config/config.js';
import { declaredSettings } from '../src/config/declared.js';
import { configuration } from '../src/config/schema.js';
import { strictViolations } from './support/strict-kubernetes.js';

type KubeObject = { apiVersion: string; kind: string; metadata: { name: string } } & Record<string, any>;
const MODELS: Record<string, any> = { ConfigMap, Secret, Service, Pod, Deployment, Job, PodDisruptionBudget };
const MANIFEST = new URL('../deploy/kubernetes/community-layer.yaml', import.meta.url);

function parse(text: string): KubeObject[] {
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length) throw document.errors[0];
    return document.toJS();
  });
}

const manifest = async () => parse(await readFile(MANIFEST, 'utf8'));
const secrets = () =>
  kubeSecrets({
    listenUrl: 'postgres://community_layer:s3cret-password@postgres-primary:5432/community_layer',
    ownerUrl: 'postgres://community_layer_owner:0wner-password@postgres-primary:5432/community_layer',
    pooler: 'community-layer-pgbouncer:6432',
  });

/** The kubernetes-models validators (types, formats, required fields); they accept unknown fields. */
function modelErrors(objects: KubeObject[]): string[] {
  return objects.flatMap((object) => {
    try {
      new MODELS[object.kind](object).validate();
      return [];
    } catch (error) {
      return [`${object.kind} ${object.metadata.name}: ${(error as Error).message}`];
    }
  });
}

const podsOf = (objects: KubeObject[]) =>
  objects
    .filter((object) => object.kind === 'Deployment' || object.kind === 'Job')
    .map((object) => ({
      name: `${object.kind} ${object.metadata.name}`,
      spec: object.spec.template.spec,
      metadata: object.spec.template.metadata,
    }));

describe('deploy/kubernetes/community-layer.yaml', () => {
  it('is valid against the Kubernetes schemas, strictly (no unknown field), with the Secrets kube-secrets generates', async () => {
    const objects = [...(await manifest()), ...(await secrets())] as KubeObject[];
    expect(objects.map((object) => object.kind).sort()).toEqual([
      'ConfigMap',
      'ConfigMap',
      'Deployment',
      'Deployment',
      'Deployment',
      'Job',
      'PodDisruptionBudget',
      'PodDisruptionBudget',
      'Secret',
      'Secret',
      'Secret',
      'Service',
      'Service',
    ]);
    expect(modelErrors(objects)).toEqual([]);
    expect(strictViolations(objects)).toEqual([]);
  });

  it('fails strict validation with a planted typo, which the kubernetes-models validators alone let through', async () => {
    const text = await readFile(MANIFEST, 'utf8');
    const typo = parse(text.replace('readinessProbe:', 'readinesProbe:'));
    expect(modelErrors(typo)).toEqual([]);
    expect(strictViolations(typo)).toEqual([
      expect.stringMatching(/^Deployment community-layer: .*'"readinesProbe"' does not exist in type 'IContainer'/),
    ]);
    const nested = parse(text.replace('seccompProfile: { type: RuntimeDefault }', 'seccompProfile: { typ: RuntimeDefault }'));
    expect(strictViolations(nested)).toEqual([expect.stringMatching(/^Job community-layer-migrate: .*'"typ"' does not exist/)]);
  });

  it('migrates as the owner, granting the role the Deployments run as; one role without --owner-url; refuses the owner as app role', async () => {
    const objects = await manifest();
    const [service, , migrate] = await secrets();
    const envFrom = (kind: string, name: string) =>
      objects.find((object) => object.kind === kind && object.metadata.name === name)!.spec.template.spec.containers[0].envFrom;
    const job = envFrom('Job', 'community-layer-migrate');
    expect(job).toEqual([{ configMapRef: { name: 'community-layer' } }, { secretRef: { name: migrate.metadata.name } }]);
    expect(envFrom('Deployment', 'community-layer')).toContainEqual({ secretRef: { name: service.metadata.name } });
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === 'community-layer')!.data;
    // The Job's settings load as migrate reads them (no token key there), and name the owner and the app role.
    const jobConfig = loadConfig({ ...configMap, ...migrate.stringData }, { tokens: false }).database;
    expect(new URL(jobConfig.listenUrl!).username).toBe('community_layer_owner');
    expect(jobConfig.appRole).toBe('community_layer');
    expect(new URL(loadConfig({ ...configMap, ...service.stringData }).database.listenUrl!).username).toBe(jobConfig.appRole);
    expect(() => loadConfig({ ...configMap, ...migrate.stringData })).toThrow(/AUTH_/);

    const listenUrl = 'postgres://community_layer:s3cret-password@postgres-primary:5432/community_layer';
    const [, , oneRole] = await kubeSecrets({ listenUrl, pooler: 'community-layer-pgbouncer:6432' });
    expect(oneRole.stringData).toEqual({ DATABASE_URL: listenUrl, DATABASE_LISTEN_URL: listenUrl });
    await expect(kubeSecrets({ listenUrl, ownerUrl: listenUrl, pooler: 'p:6432' })).rejects.toThrow(/must not run as the owner/);
    const elsewhere = 'postgres://o:p@elsewhere:5432/community_layer';
    await expect(kubeSecrets({ listenUrl, ownerUrl: elsewhere, pooler: 'p:6432' })).rejects.toThrow(/same host, port and database/);
  });

  it('holds no Secret and no placeholder: the Secrets are generated', async () => {
    const text = await readFile(MANIFEST, 'utf8');
    expect(parse(text).filter((object) => object.kind === 'Secret')).toEqual([]);
    expect(text).not.toMatch(/CHANGE-ME|password@/i);
  });

  it('runs every pod non-root, seccomp RuntimeDefault, read-only, no service-account token, local images never pulled', async () => {
    const pods = podsOf(await manifest());
    expect(pods.map((pod) => pod.name).sort()).toEqual([
      'Deployment community-layer',
      'Deployment community-layer-delivery',
      'Deployment community-layer-pgbouncer',
      'Job community-layer-migrate',
    ]);
    for (const { name, spec } of pods) {
      expect(spec.automountServiceAccountToken, name).toBe(false);
      expect(spec.securityContext, name).toMatchObject({
        runAsNonRoot: true,
        runAsUser: expect.any(Number),
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(spec.securityContext.runAsUser, name).not.toBe(0);
      expect(spec.initContainers, name).toBeUndefined();
      for (const container of spec.containers) {
        expect(container.securityContext, name).toEqual({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        if (container.image.startsWith('localhost/'))
          expect(['Never', 'IfNotPresent'], `${name} ${container.image}`).toContain(container.imagePullPolicy);
        expect(container.resources.requests, name).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      }
    }
  });

  it('migrates in a Job, serves behind a disruption budget and a topology spread, delivers webhooks in a Deployment of its own, is scraped on a declared metrics port', async () => {
    const objects = await manifest();
    const byName = (kind: string, name: string) => objects.find((object) => object.kind === kind && object.metadata.name === name)!;
    const job = byName('Job', 'community-layer-migrate').spec.template.spec;
    expect(job.containers[0].command).toEqual(['node', 'dist/src/cli/migrate.js']);
    expect(job.restartPolicy).toBe('Never');

    const serving = byName('Deployment', 'community-layer');
    const pod = serving.spec.template;
    const [app] = pod.spec.containers;
    expect(app.command).toEqual(['node', 'dist/src/main.js']);
    expect(app.readinessProbe.httpGet.path).toBe('/readyz');
    expect(app.livenessProbe.httpGet.path).toBe('/healthz');
    expect(serving.spec.replicas).toBeGreaterThan(1);
    expect(pod.spec.topologySpreadConstraints.map((spread: any) => spread.labelSelector.matchLabels)).toEqual([
      pod.metadata.labels,
      pod.metadata.labels,
    ]);
    const budget = byName('PodDisruptionBudget', 'community-layer').spec;
    expect(budget.selector.matchLabels).toEqual(serving.spec.selector.matchLabels);
    expect(budget.maxUnavailable).toBeLessThan(serving.spec.replicas);
    expect(byName('Service', 'community-layer').spec.selector).toEqual(serving.spec.selector.matchLabels);

    const [secret] = await secrets();
    const settings = { ...byName('ConfigMap', 'community-layer').data, ...secret.stringData };
    const declared = new Set(declaredSettings(configuration).map((setting) => setting.env));
    expect(Object.keys(settings).filter((name) => !declared.has(name))).toEqual([]);
    const config = loadConfig(settings);
    expect(config.database.migrateOnStart).toBe(false);
    expect(config.downstream.receiptSigningKey).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String) });
    expect(config.webhooks.delivery).toBe('off');
    // Prometheus: a declared port, the annotations naming it, a listener that is not loopback.
    expect(config.metrics.host).not.toMatch(/^(127\.|localhost$|::1$)/);
    expect(app.ports).toContainEqual({ name: 'metrics', containerPort: config.metrics.port });
    expect(pod.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(config.metrics.port),
      'prometheus.io/path': '/metrics',
    });

    // The delivery-only instances: same image and settings, delivery on, behind no Service.
    const delivery = byName('Deployment', 'community-layer-delivery').spec.template;
    expect(delivery.spec.containers[0].env).toEqual([{ name: 'WEBHOOK_DELIVERY', value: 'on' }]);
    expect(loadConfig({ ...settings, WEBHOOK_DELIVERY: 'on' }).webhooks.delivery).toBe('on');
    expect(delivery.metadata.labels).not.toEqual(serving.spec.selector.matchLabels);
    expect(delivery.metadata.annotations).toEqual(pod.metadata.annotations);

    // Requests through PgBouncer's Service, LISTEN and migrations straight to PostgreSQL.
    const pgbouncer = byName('Service', 'community-layer-pgbouncer').spec.ports[0].port;
    expect(new URL(config.database.url!).host).toBe(`community-layer-pgbouncer:${pgbouncer}`);
    expect(new URL(config.database.listenUrl!).host).toBe('postgres-primary:5432');
    expect(byName('ConfigMap', 'community-layer-pgbouncer').data['pgbouncer.ini']).toMatch(/pool_mode = transaction/);
  });
});
