import {
  buildClientSchema,
  type GraphQLField,
  type GraphQLInputType,
  getIntrospectionQuery,
  getNamedType,
  type IntrospectionQuery,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
} from 'graphql';
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import { gql, token } from './harness.js';
import { subscribe } from './sse.js';

/**
 * Every root field with a text input, built from introspection with all of its arguments valid
 * (test/text-inputs.test.ts), sent as a query, mutation or stream; and the data those valid inputs need.
 */

export const SCOPES = 'community:admin signals:write community:feed community:purge-ack';
export const PROCESSOR = 'text-inputs-processor';
/** A valid value for each scalar that is sent as text; a scalar missing here fails the test. */
const VALID_TEXT: Record<string, string> = {
  String: 'valid-text',
  ID: 'valid-id',
  UInt64: '1',
  DateTime: '2026-01-02T03:04:05Z',
};
const VALID_OTHER: Record<string, unknown> = { Int: 1, Float: 1, Boolean: true };
/** Where the type's value is not valid: `field.path` (list indexes as `[]`). */
const VALID_AT: Record<string, unknown> = {
  'registerWebhookEndpoint.url': 'https://hooks.example.com/community',
  'communityMembershipChangePage.after': '0',
  'communityMembershipChanges.after': '0',
  'sendSignals.invalid': 'REJECT_ALL',
  // A reason is for a FAILED acknowledgement only.
  'acknowledgeCommunityPurge.state': 'FAILED',
};
/** Fields that report a bad input as an item of their answer, not as an error of the call. */
const PER_ITEM: Record<string, string> = { validateSignals: '{ argument code message }' };

export interface Operation {
  kind: 'query' | 'mutation' | 'subscription';
  field: string;
  query: string;
  variables: Record<string, unknown>;
  /** Paths of every text leaf inside the variables, as the error names it (`inputs[0].itemId`). */
  texts: (string | number)[][];
}

/** One operation per root field with all of its arguments (optional ones too) built valid. */
export type Path = (string | number)[];

export async function operations(app: App, valid: Record<string, unknown>) {
  const introspection = await gql<IntrospectionQuery>(app, getIntrospectionQuery());
  const schema = buildClientSchema(introspection.data!);
  const unbuildable: string[] = [];
  const built: Operation[] = [];
  const roots = [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
    ['subscription', schema.getSubscriptionType()],
  ] as const;
  for (const [kind, root] of roots) {
    for (const field of Object.values(root?.getFields() ?? {}) as GraphQLField<unknown, unknown>[]) {
      const texts: Path[] = [];
      const build = (type: GraphQLInputType, path: Path): unknown => {
        const at = `${field.name}.${argumentOf(path).replace(/\[\d+\]/g, '[]')}`;
        if (at in VALID_AT || at in valid) {
          const value = at in valid ? valid[at] : VALID_AT[at];
          if (typeof value === 'string' && !isEnumType(getNamedType(type))) texts.push(path);
          return value;
        }
        if (isNonNullType(type)) return build(type.ofType, path);
        if (isListType(type)) return [build(type.ofType, [...path, 0])];
        if (isInputObjectType(type)) {
          const fields = Object.values(type.getFields());
          return Object.fromEntries(fields.map((input) => [input.name, build(input.type, [...path, input.name])]));
        }
        if (isEnumType(type)) return type.getValues()[0]!.name;
        if (type.name in VALID_OTHER) return VALID_OTHER[type.name];
        if (type.name in VALID_TEXT) return (texts.push(path), VALID_TEXT[type.name]);
        unbuildable.push(`${at}: no valid value for ${type.name}`);
        return null;
      };
      const variables = Object.fromEntries(field.args.map(({ name, type }) => [name, build(type, [name])]));
      if (texts.length === 0) continue;
      const declared = field.args.map((argument) => `$${argument.name}: ${String(argument.type)}`).join(', ');
      const passed = field.args.map((argument) => `${argument.name}: $${argument.name}`).join(', ');
      const named = getNamedType(field.type);
      const selection = PER_ITEM[field.name] ?? (isLeafType(named) ? '' : '{ __typename }');
      const query = `${kind} (${declared}) { ${field.name}(${passed}) ${selection} }`;
      built.push({ kind, field: field.name, query, variables, texts });
    }
  }
  return { operations: built, unbuildable };
}

export function withText(variables: Record<string, unknown>, path: Path, replace: (text: string) => string) {
  const copy = structuredClone(variables);
  let holder: any = copy;
  for (const step of path.slice(0, -1)) holder = holder[step];
  const last = path.at(-1)!;
  holder[last] = replace(holder[last]);
  return copy;
}

export function argumentOf(path: Path): string {
  return path.map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`)).join('');
}

/** Errors of the call (of a stream: of its first event), and the items a per-item field reports. */
export type Problem = { message: string; extensions?: Record<string, unknown> };

export async function send(app: App, operation: Operation, variables: Record<string, unknown>, bearer: string) {
  if (operation.kind !== 'subscription') {
    const { data, errors } = await gql(app, operation.query, variables, bearer);
    const items = PER_ITEM[operation.field] ? (data?.[operation.field] as any[]) : undefined;
    return { errors: (errors ?? []) as Problem[], items };
  }
  const stream = await subscribe(app, operation.query, variables, bearer);
  try {
    const first = await stream.next();
    const ended: Problem = { message: 'the stream ended without an event', extensions: { code: 'NO_EVENT' } };
    return { errors: first ? ((first.data?.errors ?? []) as Problem[]) : [ended], items: undefined };
  } finally {
    stream.close();
  }
}

/**
 * What a database needs for the inputs to be valid: a registered processor and a contribution (its
 * cursor); where streams must send a first event, also a change and a purge (which the webhook
 * dispatcher and the purge worker go on with in the background: so not where the bad inputs go).
 */
export async function prepare(target: App, streams: boolean): Promise<string> {
  const admin = await token('1', SCOPES);
  const run = async (query: string) => expect((await gql(target, query, undefined, admin)).errors).toBeUndefined();
  await run(`mutation { registerDownstreamProcessor(name: "text inputs", subject: "${PROCESSOR}") { __typename } }`);
  await run('mutation { signal(input: { userId: "1", itemId: "text-inputs", kind: VIEW }) { signalId } }');
  const contributions = '{ communityContributions(userId: "1", first: 1) { edges { cursor } } }';
  const page = await gql(target, contributions, undefined, admin);
  if (streams) {
    await run('mutation { leaveCommunityLayer(userId: "1") { __typename } }');
    await run('mutation { purgeCommunityContributions(userId: "1") { __typename } }');
  }
  return page.data!.communityContributions.edges[0].cursor;
}
