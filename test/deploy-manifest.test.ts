import { readFile } from 'node:fs/promises';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { declaredSettings } from '../src/config/declared.js';
import { configuration } from '../src/config/schema.js';

const MODELS = { ConfigMap, Secret, Service, Deployment } as const;
type Kind = keyof typeof MODELS;

async function manifest(): Promise<Array<{ kind: Kind; metadata: { name: string } } & Record<string, any>>> {
  const text = await readFile(new URL('../deploy/kubernetes/community-layer.yaml', import.meta.url), 'utf8');
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length) throw document.errors[0];
    return document.toJS();
  });
}

describe('deploy/kubernetes/community-layer.yaml', () => {
  it('is valid against the Kubernetes schemas', async () => {
    const objects = await manifest();
    expect(objects.map((object) => object.kind).sort()).toEqual(['ConfigMap', 'ConfigMap', 'Deployment', 'Deployment', 'Secret', 'Secret', 'Service', 'Service']);
    for (const object of objects) {
      const Model = MODELS[object.kind];
      expect(Model, object.kind).toBeDefined();
      // Throws with the JSON-schema path of the first violation.
      new (Model as any)(object).validate();
    }
  });

  it('runs the compiled service with probes and a migration init container, its settings declared and valid in production', async () => {
    const objects = await manifest();
    const byName = (kind: Kind, name: string) => objects.find((object) => object.kind === kind && object.metadata.name === name)!;
    const pod = byName('Deployment', 'community-layer').spec.template.spec;
    const [app] = pod.containers;
    expect(app.command).toEqual(['node', 'dist/src/main.js']);
    expect(app.readinessProbe.httpGet.path).toBe('/readyz');
    expect(app.livenessProbe.httpGet.path).toBe('/healthz');
    expect(app.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(app.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(pod.initContainers[0].command).toEqual(['node', 'dist/src/cli/migrate.js']);

    const settings = { ...byName('ConfigMap', 'community-layer').data, ...byName('Secret', 'community-layer').stringData };
    const declared = new Set(declaredSettings(configuration).map((setting) => setting.env));
    expect(Object.keys(settings).filter((name) => !declared.has(name))).toEqual([]);
    const config = loadConfig(settings);
    expect(config.database.migrateOnStart).toBe(false);
    // Requests through PgBouncer's Service, LISTEN and migrations straight to PostgreSQL.
    const pgbouncer = byName('Service', 'community-layer-pgbouncer').spec.ports[0].port;
    expect(new URL(config.database.url!).host).toBe(`community-layer-pgbouncer:${pgbouncer}`);
    expect(new URL(config.database.listenUrl!).host).not.toContain('pgbouncer');
    expect(byName('ConfigMap', 'community-layer-pgbouncer').data['pgbouncer.ini']).toMatch(/pool_mode = transaction/);
  });
});
