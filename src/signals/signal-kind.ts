import type { SignalKind } from '../db/schema.js';

/** Weight of a signal when the client sends none: positive engagement counts up, rejection down. */
export const DEFAULT_WEIGHTS: Readonly<Record<SignalKind, number>> = {
  VIEW: 1,
  CLICK: 2,
  LIKE: 5,
  SHARE: 8,
  SAVE: 6,
  SKIP: -1,
  DISLIKE: -5,
};
