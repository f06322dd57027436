import type { SpanContext } from '@opentelemetry/api';
import type { ValidSignal } from './signal-input.js';
import type { StoredSignal } from './signal.store.js';

export interface SignalOutcome extends StoredSignal {
  status: 'ACTIVE' | 'LEFT';
}

/** One submitted request while it waits for, and rides in, a group. */
export interface QueuedRequest {
  signals: readonly ValidSignal[];
  abandoned: AbortSignal | undefined;
  /** Per signal: the client's event id, or one generated here, kept for every attempt. */
  eventIds: readonly string[];
  /** Per signal: an earlier attempt whose outcome is unknown may have stored it for this request. */
  maybeStored: boolean[];
  /** The span of the request that submitted it, linked from its group's span. */
  requestSpan: SpanContext | undefined;
  resolve(outcomes: SignalOutcome[]): void;
  reject(error: unknown): void;
}
