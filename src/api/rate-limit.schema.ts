import { builder } from './builder.js';
import type { RateLimitNote } from './context.js';

const RateLimitRef = builder.objectRef<RateLimitNote>('RateLimit').implement({
  description:
    "The caller's budget (fair share): a bucket of points refilled at `restoreRate` a second, shared by every instance. Each operation spends its cost (or the signals it writes, when more); beyond the bucket, 429 RATE_LIMITED with Retry-After. The same is in every response's `extensions.cost` and `RateLimit` headers.",
  fields: (t) => ({
    cost: t.int({ description: 'What this operation spent.', resolve: (note) => note.cost }),
    limit: t.int({ description: 'The bucket size: the most points available at once.', resolve: (note) => note.state.maximumAvailable }),
    remaining: t.int({ description: 'Points available now, after this operation.', resolve: (note) => note.state.currentlyAvailable }),
    restoreRate: t.float({ description: 'Points refilled a second.', resolve: (note) => note.state.restoreRate }),
    resetAt: t.field({
      type: 'DateTime',
      description: 'When the bucket will be full again if nothing more is spent.',
      resolve: (note) => {
        const { maximumAvailable, currentlyAvailable, restoreRate } = note.state;
        return BigInt(Math.ceil(Date.now() + ((maximumAvailable - currentlyAvailable) / restoreRate) * 1000)) * 1_000_000n;
      },
    }),
    principalClass: t.string({
      description: 'Whose budget: `user`, `service`, `admin` or `anonymous` (by address).',
      resolve: (note) => note.principalClass,
    }),
  }),
});

builder.queryField('rateLimit', (t) =>
  t.field({
    type: RateLimitRef,
    nullable: true,
    description:
      "The caller's budget, as this operation left it (like GitHub's `rateLimit`). Null while fair share is off (FAIR_SHARE=false).",
    resolve: (_root, _args, { rateLimit }) => rateLimit ?? null,
  }),
);
