/**
 * What an operation came to, for logs, spans and metrics alike: `ok`; `rejected`, the caller's
 * doing or a limit it met (BAD_USER_INPUT, UNAUTHENTICATED, FORBIDDEN, NOT_LEFT,
 * TOO_MANY_SUBSCRIPTIONS, SHUTTING_DOWN during a rollout, …); or `failed`, the service's: an
 * unexpected error, the database unavailable, an instance overloaded, or an HTTP 5xx. Alert on
 * `failed` (docs/operations.md).
 */
export type Outcome = 'ok' | 'rejected' | 'failed';

const FAILURE_CODES = new Set(['INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE', 'OVERLOADED']);

/**
 * The `extensions.code` of each error, once each, in order; an error without one counts as
 * `uncoded` (graphql-js' own parse and validation errors, before Yoga names them).
 */
export function errorCodes(
  errors: readonly { extensions?: Record<string, unknown> | undefined }[] | undefined,
  uncoded = 'GRAPHQL_ERROR',
): string[] {
  const codes = (errors ?? []).map((error) => {
    const code = error.extensions?.['code'];
    return typeof code === 'string' ? code : uncoded;
  });
  return [...new Set(codes)];
}

export function outcomeOf(codes: readonly string[], httpStatus = 200): Outcome {
  if (httpStatus >= 500 || codes.some((code) => FAILURE_CODES.has(code))) return 'failed';
  return codes.length > 0 || httpStatus >= 400 ? 'rejected' : 'ok';
}

/** The code that decided the outcome (a failure's before a rejection's), or `none`. */
export function decidingCode(codes: readonly string[]): string {
  return codes.find((code) => FAILURE_CODES.has(code)) ?? codes[0] ?? 'none';
}
