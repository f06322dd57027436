import { z } from 'zod';
import { count, flag, group, optional, setting } from '../setting.js';

/** Operation limits and GraphQL features. GraphiQL and introspection default to on unless in production. */
export const graphql = group({
  graphiql: setting('GRAPHIQL', optional(flag), '`true`/`false`', 'on unless production'),
  introspection: setting('INTROSPECTION', optional(flag), '`true`/`false`', 'on unless production'),
  maxDepth: setting('GRAPHQL_MAX_DEPTH', count(2, 100).default(12), 'deepest selection of an operation'),
  maxAliases: setting('GRAPHQL_MAX_ALIASES', count(1, 1000).default(30), 'most aliases in an operation'),
  maxTokens: setting('GRAPHQL_MAX_TOKENS', count(100, 1_000_000).default(5000), 'most tokens in a document'),
  maxCost: setting(
    'GRAPHQL_MAX_COST',
    count(10, 1_000_000).default(5000),
    'highest cost of an operation (the cost model: README, Limits and errors)',
  ),
  maxDirectives: setting('GRAPHQL_MAX_DIRECTIVES', count(1, 1000).default(20), 'most directives in an operation'),
  trustedDocuments: setting(
    'GRAPHQL_TRUSTED_DOCUMENTS',
    z.enum(['allow', 'only']).default('allow'),
    '`allow`: arbitrary documents, persisted ones by id, and automatic persisted queries (registered in PostgreSQL); `only`: persisted documents only (the manifest, `GRAPHQL_TRUSTED_DOCUMENTS_FILES`, and those registered with `npm run documents:register`)',
  ),
  trustedDocumentFiles: setting(
    'GRAPHQL_TRUSTED_DOCUMENTS_FILES',
    z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((file) => file.trim())
          .filter(Boolean),
      ),
    'comma-separated manifest files of persisted documents, besides `trusted-documents.json`: Apollo\'s persisted-query manifest format or a plain `{ "id": "document" }` map (GraphQL Code Generator, Relay); relative to the project root',
    'none',
  ),
  apqMaxDocuments: setting(
    'GRAPHQL_APQ_MAX_DOCUMENTS',
    count(0, 1_000_000).default(10_000),
    'most documents automatic persisted queries may register in `allow` mode (0: none; clients then always send the text after a miss)',
  ),
});

/** What one request (one operation) may write, across all its aliases and list arguments. */
export const requestBudget = group({
  signals: setting(
    'REQUEST_MAX_SIGNALS',
    count(1, 1_000_000).default(1000),
    'most signals one request (one operation) may write, across all its aliases and list arguments',
  ),
  cohortAttributions: setting(
    'REQUEST_MAX_COHORT_ATTRIBUTIONS',
    count(0, 32_000_000).default(32_000),
    'most cohort attributions one request may write, across all its aliases and list arguments',
  ),
});
