import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { EXPORT_TYPE, type ReceiptSigner } from '../auth/receipt-signer.js';
import { type Consent, toConsent } from '../membership/consent.js';
import { exportHead, type LeaveEpisodeRow, leaveEpisodesAfter } from '../membership/membership-export.store.js';
import { acknowledgementChangesAfter } from '../purge/acknowledgement.store.js';
import type { PurgeReceipt } from '../purge/purge-jobs.js';
import { purgesAfter } from '../purge/purge.store.js';
import type { PinnedSession } from '../db/pinned-session.js';
import { cohortContributionLinesCopy, communityContributionLinesCopy, signalLinesCopy } from '../signals/signal-export.store.js';
import { formatRfc3339 } from '../time/rfc3339.js';
import { copyLines } from './copy-lines.js';
import { pages } from './keyset-pages.js';
import { acknowledgementRecord, type ExportRecord, leaveRecords, purgeRecord, RECORD_TYPES, type RecordType } from './export-records.js';

/** Where an export's lines go: the transport (src/server/export-route.ts). */
export interface ExportSink {
  /** The snapshot is open: the response may start (before this, a failure can still be answered). */
  begin(): void;
  /** Pays for `records` of the caller's budget; resolves once paid. */
  pay(records: number): Promise<void>;
  /** Queues a chunk of lines for the client (bytes: a chunk from COPY may end mid-line). */
  write(chunk: string | Uint8Array): void;
  /** Resolves once the client has taken what is queued, down to the transport's buffer (backpressure). */
  drained(): Promise<void>;
}

/** The signed receipts an export carries: the tokens the API answers for the same leave or purge. */
export interface ExportReceipts {
  leave(userId: string, leftAtNs: string, consent: Consent | null): Promise<string | null>;
  purge(purge: PurgeReceipt): Promise<string | null>;
}

/** What the closing seal says (signed as a JWS with the receipts' key, `typ` community-export+jwt). */
export interface ExportSeal {
  userId: string;
  includedUpToNs: string;
  includedUpTo: string;
  counts: Record<RecordType, number>;
  /** Hex SHA-256 of every byte before the seal line. */
  sha256: string;
}

export const EXPORT_PAGE_SIZE = 1_000;

/**
 * A user's data to take away, as NDJSON lines in a fixed order, from one REPEATABLE READ READ ONLY
 * snapshot on one pooled session (one transaction: safe behind a transaction pooler). The few
 * records per user (leaves, purges, receipts) come in keyset pages read one at a time; signals and
 * contributions, the many, as lines PostgreSQL builds and streams with `COPY … TO STDOUT`, each
 * chunk written and drained by the client before the next is read: memory stays a page or a chunk
 * whatever the user holds. Each table is read through its owner store. The last line is the seal.
 */
export class UserExports {
  constructor(
    /** A session per export: its transaction holds both the Kysely reads and the COPYs. */
    private readonly sessions: () => Promise<PinnedSession>,
    /** `statement_timeout` within the export: a COPY runs as long as the download takes. */
    private readonly statementTimeoutMs: number,
    private readonly signer: ReceiptSigner,
    private readonly receipts: ExportReceipts,
    private readonly pageSize = EXPORT_PAGE_SIZE,
  ) {}

  async export(userId: string, sink: ExportSink): Promise<ExportSeal> {
    const limit = this.pageSize;
    const session = await this.sessions();
    return session.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        await sql`SELECT set_config('statement_timeout', ${String(this.statementTimeoutMs)}, true)`.execute(trx);
        const head = await exportHead(trx, userId);
        sink.begin();
        const hash = createHash('sha256');
        const counts = Object.fromEntries(RECORD_TYPES.map((type) => [type, 0])) as Record<RecordType, number>;
        // Each COPY chunk is paid for (the lines it completes), hashed, queued and drained before
        // the next is read (docs/api.md "One snapshot, bounded memory").
        const copy = (type: RecordType, statement: string) =>
          copyLines(session.client, statement, this.statementTimeoutMs, async (chunk, lines) => {
            if (lines > 0) await sink.pay(lines);
            counts[type] += lines;
            hash.update(chunk);
            sink.write(chunk);
            await sink.drained();
          });
        const emit = async (records: ExportRecord[]) => {
          if (records.length === 0) return;
          await sink.pay(records.length);
          let lines = '';
          for (const record of records) {
            lines += `${JSON.stringify(record)}\n`;
            counts[record.type]++;
          }
          hash.update(lines);
          sink.write(lines);
          await sink.drained();
        };
        await emit([
          { type: 'status', userId, status: head.status ?? 'ACTIVE', leftAtNs: head.left_at_ns, rejoinedAtNs: head.rejoined_at_ns },
        ]);
        const episodes = (use: (rows: LeaveEpisodeRow[]) => Promise<void>) =>
          pages(
            '-1',
            (after) => leaveEpisodesAfter(trx, userId, after, limit),
            (row) => row.left_at_ns,
            limit,
            use,
          );
        const purges = (use: (rows: PurgeReceipt[]) => Promise<void>) =>
          pages(
            '0',
            (after) => purgesAfter(trx, userId, after, limit),
            (purge) => purge.purgeId,
            limit,
            use,
          );
        await episodes((rows) => emit(rows.flatMap(leaveRecords)));
        await copy('signal', signalLinesCopy(userId));
        await copy('contribution', communityContributionLinesCopy(userId));
        await copy('contribution', cohortContributionLinesCopy(userId));
        await purges((rows) => emit(rows.map(purgeRecord)));
        await episodes(async (rows) => {
          const tokens = await Promise.all(
            rows.map((row) =>
              this.receipts.leave(userId, row.left_at_ns, toConsent(row.left_reason, row.left_reason_text, row.left_policy_version)),
            ),
          );
          await emit(rows.map((row, i) => ({ type: 'receipt', receipt: 'leave', leftAtNs: row.left_at_ns, token: tokens[i] })));
        });
        await purges(async (rows) => {
          const tokens = await Promise.all(rows.map((purge) => this.receipts.purge(purge)));
          await emit(rows.map((purge, i) => ({ type: 'receipt', receipt: 'purge', purgeId: purge.purgeId, token: tokens[i] })));
        });
        await pages(
          '0',
          (after) => acknowledgementChangesAfter(trx, userId, after, limit),
          (row) => row.id,
          limit,
          (rows) => emit(rows.map(acknowledgementRecord)),
        );
        const seal: ExportSeal = {
          userId,
          includedUpToNs: head.now_ns,
          includedUpTo: formatRfc3339(BigInt(head.now_ns)),
          counts,
          sha256: hash.digest('hex'),
        };
        const jws = await this.signer.signAs(EXPORT_TYPE, `export:${userId}:${head.now_ns}`, userId, { ...seal });
        sink.write(`${JSON.stringify({ type: 'seal', ...seal, jws })}\n`);
        await sink.drained();
        return seal;
      });
  }
}
