import { builder } from './builder.js';
import { CommunityMembershipRef } from './membership.schema.js';
import { PurgeReceiptRef } from './purge.schema.js';
import { signLeaveReceipt, signPurgeReceipt } from './receipt-tokens.js';

const SIGNED =
  'A JWS (compact JWT, typ community-receipt+jwt) signed by the key published at /.well-known/community-receipts.json: verifiable with any JOSE library, without our database (docs/downstream.md). Null when this service is configured to sign no receipts.';

builder.objectField(CommunityMembershipRef, 'signedLeaveReceipt', (t) =>
  t.string({
    nullable: true,
    description: `The current leave's receipt: the user, the boundary (leftAtNs) and its instant, and the reason, its text and the policy version where recorded; null while ACTIVE. ${SIGNED}`,
    resolve: async (membership, _args, { services }) => {
      if (membership.status !== 'LEFT' || membership.leftAtNs === null) return null;
      const consent = await services.membership.leaveConsent(membership.userId, membership.leftAtNs);
      return signLeaveReceipt(services.receipts, membership.userId, membership.leftAtNs, consent);
    },
  }),
);

builder.objectField(PurgeReceiptRef, 'signedReceipt', (t) =>
  t.string({
    nullable: true,
    description: `This receipt as it stands (status, boundary, range, times, entries removed). ${SIGNED}`,
    resolve: (receipt, _args, { services }) => signPurgeReceipt(services.receipts, receipt),
  }),
);
