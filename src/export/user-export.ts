import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { EXPORT_TYPE, type ReceiptSigner } from '../auth/receipt-signer.js';
import type { Database } from '../db/schema.js';
import type { PurgeReceipt } from '../purge/purge-jobs.js';
import { purgesAfter } from '../purge/purge.store.js';
import { formatRfc3339 } from '../time/rfc3339.js';
import * as store from './export.store.js';
import {
  acknowledgementRecord,
  contributionRecord,
  type ExportRecord,
  purgeRecord,
  RECORD_TYPES,
  type RecordType,
  signalRecord,
} from './export-records.js';

/** Where an export's lines go: the transport (src/server/export-route.ts). */
export interface ExportSink {
  /** The snapshot is open: the response may start (before this, a failure can still be answered). */
  begin(): void;
  /** Pays for `records` of the caller's budget; resolves once paid. */
  pay(records: number): Promise<void>;
  /** Takes a chunk of lines; resolves when the client can take more (backpressure). */
  write(chunk: string): Promise<void>;
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
 * snapshot on one pooled session (one transaction: safe behind a transaction pooler), in keyset
 * pages of EXPORT_PAGE_SIZE, the next page read while the current one is written: memory stays
 * one or two pages whatever the user holds. The last line is the signed seal.
 */
export class UserExports {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly signer: ReceiptSigner,
    private readonly signPurgeReceipt: (purge: PurgeReceipt) => Promise<string | null>,
    private readonly pageSize = EXPORT_PAGE_SIZE,
  ) {}

  export(userId: string, sink: ExportSink): Promise<ExportSeal> {
    const limit = this.pageSize;
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const head = await store.snapshotHead(trx, userId);
        sink.begin();
        const hash = createHash('sha256');
        const counts = Object.fromEntries(RECORD_TYPES.map((type) => [type, 0])) as Record<RecordType, number>;
        const emit = async (records: ExportRecord[]) => {
          if (records.length === 0) return;
          await sink.pay(records.length);
          let chunk = '';
          for (const record of records) {
            chunk += `${JSON.stringify(record)}\n`;
            counts[record.type]++;
          }
          hash.update(chunk);
          await sink.write(chunk);
        };
        await emit([
          { type: 'status', userId, status: head.status ?? 'ACTIVE', leftAtNs: head.left_at_ns, rejoinedAtNs: head.rejoined_at_ns },
        ]);
        await pages(
          '-1',
          (after) => store.leaveEpisodes(trx, userId, after, limit),
          (row) => row.left_at_ns,
          limit,
          (rows) =>
            emit(
              rows.flatMap((row): ExportRecord[] => [
                {
                  type: 'leave',
                  leftAtNs: row.left_at_ns,
                  consent: consent(row.left_reason, row.left_reason_text, row.left_policy_version),
                },
                ...(row.rejoined_at_ns === null
                  ? []
                  : [
                      {
                        type: 'rejoin' as const,
                        leftAtNs: row.left_at_ns,
                        rejoinedAtNs: row.rejoined_at_ns,
                        consent: consent(row.rejoined_reason, row.rejoined_reason_text, row.rejoined_policy_version),
                      },
                    ]),
              ]),
            ),
        );
        const start: readonly [string, string] = ['-1', '-1'];
        const byTime = (at: string, id: string) => [at, id] as const;
        await pages(
          start,
          (after) => store.signals(trx, userId, after, limit),
          (row) => byTime(row.at_ns, row.id),
          limit,
          (rows) => emit(rows.map(signalRecord)),
        );
        // Community entries a range of `limit` signals at a time (see communityContributions).
        for (let after = start; ; ) {
          const upTo = await store.signalKeyAhead(trx, userId, after, limit);
          await emit((await store.communityContributions(trx, userId, after, upTo)).map(contributionRecord));
          if (!upTo) break;
          after = upTo;
        }
        const cohorts = (after: readonly [string, string, string]) => store.cohortContributions(trx, userId, after, limit);
        const cohortKey = (row: store.ContributionRow) => [row.at_ns, row.signal_id, row.cohort_id ?? ''] as const;
        await pages<store.ContributionRow, readonly [string, string, string]>(['-1', '-1', ''], cohorts, cohortKey, limit, (rows) =>
          emit(rows.map(contributionRecord)),
        );
        await pages(
          '0',
          (after) => purgesAfter(trx, userId, after, limit),
          (purge) => purge.purgeId,
          limit,
          (purges) => emit(purges.map(purgeRecord)),
        );
        await pages(
          '0',
          (after) => purgesAfter(trx, userId, after, limit),
          (purge) => purge.purgeId,
          limit,
          async (purges) => {
            const tokens = await Promise.all(purges.map((purge) => this.signPurgeReceipt(purge)));
            await emit(purges.map((purge, i) => ({ type: 'receipt', receipt: 'purge', purgeId: purge.purgeId, token: tokens[i] })));
          },
        );
        await pages(
          '0',
          (after) => store.acknowledgements(trx, userId, after, limit),
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
        await sink.write(`${JSON.stringify({ type: 'seal', ...seal, jws })}\n`);
        return seal;
      });
  }
}

/** Keyset pages from `start`, each next page asked for before the current one is used. */
async function pages<Row, Key>(
  start: Key,
  fetch: (after: Key) => Promise<Row[]>,
  keyOf: (row: Row) => Key,
  limit: number,
  use: (rows: Row[]) => Promise<void>,
): Promise<void> {
  let pending = fetch(start);
  for (;;) {
    const rows = await pending;
    const full = rows.length === limit;
    if (full) {
      pending = fetch(keyOf(rows.at(-1)!));
      // Awaited on the next turn; a failure meanwhile ends the export through `use` or that await.
      pending.catch(() => undefined);
    }
    await use(rows);
    if (!full) return;
  }
}

/** Why a leave or rejoin happened (docs/api.md, "Reasons"); null where nothing was recorded. */
function consent(reason: string | null, reasonText: string | null, policyVersion: string | null) {
  return reason === null ? null : { reason, reasonText, policyVersion };
}
