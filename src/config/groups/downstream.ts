import { z } from 'zod';
import { count, group, milliseconds, optional, setting } from '../setting.js';

/** A private JSON Web Key, as `RECEIPT_SIGNING_KEY` holds it. */
export interface ReceiptSigningJwk {
  kty: string;
  d: string;
  kid?: string;
  [member: string]: unknown;
}

const privateJwk = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON Web Key (JSON)' });
      return z.NEVER;
    }
  })
  .pipe(
    z.looseObject({
      kty: z.enum(['EC', 'OKP', 'RSA'], { message: 'kty must be EC (P-256), OKP (Ed25519) or RSA' }),
      d: z.string().min(1, 'must be a private key (with "d")'),
      crv: z.enum(['P-256', 'Ed25519']).optional(),
      kid: z.string().min(1).optional(),
    }),
  );

/** The change feed, signed receipts and the webhooks that tell downstream systems of every change. */
export const downstream = group({
  feedPageSize: setting(
    'FEED_PAGE_SIZE',
    count(1, 10_000).default(500),
    'events read per statement by a `communityMembershipChanges` stream',
  ),
  feedPollMs: setting(
    'FEED_POLL_MS',
    milliseconds.default(1_000),
    'longest a live feed stream waits before reading again without a notification',
  ),
  receiptSigningKey: setting(
    'RECEIPT_SIGNING_KEY',
    optional(privateJwk),
    'private JWK (EC P-256 → ES256, Ed25519 → EdDSA, RSA → RS256) signing leave and purge receipts',
    '(unset: development generates one, kept beside the dev JWT secret; production signs no receipts)',
  ),
});

export type DownstreamConfig = z.output<typeof downstream.schema>;
