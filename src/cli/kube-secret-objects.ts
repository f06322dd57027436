import { randomBytes } from 'node:crypto';
import { generateReceiptJwk } from '../auth/receipt-signer.js';

/** What `kube-secrets` needs: the direct URLs (with their roles and passwords) and where the pooler is. */
export interface KubeSecretInput {
  /** The app role's session connection straight to the primary: the listener. */
  listenUrl: string;
  /**
   * The owner's, to the same database: the migrate Job connects with it and grants the app role
   * (docs/operations.md, "Roles and grants"). Omitted: the Job migrates as the app role, which then
   * owns everything (one role, not least privilege).
   */
  ownerUrl?: string;
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

function databaseUrl(text: string, option: string): URL {
  const url = new URL(text);
  if (!/^postgres(ql)?:$/.test(url.protocol) || !url.username || !url.password) {
    throw new Error(`${option} must be postgres://ROLE:PASSWORD@HOST:PORT/DATABASE`);
  }
  return url;
}

/**
 * The three Secrets of deploy/kubernetes/community-layer.yaml, with fresh keys: the service's (its
 * database URLs, an HS256 token secret, the receipt signing key), PgBouncer's userlist, whose
 * role and password are the direct URL's (PgBouncer does SCRAM with a plain-text password), and
 * the migrate Job's (the owner's URL and the app role to grant; no token key: migrate needs none).
 */
export async function kubeSecrets({ listenUrl, ownerUrl, pooler }: KubeSecretInput): Promise<[KubeSecret, KubeSecret, KubeSecret]> {
  const direct = databaseUrl(listenUrl, '--listen-url');
  const owner = ownerUrl === undefined ? direct : databaseUrl(ownerUrl, '--owner-url');
  if (owner.host !== direct.host || owner.pathname !== direct.pathname) {
    throw new Error('--owner-url and --listen-url must name the same host, port and database');
  }
  if (ownerUrl !== undefined && owner.username === direct.username) {
    throw new Error(
      '--owner-url names the role of --listen-url: the service must not run as the owner (leave --owner-url out for one role)',
    );
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
    secret('community-layer-migrate', {
      DATABASE_URL: owner.href,
      DATABASE_LISTEN_URL: owner.href,
      ...(ownerUrl === undefined ? {} : { DATABASE_APP_ROLE: role }),
    }),
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
