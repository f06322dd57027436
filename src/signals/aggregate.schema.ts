import { rules } from '../auth/rules.js';
import { builder } from '../graphql/builder.js';
import { validIdArgument } from './signal-validation.js';
import { cohortItemAggregate, communityItemAggregate, type ItemAggregate } from './signal.store.js';

const ItemAggregateRef = builder.objectRef<ItemAggregate>('ItemAggregate').implement({
  fields: (t) => ({
    itemId: t.exposeID('itemId'),
    signalCount: t.exposeInt('signalCount'),
    weightSum: t.exposeFloat('weightSum'),
  }),
});

builder.queryField('communityItemAggregate', (t) =>
  t.field({
    type: ItemAggregateRef,
    args: { itemId: t.arg.id({ required: true }) },
    authScopes: rules.readAggregates,
    resolve: (_root, { itemId }, { services }) => communityItemAggregate(services.db, validIdArgument(itemId, 'itemId')),
  }),
);

builder.queryField('cohortItemAggregate', (t) =>
  t.field({
    type: ItemAggregateRef,
    args: { cohortId: t.arg.id({ required: true }), itemId: t.arg.id({ required: true }) },
    authScopes: rules.readAggregates,
    resolve: (_root, { cohortId, itemId }, { services }) =>
      cohortItemAggregate(services.db, validIdArgument(cohortId, 'cohortId'), validIdArgument(itemId, 'itemId')),
  }),
);
