/** One server of a database URL. */
export interface DatabaseHost {
  host: string;
  port: number;
}

/**
 * A PostgreSQL URL in libpq's form, with one host or several (`postgres://u:p@h1:5432,h2:5433/db`).
 * `targetSessionAttrs` is libpq's `target_session_attrs`: `any` takes the first host that answers,
 * `read-write` the first that accepts writes (the primary).
 */
export interface DatabaseTarget {
  hosts: DatabaseHost[];
  targetSessionAttrs: 'any' | 'read-write';
  /** The URL for one of its hosts, without `target_session_attrs` (what `pg` itself understands). */
  urlFor(host: DatabaseHost): string;
  /** The URL as given, password masked: for logs. */
  masked: string;
}

const SHAPE = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?$/;
const HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._~%-]+)(?::(\d{1,5}))?$/;
const SESSION_ATTRS = ['any', 'read-write'] as const;

export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

/** Parses and validates; throws a DatabaseUrlError saying what is wrong (never echoing the password). */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const match = SHAPE.exec(url.trim());
  if (!match) throw new DatabaseUrlError('must be a postgres:// or postgresql:// URL');
  const [, scheme, userinfo, hostList = '', path = '', query = ''] = match;
  const hosts = hostList.split(',').map((entry, index) => {
    const host = HOST.exec(entry);
    if (!host) throw new DatabaseUrlError(`host ${index + 1} of ${hostList.split(',').length} is not host[:port]`);
    const port = host[2] === undefined ? 5432 : Number(host[2]);
    if (port < 1 || port > 65_535) throw new DatabaseUrlError(`host ${index + 1} has port ${port}, outside 1-65535`);
    return { host: host[1]!, port };
  });
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs') ?? 'any';
  if (!(SESSION_ATTRS as readonly string[]).includes(attrs)) {
    throw new DatabaseUrlError(`target_session_attrs=${attrs} is not supported (use ${SESSION_ATTRS.join(' or ')})`);
  }
  params.delete('target_session_attrs');
  const rest = params.toString();
  const auth = userinfo === undefined ? '' : `${userinfo}@`;
  const maskedAuth =
    userinfo === undefined ? '' : `${userinfo.includes(':') ? `${userinfo.slice(0, userinfo.indexOf(':'))}:***` : userinfo}@`;
  return {
    hosts,
    targetSessionAttrs: attrs as DatabaseTarget['targetSessionAttrs'],
    urlFor: (host) => `${scheme}://${auth}${host.host}:${host.port}${path}${rest ? `?${rest}` : ''}`,
    masked: `${scheme}://${maskedAuth}${hostList}${path}${query ? `?${query}` : ''}`,
  };
}

/** The URL with its password masked, for logs; an unparsable URL is not shown at all. */
export function maskedDatabaseUrl(url: string): string {
  try {
    return parseDatabaseUrl(url).masked;
  } catch {
    return '(invalid database URL)';
  }
}
