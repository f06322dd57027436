import { randomBytes } from 'node:crypto';
import { generateReceiptJwk } from '../auth/receipt-signer.js';

/** What `kube-secrets` needs: the direct URL (with its role and password) and where the pooler is. */
export interface KubeSecretInput {
  /** A session connection straight to the primary: the listener and the migrations. */
  listenUrl: string;
  /** `host:port` of PgBouncer, which `DATABASE_URL` goes through. */
  pooler: string;
}

export interface KubeSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; labels: Record<string, string> };
  type: 'Opaque';
  stringData: Record<string, string>;
}

function secret(name: string, stringData: Record<string, string>): KubeSecret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { 'app.kubernetes.io/name': name } }, type: 'Opaque', stringData };
}

/**
 * The two Secrets of deploy/kubernetes/community-layer.yaml, with fresh keys: the service's (its
 * database URLs, an HS256 token secret, the receipt signing key) and PgBouncer's userlist, whose
 * role and password are the direct URL's (PgBouncer does SCRAM with a plain-text password).
 */
export async function kubeSecrets({ listenUrl, pooler }: KubeSecretInput): Promise<[KubeSecret, KubeSecret]> {
  const direct = new URL(listenUrl);
  if (!/^postgres(ql)?:$/.test(direct.protocol) || !direct.username || !direct.password) {
    throw new Error('--listen-url must be postgres://ROLE:PASSWORD@HOST:PORT/DATABASE');
  }
  const pooled = new URL(listenUrl);
  pooled.host = pooler;
  const role = decodeURIComponent(direct.username);
  const password = decodeURIComponent(direct.password);
  if (/["\s]/.test(role) || password.includes('"'))
    throw new Error('the role and password must not contain quotes or spaces (PgBouncer userlist)');
  return [
    secret('community-layer', {
      DATABASE_URL: pooled.href,
      DATABASE_LISTEN_URL: direct.href,
      AUTH_JWT_SECRET: randomBytes(32).toString('base64url'),
      RECEIPT_SIGNING_KEY: JSON.stringify(await generateReceiptJwk()),
    }),
    secret('community-layer-pgbouncer', { 'userlist.txt': `"${role}" "${password}"\n` }),
  ];
}

/** YAML documents; every value a JSON string, which YAML reads as a double-quoted scalar. */
export function secretsYaml(secrets: readonly KubeSecret[]): string {
  return secrets
    .map(({ metadata, stringData }) =>
      [
        'apiVersion: v1',
        'kind: Secret',
        'metadata:',
        `  name: ${metadata.name}`,
        `  labels: { app.kubernetes.io/name: ${metadata.name} }`,
        'type: Opaque',
        'stringData:',
        ...Object.entries(stringData).map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`),
      ].join('\n'),
    )
    .join('\n---\n')
    .concat('\n');
}
