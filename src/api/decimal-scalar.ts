import { Kind } from 'graphql';
import { badUserInput } from '../graphql/errors.js';
import { builder } from './builder.js';

/** Canonical decimals: no "+", no leading zeros, no trailing fraction zeros, no exponent; "-0" is "0". */
const CANONICAL_DECIMAL = /^(0|-?(0\.\d*[1-9]|[1-9]\d*(\.\d*[1-9])?))$/;

function parseDecimal(value: unknown): string {
  if (typeof value !== 'string' || !CANONICAL_DECIMAL.test(value)) {
    throw badUserInput('Decimal must be a canonical decimal string, like "-12.5"');
  }
  return value;
}

builder.scalarType('Decimal', {
  description:
    'An exact decimal number as a string: optional "-", digits, optionally "." and more digits, like "-12.5". No exponent, no leading or trailing zeros.',
  specifiedByURL: 'https://www.w3.org/TR/xmlschema11-2/#decimal',
  serialize: (value) => value,
  parseValue: parseDecimal,
  parseLiteral: (node) => parseDecimal(node.kind === Kind.STRING ? node.value : null),
});

/** An integer count of 10⁻⁶ units (decimal string, any size) as an exact Decimal. */
export function microsToDecimal(micros: string): string {
  const negative = micros.startsWith('-');
  const digits = (negative ? micros.slice(1) : micros).padStart(7, '0');
  const whole = digits.slice(0, -6).replace(/^0+(?=\d)/, '');
  const fraction = digits.slice(-6).replace(/0+$/, '');
  const text = fraction ? `${whole}.${fraction}` : whole;
  return negative && text !== '0' ? `-${text}` : text;
}
