import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { GraphiQLOptions } from 'graphql-yoga';
import { projectRoot } from '../util/project-root.js';
import { GraphiQLAssets, type GraphiQLUrls } from './graphiql-assets.js';

/** The README's example operations, which GraphiQL opens with. */
export const GRAPHIQL_OPERATIONS_FILE = 'src/server/graphiql-operations.graphql';

/**
 * GraphiQL served from the installed npm package (no CDN: nothing leaves the machine), opening on
 * the README's operations, with the CSRF header in every request it sends (subscriptions too, as
 * GET with `Accept: text/event-stream`), and in development the admin token in the headers editor.
 */
export interface GraphiQLPage {
  graphiql: GraphiQLOptions;
  renderGraphiQL: (options: GraphiQLOptions) => string;
  /** The page's script, stylesheet, workers, fonts and icon (served by the HTTP server). */
  assets: GraphiQLAssets;
}

export function graphiql(options: { csrfHeader: string; developmentToken: string | null }): GraphiQLPage {
  const settings: GraphiQLOptions = {
    title: 'community-layer',
    defaultQuery: readFileSync(path.join(projectRoot(), GRAPHIQL_OPERATIONS_FILE), 'utf8'),
    headers: JSON.stringify(
      { authorization: `Bearer ${options.developmentToken ?? '<token printed by npm start, or npm run token>'}` },
      null,
      2,
    ),
    additionalHeaders: { [options.csrfHeader]: 'graphiql' },
  };
  const assets = new GraphiQLAssets();
  let page: string | null = null;
  return { graphiql: settings, renderGraphiQL: (rendered) => (page ??= html(rendered, assets.urls)), assets };
}

/** @graphql-yoga/render-graphiql's page, with its parts linked instead of inlined (graphiql-assets.ts). */
function html(options: GraphiQLOptions, urls: GraphiQLUrls): string {
  const script = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${(options.title ?? 'GraphiQL').replace(/[<&]/g, '')}</title>
<link rel="icon" href="${urls.favicon}">
<link rel="stylesheet" href="${urls.css}">
<script src="${urls.js}" defer></script>
</head>
<body id="body" class="no-focus-outline">
<noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div>
<script>
  const workers = ${script(urls.workers)};
  self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => workers[label] };
  window.addEventListener('DOMContentLoaded', () =>
    YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${script(options)}));
</script>
</body>
</html>
`;
}
