import type { ColumnType } from 'kysely';

/** int8 and numeric arrive as strings (exact), never numbers; written as strings or bigints. */
export type Int8 = ColumnType<string, string | bigint, string | bigint>;

/** The database enum `membership_event_kind`: the outbox's kinds, which webhook endpoints subscribe to. */
export type MembershipEventKind = 'LEFT' | 'REJOINED' | 'PURGE_REQUESTED' | 'PURGE_FINISHED';
