import type { Logger } from 'pino';
import type { ReceiptSigner } from '../auth/receipt-signer.js';
import type { AppConfig } from '../config/config.js';
import type { DurabilityMonitor } from '../db/durability-monitor.js';
import type { InstanceDatabase } from '../db/instance-database.js';
import { ensureSchema } from '../db/migrations/schema-version.js';
import { refuseMissingPrivileges } from '../db/roles/check.js';
import { checkSessionLimits } from '../db/session-limits.js';
import type { Part } from '../util/lifecycle.js';
import { warnOnConnectionSlots } from './session-plan.js';

export interface StartUpChecksOptions {
  config: AppConfig;
  connections: InstanceDatabase;
  receipts: ReceiptSigner;
  durability: DurabilityMonitor;
  logger: Logger;
  instanceId: string;
}

/**
 * The part that checks what a start depends on before anything listens: the receipt key, the session
 * limits, durable commits, the role's privileges, the schema (migrated when MIGRATE_ON_START); and
 * warns when the server's free connection slots are fewer than this instance's peak.
 */
export function startUpChecks({ config, connections, receipts, durability, logger, instanceId }: StartUpChecksOptions): Part {
  return {
    name: 'start-up checks',
    async start() {
      await receipts.ready();
      await checkSessionLimits(connections.database.db, config.database);
      await durability.start();
      await refuseMissingPrivileges(connections.database.db);
      const applied = await ensureSchema(connections.database.db, {
        migrateOnStart: config.database.migrateOnStart,
        migrate: () => connections.migrate(),
        logger,
      });
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
      await warnOnConnectionSlots(config, connections, instanceId, logger);
    },
  };
}
