/** Codes the server sends for trouble that passes: retry later (with `Retry-After`). */
const RETRYABLE_CODES = new Set(['SERVICE_UNAVAILABLE', 'OVERLOADED', 'TOO_MANY_SUBSCRIPTIONS', 'RATE_LIMITED', 'SHUTTING_DOWN']);

export interface GraphQLErrorBody {
  message: string;
  extensions?: { code?: string; requestId?: string; retryAfterSeconds?: number };
}

/**
 * A failed call, typed: `code` is the server's `extensions.code` (UNAUTHENTICATED, FORBIDDEN, NOT_LEFT,
 * PURGE_IN_PROGRESS, TOO_MANY_SUBSCRIPTIONS, …), NETWORK when no answer came, HTTP_<status> when an
 * answer had no GraphQL error. `retryable`: worth trying again, no sooner than `retryAfterSeconds`.
 */
export class SettingsClientError extends Error {
  override readonly name = 'SettingsClientError';

  constructor(
    message: string,
    readonly code: string,
    readonly status: number | null,
    readonly retryable: boolean,
    readonly retryAfterSeconds: number | null = null,
    readonly requestId: string | null = null,
  ) {
    super(message);
  }

  static network(cause: unknown): SettingsClientError {
    return new SettingsClientError(cause instanceof Error ? cause.message : String(cause), 'NETWORK', null, true);
  }

  /** From a GraphQL error and the HTTP answer that carried it (none: an event of a live stream). */
  static of(error: GraphQLErrorBody | undefined, response: Response | null): SettingsClientError {
    const status = response?.status ?? null;
    const code = error?.extensions?.code ?? `HTTP_${status}`;
    const retryable = status === 503 || status === 429 || RETRYABLE_CODES.has(code);
    const later = retryAfter(response?.headers.get('retry-after') ?? null) ?? error?.extensions?.retryAfterSeconds ?? null;
    return new SettingsClientError(
      error?.message ?? `HTTP ${status}`,
      code,
      status,
      retryable,
      later,
      error?.extensions?.requestId ?? null,
    );
  }

  /** From a refused request's body: GraphQL JSON, or server-sent events carrying the error. */
  static async fromResponse(response: Response): Promise<SettingsClientError> {
    const text = await response.text().catch(() => '');
    return SettingsClientError.of(firstError(text), response);
  }
}

function firstError(text: string): GraphQLErrorBody | undefined {
  const bodies = text.trimStart().startsWith('{') ? [text] : [...text.matchAll(/^data: ?(.*)$/gm)].map((match) => match[1]!);
  for (const body of bodies) {
    try {
      const error = (JSON.parse(body) as { errors?: GraphQLErrorBody[] }).errors?.[0];
      if (error) return error;
    } catch {
      // Not JSON (a proxy's page): the status alone says what happened.
    }
  }
  return undefined;
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date. */
function retryAfter(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}
