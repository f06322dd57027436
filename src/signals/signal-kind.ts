/** The kinds of engagement, in the order of the database enum `signal_kind`. */
export const SIGNAL_KINDS = ['VIEW', 'CLICK', 'LIKE', 'SHARE', 'SAVE', 'SKIP', 'DISLIKE'] as const;

export type SignalKind = (typeof SIGNAL_KINDS)[number];

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
