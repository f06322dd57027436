import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions } from 'graphql-yoga';
import { projectRoot } from '../util/project-root.js';

/** The README's example operations, which GraphiQL opens with. */
export const GRAPHIQL_OPERATIONS_FILE = 'src/server/graphiql-operations.graphql';

/**
 * GraphiQL served from the installed npm package (no CDN: nothing leaves the machine), opening on
 * the README's operations, with the CSRF header in every request it sends (subscriptions too, as
 * GET with `Accept: text/event-stream`), and in development the admin token in the headers editor.
 */
export function graphiql(options: { csrfHeader: string; developmentToken: string | null }): {
  graphiql: GraphiQLOptions;
  renderGraphiQL: (options: GraphiQLOptions) => string;
} {
  const settings: GraphiQLOptions = {
    title: 'community-layer',
    defaultQuery: readFileSync(path.join(projectRoot(), GRAPHIQL_OPERATIONS_FILE), 'utf8'),
    headers: JSON.stringify({ authorization: `Bearer ${options.developmentToken ?? '<token printed by npm start, or npm run token>'}` }, null, 2),
    additionalHeaders: { [options.csrfHeader]: 'graphiql' },
  };
  // The page inlines the whole GraphiQL bundle (~9 MB): rendered once, not per request.
  let page: string | null = null;
  return { graphiql: settings, renderGraphiQL: (rendered) => (page ??= renderGraphiQL(rendered)) };
}
