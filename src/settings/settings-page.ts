import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { projectRoot } from '../util/project-root.js';

/** The page's script bundled with its client, @community-layer/settings-client (`npm run build:page`). */
function scriptPath(): string {
  return path.join(projectRoot(), 'dist', 'public', 'settings.js');
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

function html(parentOrigins: string[]): string {
  return `<!doctype html>
<html lang="en" data-api="/graphql" data-parent-origins="${escapeAttribute(parentOrigins.join(' '))}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Community personalization – settings</title>
<style>
  :root { color-scheme: light; font: 16px/1.5 system-ui, sans-serif; color: #1b1b1f; background: #f6f6f8; }
  main { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
  section { background: #fff; border: 1px solid #d0d0d7; border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
  h1 { font-size: 1.5rem; margin-bottom: .25rem; } h2 { font-size: 1.15rem; margin: 0 0 .5rem; }
  button { font: inherit; padding: .5rem 1rem; border-radius: 6px; border: 2px solid #1d4ed8; background: #1d4ed8; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1d4ed8; }
  button.danger { border-color: #b91c1c; background: #b91c1c; }
  button:focus-visible, textarea:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
  button:disabled { opacity: .6; cursor: progress; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e3e8; }
  #error { color: #991b1b; background: #fef2f2; border: 1px solid #fecaca; border-radius: 6px; padding: .5rem .75rem; }
  .hint { color: #4a4a55; font-size: .9rem; }
  dialog { border: 1px solid #d0d0d7; border-radius: 8px; max-width: 32rem; } dialog::backdrop { background: rgb(0 0 0 / .4); }
  .actions { display: flex; gap: .75rem; justify-content: flex-end; }
  textarea { width: 100%; font: 13px/1.4 ui-monospace, monospace; }
</style>
<script type="module" src="/settings/settings.js"></script>
</head>
<body>
<main>
  <h1>Community personalization</h1>
  <p class="hint">When you are part of the community layer, your views and likes also improve shared recommendations for your cohorts and everyone. You can leave and come back at any time.</p>
  <p id="error" role="alert" hidden></p>
  <section aria-labelledby="status-heading">
    <h2 id="status-heading">Your setting</h2>
    <p id="status" role="status" aria-live="polite">Loading…</p>
    <p id="boundary" hidden></p>
    <button id="leave" type="button" class="danger" hidden>Leave the community layer</button>
    <button id="rejoin" type="button" hidden>Rejoin the community layer</button>
    <p id="live" class="hint" aria-live="polite">Live updates: off.</p>
  </section>
  <section id="purge" aria-labelledby="purge-heading" hidden>
    <h2 id="purge-heading">Your past contributions</h2>
    <p class="hint">What your activity added to shared and cohort recommendations before you left still counts there until you remove it.</p>
    <button id="purge-start" type="button" class="danger">Remove my past contributions</button>
    <div id="purge-receipt" tabindex="-1" role="status" aria-live="polite" hidden>
      <p id="purge-state"></p>
      <p id="purge-downstream" hidden></p>
      <progress id="purge-progress" hidden></progress>
      <table id="purge-targets" hidden>
        <caption class="hint">Removed from each shared aggregate.</caption>
        <thead><tr><th scope="col">From</th><th scope="col">Entries</th><th scope="col">Weight</th></tr></thead>
        <tbody id="purge-target-rows"></tbody>
      </table>
    </div>
  </section>
  <section aria-labelledby="history-heading">
    <h2 id="history-heading">History</h2>
    <table id="history" tabindex="-1" hidden>
      <caption class="hint">Each time you left, and how many of your signals were kept out of shared recommendations.</caption>
      <thead><tr><th scope="col">Left</th><th scope="col">Came back</th><th scope="col">Signals held back</th></tr></thead>
      <tbody id="history-rows"></tbody>
    </table>
    <p id="history-count" class="hint" hidden></p>
    <button id="older" type="button" class="secondary" aria-controls="history" hidden>Show older leaves</button>
    <p id="no-history" class="hint">You have never left.</p>
  </section>
  <section aria-labelledby="data-heading">
    <h2 id="data-heading">Your data</h2>
    <p class="hint">Everything kept about you in one file: your setting and each time you left or came back, your signals, what still counts in shared recommendations, and your removals with their receipts.</p>
    <button id="download" type="button" class="secondary">Download my data</button>
    <p id="download-state" class="hint" role="status" aria-live="polite"></p>
  </section>
  <form id="token-form" hidden>
    <section aria-labelledby="token-heading">
      <h2 id="token-heading">Sign in</h2>
      <label for="token-input">Access token</label>
      <textarea id="token-input" rows="4" autocomplete="off" spellcheck="false"></textarea>
      <p class="hint">Embedded in an app, the app provides this. In development, paste the user token that <code>npm start</code> printed.</p>
      <button type="submit">Use this token</button>
    </section>
  </form>
</main>
<dialog id="confirm-leave" aria-labelledby="confirm-title" aria-describedby="confirm-text">
  <form method="dialog">
    <h2 id="confirm-title">Leave the community layer?</h2>
    <p id="confirm-text">From the moment you confirm, none of your new activity reaches shared or cohort recommendations, on any device. It still personalizes your own experience. We record the exact moment you left, so your earlier contributions can be identified. You can rejoin at any time.</p>
    <div class="actions">
      <button value="cancel" class="secondary" autofocus>Stay</button>
      <button value="confirm" class="danger">Leave</button>
    </div>
  </form>
</dialog>
<dialog id="confirm-purge" aria-labelledby="confirm-purge-title" aria-describedby="confirm-purge-text">
  <form method="dialog">
    <h2 id="confirm-purge-title">Remove your past contributions?</h2>
    <div id="confirm-purge-text">
      <p>This removes every contribution your activity made to shared and cohort recommendations before you left (<span id="confirm-purge-boundary"></span>), and subtracts exactly those counts and weights from them.</p>
      <p>It does not delete your own activity: it stays yours and keeps personalizing your own experience. It does not touch anyone else's contributions. It cannot be undone.</p>
      <p>Large histories take a while; until it has finished you cannot rejoin.</p>
    </div>
    <div class="actions">
      <button value="cancel" class="secondary" autofocus>Keep them</button>
      <button value="confirm" class="danger">Remove</button>
    </div>
  </form>
</dialog>
</body>
</html>
`;
}

/**
 * Serves /settings and its script. The page may be framed only by the allowed origins, which are
 * also the only ones whose postMessage it takes a token from.
 */
export function createSettingsPage(options: { parentOrigins: string[] }) {
  const page = html(options.parentOrigins);
  const security = {
    'content-security-policy':
      `default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'self' ${options.parentOrigins.join(' ')}`.trim(),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  return async (pathname: string, res: http.ServerResponse): Promise<boolean> => {
    if (pathname === '/settings') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...security });
      res.end(page);
      return true;
    }
    if (pathname === '/settings/settings.js') {
      const script = await readFile(scriptPath(), 'utf8').catch(() => null);
      res.writeHead(script === null ? 503 : 200, { 'content-type': 'text/javascript; charset=utf-8', ...security });
      res.end(script ?? 'console.error("The settings page script is not built: run npm run build:page");');
      return true;
    }
    return false;
  };
}
