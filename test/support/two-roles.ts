import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { withDatabase } from '../../tooling/databases.js';

/** The two roles of docs/operations.md ("Roles and grants") on a database of their own. */
export interface TwoRoles {
  owner: string;
  app: string;
  /** A role with CONNECT and nothing else: what the app role is before `--grant-to`. */
  bare: string;
  /** The database as the cluster's superuser, as `role` (the password is the same for every role). */
  url(role?: string): string;
}

const PASSWORD = 'two-roles-test';

/** An owner that owns the new database and an app role that may only log in (CONNECT only by grant, as `--grant-to` gives it). */
export async function createTwoRoles(adminDatabaseUrl: string, prefix: string): Promise<TwoRoles> {
  const suffix = randomBytes(4).toString('hex');
  const owner = `${prefix}_owner_${suffix}`;
  const app = `${prefix}_app_${suffix}`;
  const bare = `${prefix}_bare_${suffix}`;
  const database = `${prefix}_${suffix}`;
  const cluster = new pg.Client({ connectionString: adminDatabaseUrl });
  await cluster.connect();
  try {
    for (const role of [owner, app, bare]) await cluster.query(`CREATE ROLE ${role} LOGIN PASSWORD '${PASSWORD}'`);
    await cluster.query(`CREATE DATABASE ${database} OWNER ${owner}`);
    await cluster.query(`REVOKE ALL ON DATABASE ${database} FROM PUBLIC`);
    await cluster.query(`GRANT CONNECT ON DATABASE ${database} TO ${bare}`);
  } finally {
    await cluster.end();
  }
  return {
    owner,
    app,
    bare,
    url: (role) => {
      const url = new URL(withDatabase(adminDatabaseUrl, database));
      if (role) {
        url.username = role;
        url.password = PASSWORD;
      }
      return url.toString();
    },
  };
}
