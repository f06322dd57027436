import type { ColumnType, Generated, Selectable } from 'kysely';
import type { SignalKind } from '../signals/signal-kind.js';

/** The tables as Kysely sees them. int8 and numeric arrive as strings (exact), never numbers. */
export type MembershipStatus = 'ACTIVE' | 'LEFT';

type Int8 = ColumnType<string, string | bigint, string | bigint>;

export interface CommunityMembershipTable {
  user_id: string;
  status: MembershipStatus;
  left_at_ns: Int8 | null;
  rejoined_at_ns: Int8 | null;
  version: ColumnType<string, never, never>;
  updated_at: ColumnType<Date, never, never>;
}

export interface LeaveEpisodeTable {
  user_id: string;
  left_at_ns: Int8;
  rejoined_at_ns: Int8 | null;
}

export interface MembershipClockTable {
  singleton: boolean;
  version: Int8;
}

export interface SignalTable {
  id: Generated<string>;
  user_id: string;
  item_id: string;
  kind: SignalKind;
  weight_micros: Int8;
  occurred_at: Date | null;
  surface: string | null;
  cohort_ids: string[];
  at_ns: Int8;
  forwarded: boolean;
  /** The purge that removed this community entry from the ledger; the signal itself stays. */
  purge_id: ColumnType<string | null, never, never>;
}

export interface CohortContributionTable {
  signal_id: Int8;
  cohort_id: string;
  user_id: string;
  item_id: string;
  weight_micros: Int8;
  at_ns: Int8;
}

/** A view: forwarded signals (cohort_id NULL) and cohort contributions. */
export interface ContributionView {
  user_id: ColumnType<string, never, never>;
  signal_id: ColumnType<string, never, never>;
  cohort_id: ColumnType<string | null, never, never>;
  item_id: ColumnType<string, never, never>;
  weight_micros: ColumnType<string, never, never>;
  at_ns: ColumnType<string, never, never>;
}

export interface CommunityItemAggregateTable {
  item_id: string;
  shard: number;
  signal_count: Int8;
  weight_micros_sum: string;
}

export interface CohortItemAggregateTable extends CommunityItemAggregateTable {
  cohort_id: string;
}

export type PurgeStatus = 'RUNNING' | 'FINISHED';

/** Written only by request_community_purge and run_community_purge_chunk (src/db/sql/). */
export interface CommunityPurgeTable {
  id: ColumnType<string, never, never>;
  user_id: ColumnType<string, never, never>;
  boundary_ns: ColumnType<string, never, never>;
  from_ns: ColumnType<string, never, never>;
  requested_at: ColumnType<Date, never, never>;
  finished_at: ColumnType<Date | null, never, never>;
  status: ColumnType<PurgeStatus, never, never>;
  removed_so_far: ColumnType<string, never, never>;
  weight_micros_removed: ColumnType<string, never, never>;
  chunks: ColumnType<number, never, never>;
  cursor_at_ns: ColumnType<string, never, never>;
  cursor_signal_id: ColumnType<string, never, never>;
}

export interface CommunityPurgeTargetTable {
  purge_id: ColumnType<string, never, never>;
  /** '' for the community aggregate. */
  cohort_id: ColumnType<string, never, never>;
  entries: ColumnType<string, never, never>;
  weight_micros: ColumnType<string, never, never>;
}

export interface Database {
  community_membership: CommunityMembershipTable;
  leave_episode: LeaveEpisodeTable;
  membership_clock: MembershipClockTable;
  signal: SignalTable;
  cohort_contribution: CohortContributionTable;
  contribution: ContributionView;
  community_item_aggregate: CommunityItemAggregateTable;
  cohort_item_aggregate: CohortItemAggregateTable;
  community_purge: CommunityPurgeTable;
  community_purge_target: CommunityPurgeTargetTable;
}

export type MembershipRow = Selectable<CommunityMembershipTable>;
