import { textIdProblem } from '../ids/text-id.js';
import type { SignalKind } from '../db/schema.js';
import { DEFAULT_WEIGHTS } from './signal-kind.js';

export const MAX_ABS_WEIGHT = 1e6;
export const MAX_ID_LENGTH = 128;
export const MAX_COHORTS = 32;
const MAX_SURFACE_LENGTH = 256;
/** Weights are stored as integers of 1e-6 so that aggregates equal the ledger sum exactly. */
export const WEIGHT_SCALE = 1_000_000;

export interface SignalInput {
  userId: string;
  itemId: string;
  kind: SignalKind;
  weight?: number | null;
  /** Nanoseconds since the epoch, from the DateTime scalar. */
  occurredAt?: bigint | null;
  context?: { cohortIds?: readonly string[] | null; surface?: string | null } | null;
  eventId?: string | null;
}

export interface ValidSignal {
  userId: string;
  itemId: string;
  kind: SignalKind;
  weightMicros: number;
  occurredAt: bigint | null;
  surface: string | null;
  /** Deduplicated, in first-seen order. */
  cohortIds: string[];
  /** The client's idempotency key, unique per user; null when the client sent none. */
  eventId: string | null;
}

export class SignalInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field} ${message}`);
  }
}

export function validateSignal(input: SignalInput, path: string): ValidSignal {
  // Field paths are written only for an error: a 1000-signal call checks thousands of fields.
  const itemId = checkedId(input.itemId, path, '.itemId');
  const weight = input.weight ?? DEFAULT_WEIGHTS[input.kind];
  if (!Number.isFinite(weight) || Math.abs(weight) > MAX_ABS_WEIGHT) {
    throw new SignalInputError(`${path}.weight`, `must be a finite number between -${MAX_ABS_WEIGHT} and ${MAX_ABS_WEIGHT}`);
  }
  const cohortIds = distinctCohortIds(input.context?.cohortIds, path);
  const eventId = input.eventId == null ? null : checkedId(input.eventId, path, '.eventId');
  const surface = input.context?.surface ?? null;
  if (surface !== null && (surface.length > MAX_SURFACE_LENGTH || surface.includes('\u0000'))) {
    throw new SignalInputError(`${path}.context.surface`, `must be at most ${MAX_SURFACE_LENGTH} characters without NUL`);
  }
  return {
    userId: input.userId,
    itemId,
    kind: input.kind,
    weightMicros: Math.round(weight * WEIGHT_SCALE),
    occurredAt: input.occurredAt ?? null,
    surface,
    cohortIds,
    eventId,
  };
}

/** Each id checked in order (the first bad one is the error), then deduplicated in first-seen order. */
function distinctCohortIds(raw: readonly string[] | null | undefined, path: string): string[] {
  if (!raw || raw.length === 0) return [];
  for (let i = 0; i < raw.length; i++) {
    const problem = idProblem(raw[i]!);
    if (problem) throw new SignalInputError(`${path}.context.cohortIds[${i}]`, problem);
  }
  const cohortIds = raw.length === 1 ? [raw[0]!] : [...new Set(raw)];
  if (cohortIds.length > MAX_COHORTS) {
    throw new SignalInputError(`${path}.context.cohortIds`, `must name at most ${MAX_COHORTS} distinct cohorts`);
  }
  return cohortIds;
}

function checkedId(value: string, path: string, field: string): string {
  const problem = idProblem(value);
  if (problem) throw new SignalInputError(`${path}${field}`, problem);
  return value;
}

/** The one check for every text id that comes in (item and cohort ids), wherever it comes from. */
export function validId(value: string, field: string): string {
  const problem = idProblem(value);
  if (problem) throw new SignalInputError(field, problem);
  return value;
}

function idProblem(value: string): string | null {
  if (value.length < 1 || value.length > MAX_ID_LENGTH) return `must be 1 to ${MAX_ID_LENGTH} characters long`;
  return textIdProblem(value);
}
