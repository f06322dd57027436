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

export interface Database {
  community_membership: CommunityMembershipTable;
  leave_episode: LeaveEpisodeTable;
  membership_clock: MembershipClockTable;
  signal: SignalTable;
  cohort_contribution: CohortContributionTable;
  contribution: ContributionView;
  community_item_aggregate: CommunityItemAggregateTable;
  cohort_item_aggregate: CohortItemAggregateTable;
}

export type MembershipRow = Selectable<CommunityMembershipTable>;
