import { builder } from './builder.js';
import type { Viewer } from '../auth/claims.js';
import { badUserInput } from '../graphql/errors.js';
import {
  CONSENT_REASONS,
  consentProblem,
  MAX_POLICY_VERSION_LENGTH,
  MAX_REASON_TEXT_LENGTH,
  type Consent,
  type ConsentReason,
} from '../membership/consent.js';

const REASON_DESCRIPTIONS: Record<ConsentReason, string> = {
  USER_REQUEST: 'The user asked, e.g. on a settings page. The default for a user acting with their own token.',
  ADMIN: 'An administrator acted for the user, e.g. on a ticket. The default for a community:admin caller acting on another user.',
  GLOBAL_PRIVACY_CONTROL: 'The user’s browser sent Global Privacy Control (`Sec-GPC: 1`).',
  CONSENT_PLATFORM: 'A consent management platform relayed the user’s choice.',
};

export const ConsentReasonEnum = builder.enumType('ConsentReason', {
  description: 'Why a leave or rejoin happened (docs/api.md, "Reasons").',
  values: Object.fromEntries(CONSENT_REASONS.map((reason) => [reason, { description: REASON_DESCRIPTIONS[reason] }])) as Record<
    ConsentReason,
    { description: string }
  >,
});

export const ConsentRecordRef = builder.objectRef<Consent>('ConsentRecord').implement({
  description: 'Why a leave or rejoin happened, from where, under which policy, as recorded with it.',
  fields: (t) => ({
    reason: t.expose('reason', { type: ConsentReasonEnum, description: 'Why.' }),
    reasonText: t.exposeString('reasonText', { nullable: true, description: 'The free text sent with it.' }),
    policyVersion: t.exposeString('policyVersion', { nullable: true, description: 'The privacy policy version it was made under.' }),
  }),
});

const TEXT_RULES =
  'in Unicode NFC, without control, format or line/paragraph separator characters (refused with BAD_USER_INPUT, nothing written)';

/** The arguments leave and rejoin share (a fresh set per field). */
export const consentArguments = () =>
  builder.args((t) => ({
    reason: t.field({
      type: ConsentReasonEnum,
      required: false,
      description: 'Why. Omitted: USER_REQUEST for a user acting with their own token, ADMIN for a caller acting on another user.',
    }),
    reasonText: t.string({ required: false, description: `Free text, 1–${MAX_REASON_TEXT_LENGTH} characters ${TEXT_RULES}.` }),
    policyVersion: t.string({
      required: false,
      description: `The privacy policy version, 1–${MAX_POLICY_VERSION_LENGTH} characters ${TEXT_RULES}.`,
    }),
  }));

interface ConsentArgs {
  reason?: ConsentReason | null;
  reasonText?: string | null;
  policyVersion?: string | null;
}

/** The consent to record for a change of `target`'s membership: the given one, or the caller's default. */
export function consentFrom(args: ConsentArgs, viewer: Viewer | null, target: string): Consent {
  const consent: Consent = {
    reason: args.reason ?? (viewer?.userId === target ? 'USER_REQUEST' : 'ADMIN'),
    reasonText: args.reasonText ?? null,
    policyVersion: args.policyVersion ?? null,
  };
  const problem = consentProblem(consent);
  if (problem) throw badUserInput(problem[1], problem[0]);
  return consent;
}
