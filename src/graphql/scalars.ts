import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { U64_MAX, u64Problem } from '../ids/u64.js';
import { builder } from './builder.js';

/** Thrown by scalar parsing; the input-errors plugin names the argument it came from. */
export class ScalarInputError extends GraphQLError {
  constructor(message: string, node?: ValueNode) {
    // graphql-js reports a literal's GraphQLError as is, so it carries its own node (location).
    super(message, { extensions: { code: 'BAD_USER_INPUT' }, ...(node ? { nodes: node } : {}) });
  }
}

/**
 * The canonical lexical form of XML Schema's unsignedLong (no sign, no leading zeros), sent as a
 * JSON string so that no client rounds it through a double.
 */
const UINT64_SPECIFICATION = 'https://www.w3.org/TR/xmlschema11-2/#unsignedLong';

function parseU64(value: unknown, node?: ValueNode): string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value !== 'string') {
    throw new ScalarInputError('UInt64 must be a decimal string, like "42" (numbers above 2^53 lose precision in JSON)', node);
  }
  const problem = u64Problem(value);
  if (problem) {
    throw new ScalarInputError(`UInt64 ${problem}; got ${JSON.stringify(value.slice(0, 40))}${value.length > 40 ? '…' : ''}`, node);
  }
  return value;
}

function literalU64(node: ValueNode): string {
  return parseU64(node.kind === Kind.STRING || node.kind === Kind.INT ? node.value : null, node);
}

builder.scalarType('UInt64', {
  description: `Unsigned 64-bit integer, as a decimal string: "0" … "${U64_MAX}".`,
  specifiedByURL: UINT64_SPECIFICATION,
  serialize: (value) => value,
  parseValue: parseU64,
  parseLiteral: literalU64,
});

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function parseDateTime(value: unknown, node?: ValueNode): Date {
  const date = typeof value === 'string' && RFC3339.test(value) ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) {
    throw new ScalarInputError('DateTime must be an RFC 3339 date-time with a time zone, like "2026-11-29T12:00:00Z"', node);
  }
  return date;
}

builder.scalarType('DateTime', {
  description: 'An instant as an RFC 3339 / ISO-8601 string in UTC, with up to nanosecond digits.',
  specifiedByURL: 'https://scalars.graphql.org/andimarek/date-time.html',
  serialize: (value) => (value instanceof Date ? value.toISOString() : value),
  parseValue: parseDateTime,
  parseLiteral: (node) => parseDateTime(node.kind === Kind.STRING ? node.value : null, node),
});

/** Nanoseconds since the epoch (decimal string) as an exact ISO-8601 instant. */
export function nanosToIso(ns: string): string {
  const nanos = BigInt(ns);
  const millis = nanos / 1_000_000n;
  const withinMilli = (nanos % 1_000_000n).toString().padStart(6, '0');
  return `${new Date(Number(millis)).toISOString().slice(0, -1)}${withinMilli}Z`;
}
