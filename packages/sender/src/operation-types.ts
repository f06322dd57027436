// Written by `npm run operation-types` from schema.graphql and trusted-documents.json (`npm run operation-types:check` verifies it): edit operations.graphql, not this one.

/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** Where a signal happened: the cohorts it counts for, and the surface. */
export type SignalContext = {
  /** Cohorts to attribute to (deduplicated; at most 32). Each: 1–128 characters in Unicode NFC, without lone surrogates, control or format characters or line/paragraph separators (refused, never changed). */
  cohortIds?: Array<string | number> | null | undefined;
  /** Where the engagement happened (for the personal record only). */
  surface?: string | null | undefined;
};

/** One engagement of one user with one item. */
export type SignalInput = {
  /** Cohorts and surface; none: the community aggregate only. */
  context?: SignalContext | null | undefined;
  /** Idempotency key, unique per user: 1–128 characters without control characters (a UUID or ULID is typical). A signal whose eventId this user already sent is not stored or counted again; the call returns the original outcome with `duplicate: true`. Send one whenever a request may be retried. */
  eventId?: string | null | undefined;
  /** 1–128 characters in Unicode NFC, without lone surrogates, control or format characters or line/paragraph separators (refused, never changed). */
  itemId: string | number;
  /** What the user did. */
  kind: SignalKind;
  /** The client's event time: stored, never used for the boundary (that is the server's ingest time). */
  occurredAt?: string | null | undefined;
  /** Whose engagement (the owner of the signal). */
  userId: string;
  /** Finite, |weight| ≤ 1000000, kept to 6 decimals. Default per kind (see SignalKind). */
  weight?: number | null | undefined;
};

/** Kind of engagement. Default weights: VIEW 1, CLICK 2, LIKE 5, SHARE 8, SAVE 6, SKIP -1, DISLIKE -5. */
export type SignalKind =
  /** Opened the item. */
  | 'CLICK'
  /** Disliked the item. */
  | 'DISLIKE'
  /** Liked the item. */
  | 'LIKE'
  /** Saved the item for later. */
  | 'SAVE'
  /** Shared the item. */
  | 'SHARE'
  /** Passed over the item. */
  | 'SKIP'
  /** Saw the item. */
  | 'VIEW';

export type SenderSendSignalsMutationVariables = Exact<{
  inputs: Array<SignalInput> | SignalInput;
}>;


export type SenderSendSignalsMutation = { sendSignals: { items: Array<
      | { index: number, argument: string, message: string }
      | { signalId: string, forwarded: boolean, duplicate: boolean }
    > } };
