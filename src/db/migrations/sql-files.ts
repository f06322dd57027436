import { readFile } from 'node:fs/promises';
import { sql, type Kysely } from 'kysely';

/**
 * Functions and triggers live one per file in `sql/`, each the current version, headed
 * `-- version: N`. A migration applies a file at a stated version, so migrations stay immutable
 * history: when a function changes, its current file is first copied to `sql/history/NAME.vN.sql`
 * (the version older migrations still ask for), then edited with the next version number, and a new
 * migration applies that number. A dropped function's last version moves to `history/` too, so
 * `sql/` holds exactly the functions the database has. Reviewers read one file; `git log -p` of it
 * shows every change.
 */
const SQL_DIR = new URL('../sql/', import.meta.url);
const VERSION_HEADER = /^-- version: (\d+)\n/;

export type SqlFile = readonly [name: string, version: number];

export async function readSqlFile([name, version]: SqlFile): Promise<string> {
  const current = await readFile(new URL(`${name}.sql`, SQL_DIR), 'utf8').catch(() => null);
  if (current === null) return readFile(new URL(`history/${name}.v${version}.sql`, SQL_DIR), 'utf8');
  const currentVersion = Number(VERSION_HEADER.exec(current)?.[1]);
  if (!Number.isInteger(currentVersion)) throw new Error(`sql/${name}.sql must start with "-- version: N"`);
  if (version === currentVersion) return current;
  if (version > currentVersion) throw new Error(`sql/${name}.sql is version ${currentVersion}; a migration asks for ${version}`);
  return readFile(new URL(`history/${name}.v${version}.sql`, SQL_DIR), 'utf8');
}

/** Applies the files in order, each as one multi-statement script. */
export async function applySqlFiles(db: Kysely<unknown>, files: readonly SqlFile[]): Promise<void> {
  for (const file of files) await sql.raw(await readSqlFile(file)).execute(db);
}
