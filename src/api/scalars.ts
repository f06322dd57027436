import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { U64_MAX, u64Problem } from '../ids/u64.js';
import { parseRfc3339, formatRfc3339 } from '../time/rfc3339.js';
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
  if (typeof value !== 'string') {
    throw new ScalarInputError(
      'UInt64 must be a string of decimal digits, like "42", never a number (JSON numbers lose precision above 2^53)',
      node,
    );
  }
  const problem = u64Problem(value);
  if (problem) throw new ScalarInputError(`UInt64 ${problem}; got ${excerpt(value)}`, node);
  return value;
}

builder.scalarType('UInt64', {
  description:
    `Unsigned 64-bit integer as a string of ASCII decimal digits, "0" … "${U64_MAX}": no sign, spaces, leading zeros, ` +
    'fraction or exponent. Numbers are refused, in variables and as literals (write "42", not 42).',
  specifiedByURL: UINT64_SPECIFICATION,
  serialize: (value) => value,
  parseValue: parseU64,
  parseLiteral: (node) => parseU64(node.kind === Kind.STRING ? node.value : null, node),
});

function parseDateTime(value: unknown, node?: ValueNode): bigint {
  if (typeof value !== 'string') throw new ScalarInputError('DateTime must be an RFC 3339 string, like "2026-11-29T12:00:00Z"', node);
  const { epochNs, problem } = parseRfc3339(value);
  if (problem !== undefined) throw new ScalarInputError(`DateTime ${problem}; got ${excerpt(value)}`, node);
  return epochNs;
}

builder.scalarType('DateTime', {
  specifiedByURL: 'https://scalars.graphql.org/andimarek/date-time.html',
  description:
    'An instant, RFC 3339. Input: YYYY-MM-DDTHH:MM:SS[.fraction] with a zone, Z or ±hh:mm (required); a real calendar date, ' +
    'hours 00–23, no leap second (:60), within the years 0001–9999 in UTC; up to 9 fractional digits, where digits after ' +
    'the 6th must be 0 (stored to the microsecond: finer values are refused, never rounded). ' +
    'Output: always UTC with Z and exactly 9 fractional digits (nanoseconds).',
  serialize: (value) => formatRfc3339(value),
  parseValue: parseDateTime,
  parseLiteral: (node) => parseDateTime(node.kind === Kind.STRING ? node.value : null, node),
});

function excerpt(value: string): string {
  return `${JSON.stringify(value.slice(0, 40))}${value.length > 40 ? '…' : ''}`;
}
