import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { readDurability, type Durability } from './durability.js';
import type { Database } from './schema.js';

export class NotDurableError extends Error {
  override name = 'NotDurableError';
}

/**
 * What the service tells of its primary's durability: read at start and again whenever the
 * primary may have changed (another host chosen, the listener back after a loss). A warning when
 * acknowledged commits can be lost on failover, a metric, and a readiness detail.
 */
export class DurabilityMonitor {
  private report: Durability | null = null;
  private checking: Promise<Durability> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly required: boolean,
    registry: Registry,
  ) {
    const monitor = this;
    new Gauge({
      name: 'community_database_durable_commits',
      help: '1 when every acknowledged commit is on a synchronous standby (survives failover); 0 when it can be lost, or not known yet.',
      registers: [registry],
      collect() {
        this.set(monitor.report?.durable ? 1 : 0);
      },
    });
    // What an alert on the gauge above needs to know: whether this deployment asked for durability.
    new Gauge({
      name: 'community_database_durable_commits_required',
      help: '1 when DATABASE_REQUIRE_SYNCHRONOUS_COMMIT=true (acknowledged commits must survive failover), 0 otherwise.',
      registers: [registry],
    }).set(required ? 1 : 0);
  }

  get current(): Durability | null {
    return this.report;
  }

  /** Ready unless durability is required and the primary cannot promise it. */
  get acceptable(): boolean {
    return !this.required || this.report?.durable === true;
  }

  /** At start: reads it, and refuses when it is required and missing. */
  async start(): Promise<void> {
    const report = await this.check();
    if (!report.durable && this.required) {
      throw new NotDurableError(
        `DATABASE_REQUIRE_SYNCHRONOUS_COMMIT=true, but the primary can lose acknowledged commits on failover: ${report.reason}`,
      );
    }
  }

  /** The primary may have changed: read it again (in the background; a failure keeps the last report). */
  recheck(): void {
    void this.check().catch((error: unknown) => this.logger.debug({ err: error }, 'durability check failed; kept the last report'));
  }

  private check(): Promise<Durability> {
    this.checking ??= readDurability(this.db)
      .then((report) => {
        const changed = this.report?.durable !== report.durable || this.report.reason !== report.reason;
        this.report = report;
        // A WARN only where a failover can happen (a standby streams) or durability is required;
        // a single node (development, a managed database's own HA) hears it once at info.
        const level = this.required || report.standbys > 0 ? 'warn' : 'info';
        if (changed && !report.durable)
          this.logger[level]({ durability: report }, `acknowledged commits can be lost on failover: ${report.reason}`);
        else if (changed) this.logger.info({ durability: report }, 'acknowledged commits survive failover');
        return report;
      })
      .finally(() => (this.checking = null));
    return this.checking;
  }
}
