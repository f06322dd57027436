import { rules } from './auth-rules.js';
import { builder } from './builder.js';
import { microsToDecimal } from './decimal-scalar.js';
import { validIdArgument } from './signal-validation.js';
import type { ItemAggregate } from '../signals/signal-reads.js';
import { WEIGHT_SCALE } from '../signals/signal-input.js';

const ItemAggregateRef = builder.objectRef<ItemAggregate>('ItemAggregate').implement({
  description: 'What the forwarded signals of an item add up to, in the community or one cohort.',
  fields: (t) => ({
    itemId: t.exposeID('itemId', { description: 'The item.' }),
    signalCount: t.int({
      description: 'Signals forwarded to this aggregate.',
      deprecationReason: 'An Int overflows past 2^31 − 1: use signalTotal.',
      resolve: (aggregate) => Number(aggregate.signalTotal),
    }),
    signalTotal: t.expose('signalTotal', { type: 'UInt64', description: 'Signals forwarded to this aggregate (exact).' }),
    weightSum: t.float({
      description: 'Sum of their weights.',
      deprecationReason: 'A Float is not exact for large sums: use weightTotal.',
      resolve: (aggregate) => Number(aggregate.weightMicros) / WEIGHT_SCALE,
    }),
    weightTotal: t.field({
      type: 'Decimal',
      description: 'Sum of their weights, exact (weights are kept to 6 decimals).',
      resolve: (aggregate) => microsToDecimal(aggregate.weightMicros),
    }),
  }),
});

builder.queryField('communityItemAggregate', (t) =>
  t.field({
    type: ItemAggregateRef,
    description: "An item's community aggregate: every forwarded signal of it.",
    args: { itemId: t.arg.id({ required: true, description: 'The item.' }) },
    authScopes: rules.readAggregates,
    resolve: (_root, { itemId }, { services }) => services.signalReads.communityAggregate(validIdArgument(itemId, 'itemId')),
  }),
);

builder.queryField('cohortItemAggregate', (t) =>
  t.field({
    type: ItemAggregateRef,
    description: "An item's aggregate in one cohort: the forwarded signals attributed to that cohort.",
    args: {
      cohortId: t.arg.id({ required: true, description: 'The cohort.' }),
      itemId: t.arg.id({ required: true, description: 'The item.' }),
    },
    authScopes: rules.readAggregates,
    resolve: (_root, { cohortId, itemId }, { services }) =>
      services.signalReads.cohortAggregate(validIdArgument(cohortId, 'cohortId'), validIdArgument(itemId, 'itemId')),
  }),
);
