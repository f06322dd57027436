import { badUserInput } from './errors.js';

/**
 * Relay connections over a keyset (a tuple of strings that orders the rows): the Relay plugin's
 * helpers page by offset or by one opaque value, and a keyset must survive concurrent inserts.
 * Cursors are the keyset as base64url JSON, checked on the way back in.
 */
export interface KeysetPage<Node> {
  edges: { cursor: string; node: Node }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

export interface KeysetOptions<Node, Key> {
  first: number;
  after: Key | null;
  keyOf(node: Node): Key;
  /** Reads up to `limit` nodes after `after`, in keyset order. */
  load(after: Key | null, limit: number): Promise<Node[]>;
}

export async function keysetPage<Node, Key extends readonly string[]>(options: KeysetOptions<Node, Key>): Promise<KeysetPage<Node>> {
  // One more than asked tells whether a next page exists.
  const rows = await options.load(options.after, options.first + 1);
  const edges = rows.slice(0, options.first).map((node) => ({ cursor: encodeCursor(options.keyOf(node)), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: rows.length > options.first,
      hasPreviousPage: options.after !== null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

function encodeCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The keyset in `cursor`, if `isKey` accepts it; else BAD_USER_INPUT on `argument`. */
export function decodeCursor<Key extends readonly string[]>(cursor: string, argument: string, isKey: (parts: unknown[]) => boolean): Key {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    parts = null;
  }
  if (!Array.isArray(parts) || !isKey(parts)) throw badUserInput(`${argument} is not a cursor returned by this connection`, argument);
  return parts as unknown as Key;
}
