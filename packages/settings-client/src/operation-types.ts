// Written by `npm run operation-types` from schema.graphql and trusted-documents.json (`npm run operation-types:check` verifies it): edit operations.graphql, not this one.

/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** Why a leave or rejoin happened (docs/api.md, "Reasons"). */
export type ConsentReason =
  /** An administrator acted for the user, e.g. on a ticket. The default for a community:admin caller acting on another user. */
  | 'ADMIN'
  /** A consent management platform relayed the user’s choice. */
  | 'CONSENT_PLATFORM'
  /** The user’s browser sent Global Privacy Control (`Sec-GPC: 1`). */
  | 'GLOBAL_PRIVACY_CONTROL'
  /** The user asked, e.g. on a settings page. The default for a user acting with their own token. */
  | 'USER_REQUEST';

/** ACTIVE: signals also feed shared aggregates. LEFT: they are kept for the user only. */
export type MembershipStatus =
  /** Part of the community layer: signals also reach shared aggregates. */
  | 'ACTIVE'
  /** Left the community layer: signals personalize for the user only. */
  | 'LEFT';

/** RUNNING: entries are being removed, chunk by chunk. FINISHED: everything below the boundary is gone. */
export type PurgeStatus =
  /** Every ledger entry of the user below the boundary has been removed. */
  | 'FINISHED'
  /** Entries are being removed, chunk by chunk; `removedSoFar` grows. */
  | 'RUNNING';

export type SettingsLatestPurgeQueryVariables = Exact<{ [key: string]: never; }>;


export type SettingsLatestPurgeQuery = { communityPurges: Array<{ purgeId: string, status: PurgeStatus, boundaryNs: string, finishedAt: string | null, removedSoFar: number, weightRemoved: number, foundNothing: boolean, targets: Array<{ target: string, entries: number, weight: number }>, downstream: { total: number, done: number, failed: number } }> };

export type SettingsPurgeReceiptFragment = { purgeId: string, status: PurgeStatus, boundaryNs: string, finishedAt: string | null, removedSoFar: number, weightRemoved: number, foundNothing: boolean, targets: Array<{ target: string, entries: number, weight: number }>, downstream: { total: number, done: number, failed: number } };

export type SettingsLeaveMutationVariables = Exact<{ [key: string]: never; }>;


export type SettingsLeaveMutation = { leaveCommunityLayer: { userId: string, status: MembershipStatus, leftAtNs: string | null, leftAt: string | null, leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> } };

export type SettingsMembershipFragment = { userId: string, status: MembershipStatus, leftAtNs: string | null, leftAt: string | null, leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> };

export type SettingsLeaveEpisodeFragment = { leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string };

export type SettingsLeaveWithReasonMutationVariables = Exact<{
  reason?: ConsentReason | null | undefined;
  reasonText?: string | null | undefined;
  policyVersion?: string | null | undefined;
}>;


export type SettingsLeaveWithReasonMutation = { leaveCommunityLayer: { userId: string, status: MembershipStatus, leftAtNs: string | null, leftAt: string | null, leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> } };

export type SettingsOlderLeavesQueryVariables = Exact<{
  before: string;
}>;


export type SettingsOlderLeavesQuery = { communityLayerStatus: { leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> } };

export type SettingsPurgeMutationVariables = Exact<{ [key: string]: never; }>;


export type SettingsPurgeMutation = { purgeCommunityContributions: { purgeId: string, status: PurgeStatus, boundaryNs: string, finishedAt: string | null, removedSoFar: number, weightRemoved: number, foundNothing: boolean, targets: Array<{ target: string, entries: number, weight: number }>, downstream: { total: number, done: number, failed: number } } };

export type SettingsPurgeProgressSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type SettingsPurgeProgressSubscription = { communityPurgeProgress: { purgeId: string, status: PurgeStatus, boundaryNs: string, finishedAt: string | null, removedSoFar: number, weightRemoved: number, foundNothing: boolean, targets: Array<{ target: string, entries: number, weight: number }>, downstream: { total: number, done: number, failed: number } } };

export type SettingsRejoinMutationVariables = Exact<{ [key: string]: never; }>;


export type SettingsRejoinMutation = { rejoinCommunityLayer: { userId: string, status: MembershipStatus, leftAtNs: string | null, leftAt: string | null, leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> } };

export type SettingsRejoinWithReasonMutationVariables = Exact<{
  reason?: ConsentReason | null | undefined;
  reasonText?: string | null | undefined;
  policyVersion?: string | null | undefined;
}>;


export type SettingsRejoinWithReasonMutation = { rejoinCommunityLayer: { userId: string, status: MembershipStatus, leftAtNs: string | null, leftAt: string | null, leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> } };

export type SettingsStatusQueryVariables = Exact<{ [key: string]: never; }>;


export type SettingsStatusQuery = { communityLayerStatus: { userId: string, status: MembershipStatus, leftAtNs: string | null, leftAt: string | null, leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> } };

export type SettingsWatchSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type SettingsWatchSubscription = { communityLayerStatusChanged: { userId: string, status: MembershipStatus, leftAtNs: string | null, leftAt: string | null, leaveCount: number, history: Array<{ leftAtNs: string, rejoinedAtNs: string | null, gatedSignalTotal: string }> } };
