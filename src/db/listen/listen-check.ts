import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DatabaseEndpoint } from '../endpoint/database-endpoint.js';
import type { Database } from '../schema.js';

export class ListenSessionError extends Error {
  override name = 'ListenSessionError';
}

export interface ListenCheckOptions {
  endpoint: DatabaseEndpoint;
  applicationName: string;
  timeoutMs: number;
  /** Another session (the request pool) to send the notification from. */
  db: Kysely<Database>;
}

/**
 * Refuses a listen URL that cannot hold a LISTEN: LISTEN on a fresh channel, NOTIFY it from the
 * pool, and wait for it. Behind a transaction pooler the LISTEN lands on a server session the
 * pooler hands to other clients, so the notification never reaches this one; a standby refuses
 * LISTEN outright. Both mean the cache would never hear of a leave.
 */
export async function checkListenSession(options: ListenCheckOptions): Promise<void> {
  const channel = `community_layer_probe_${randomBytes(6).toString('hex')}`;
  const payload = randomBytes(8).toString('hex');
  const client = options.endpoint.client({
    connectionTimeoutMillis: options.timeoutMs,
    application_name: options.applicationName,
  });
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    await client.connect();
    const heard = new Promise<boolean>((resolve) => {
      client.on('notification', (message) => message.channel === channel && message.payload === payload && resolve(true));
      timer = setTimeout(() => resolve(false), options.timeoutMs);
    });
    await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    await options.db.selectNoFrom((eb) => eb.fn('pg_notify', [eb.val(channel), eb.val(payload)]).as('sent')).execute();
    if (!(await heard)) {
      throw new ListenSessionError(
        `DATABASE_LISTEN_URL did not deliver a notification to the session that listened within ${options.timeoutMs} ms: ` +
          'it must be a session connection to the primary (direct, or a session-mode pooler), not a transaction pooler ' +
          'such as PgBouncer in transaction mode. Point DATABASE_LISTEN_URL at the primary.',
      );
    }
  } finally {
    clearTimeout(timer);
    await client.end().catch(() => undefined);
  }
}
