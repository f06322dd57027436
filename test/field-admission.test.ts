import { GraphQLID, GraphQLList, GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema as api } from '../src/api/schema.js';
import { mutationFieldsAdmitted, type FieldAdmission } from '../src/graphql/field-admission.js';
import { membershipChanges } from '../src/server/fair-share-charge.js';
import { ingestsSignals } from '../src/server/shed-signals.js';

/**
 * A schema of its own, so that only the declarations can tell the plugins what a field is: new
 * fields declared as ingestion, a leave and a rejoin, beside undeclared fields that carry the real
 * API's names.
 */
const field = (admission?: FieldAdmission) => ({ type: GraphQLString, args: { user: { type: GraphQLID } }, extensions: { admission } });
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLString } } }),
  mutation: new GraphQLObjectType({
    name: 'Mutation',
    fields: {
      recordTaps: field({ kind: 'signalIngestion' }),
      quit: field({ kind: 'leave' }),
      comeBack: field({ kind: 'rejoin', userArgument: 'user' }),
      comeBackAll: { ...field({ kind: 'rejoinMany', usersArgument: 'users' }), args: { users: { type: new GraphQLList(GraphQLID) } } },
      signals: field(),
      leaveCommunityLayer: field(),
      rejoinCommunityLayer: field(),
    },
  }),
});

const operation = (query: string, variableValues: Record<string, unknown> = {}) => ({
  schema,
  document: parse(query),
  operationName: undefined,
  variableValues,
});

describe('the request plugins read what fields declare (extensions.admission), not their names', () => {
  it('sheds a field declared as signal ingestion, and not one merely named signals', () => {
    expect(ingestsSignals(operation('mutation { recordTaps }'))).toBe(true);
    expect(ingestsSignals(operation('mutation { ok: signals }'))).toBe(false);
    expect(ingestsSignals(operation('mutation { signals }'))).toBe(false);
    expect(ingestsSignals(operation('mutation { signals recordTaps }'))).toBe(true);
  });

  it('lets an operation of declared leaves through every budget, and budgets declared rejoins per user', () => {
    expect(membershipChanges(operation('mutation { quit a: quit __typename }'), '5')).toEqual({
      rejoins: [],
      leavesOnly: true,
      bulkRejoins: [],
    });
    expect(membershipChanges(operation('mutation { leaveCommunityLayer }'), '5')).toEqual({
      rejoins: [],
      leavesOnly: false,
      bulkRejoins: [],
    });
    expect(
      membershipChanges(
        operation('mutation ($u: ID) { comeBack a: comeBack(user: "7") b: comeBack(user: $u) ...F } fragment F on Mutation { comeBack }', {
          u: '8',
        }),
        '5',
      ),
    ).toEqual({ rejoins: ['5', '7', '8', '5'], leavesOnly: false, bulkRejoins: [] });
    expect(membershipChanges(operation('mutation { rejoinCommunityLayer(user: "7") }'), '5')).toEqual({
      rejoins: [],
      leavesOnly: false,
      bulkRejoins: [],
    });
    // A bulk rejoin's users, from a literal list or a variable; each is refused in place past their limit.
    expect(
      membershipChanges(operation('mutation ($u: [ID]) { a: comeBackAll(users: ["7", 8]) b: comeBackAll(users: $u) }', { u: ['9'] }), '5'),
    ).toEqual({ rejoins: [], leavesOnly: false, bulkRejoins: [['7', '8'], ['9']] });
  });

  it('names the declared leaves for the door, which scans bodies for them', () => {
    expect(mutationFieldsAdmitted(schema, 'leave')).toEqual(['quit']);
  });

  it("the API declares its signal writes (the sender's sendSignals among them), its leave and its rejoin", () => {
    expect(mutationFieldsAdmitted(api, 'signalIngestion').sort()).toEqual(['sendSignals', 'signal', 'signals']);
    expect(mutationFieldsAdmitted(api, 'leave').sort()).toEqual(['leaveCommunityLayer', 'leaveCommunityLayerMany']);
    expect(mutationFieldsAdmitted(api, 'rejoin')).toEqual(['rejoinCommunityLayer']);
    expect(mutationFieldsAdmitted(api, 'rejoinMany')).toEqual(['rejoinCommunityLayerMany']);
  });
});
