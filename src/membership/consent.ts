import type { ConsentReason } from '../db/schema.js';
import { textIdProblem } from '../ids/text-id.js';

export { CONSENT_REASONS, type ConsentReason } from '../db/schema.js';

/** The bounds, also CHECKs on the columns (migration 0024). */
export const MAX_REASON_TEXT_LENGTH = 500;
export const MAX_POLICY_VERSION_LENGTH = 64;

/** Why a leave or rejoin happened, from where, under which policy (docs/api.md, "Reasons"). */
export interface Consent {
  reason: ConsentReason;
  reasonText: string | null;
  policyVersion: string | null;
}

/**
 * The first problem with a consent's texts as [field, message], or null. Both are one line of
 * visible text in NFC (the text-id rule: no control, format or separator characters), so what a
 * privacy team reads back is what was sent; lengths count UTF-16 code units, as the CHECKs count
 * characters no lower.
 */
export function consentProblem(consent: Consent): [field: 'reasonText' | 'policyVersion', message: string] | null {
  for (const [field, value, max] of [
    ['reasonText', consent.reasonText, MAX_REASON_TEXT_LENGTH],
    ['policyVersion', consent.policyVersion, MAX_POLICY_VERSION_LENGTH],
  ] as const) {
    if (value === null) continue;
    if (value.length < 1 || value.length > max) return [field, `${field} must be 1 to ${max} characters long`];
    const problem = textIdProblem(value);
    if (problem) return [field, `${field} ${problem}`];
  }
  return null;
}

/** A consent from its columns; null where no reason was recorded. */
export function toConsent(reason: ConsentReason | null, reasonText: string | null, policyVersion: string | null): Consent | null {
  return reason === null ? null : { reason, reasonText, policyVersion };
}
