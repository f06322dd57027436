/**
 * The example settings page: the signed-in user's standing in the community layer, live.
 * It needs a bearer token for the user: from the embedding app (postMessage or `#token=`), or, in
 * development, pasted into the form (the server prints one at start).
 */

import {
  SettingsClient,
  SettingsClientError,
  type LeaveEpisode as Episode,
  type Membership,
  type PurgeReceipt,
} from '@community-layer/settings-client';
import { downloadMyData } from './download.js';

const PURGE_RETRY_MS = 1000;
const TOKEN_KEY = 'community-layer-token';
const root = document.documentElement;
const endpoint = new URL(root.dataset['api'] ?? '/graphql', location.href).toString();
const parentOrigins = (root.dataset['parentOrigins'] ?? '').split(' ').filter(Boolean);

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const view = {
  status: element<HTMLParagraphElement>('status'),
  boundary: element<HTMLParagraphElement>('boundary'),
  leave: element<HTMLButtonElement>('leave'),
  rejoin: element<HTMLButtonElement>('rejoin'),
  history: element<HTMLTableSectionElement>('history-rows'),
  historyTable: element<HTMLTableElement>('history'),
  noHistory: element<HTMLParagraphElement>('no-history'),
  historyCount: element<HTMLParagraphElement>('history-count'),
  older: element<HTMLButtonElement>('older'),
  error: element<HTMLParagraphElement>('error'),
  live: element<HTMLParagraphElement>('live'),
  confirm: element<HTMLDialogElement>('confirm-leave'),
  purge: element<HTMLElement>('purge'),
  purgeStart: element<HTMLButtonElement>('purge-start'),
  purgeReceipt: element<HTMLDivElement>('purge-receipt'),
  purgeState: element<HTMLParagraphElement>('purge-state'),
  purgeDownstream: element<HTMLParagraphElement>('purge-downstream'),
  purgeProgress: element<HTMLProgressElement>('purge-progress'),
  purgeTargets: element<HTMLTableElement>('purge-targets'),
  purgeTargetRows: element<HTMLTableSectionElement>('purge-target-rows'),
  confirmPurge: element<HTMLDialogElement>('confirm-purge'),
  confirmPurgeBoundary: element<HTMLSpanElement>('confirm-purge-boundary'),
  download: element<HTMLButtonElement>('download'),
  downloadState: element<HTMLParagraphElement>('download-state'),
  tokenForm: element<HTMLFormElement>('token-form'),
  tokenInput: element<HTMLTextAreaElement>('token-input'),
};

let token: string | null = null;
const client = new SettingsClient({ url: endpoint, token: () => token ?? '' });
let closeStream: (() => void) | null = null;
/** The boundary shown while LEFT (null while ACTIVE); a running purge's progress stream, or a retry of reading its receipt. */
let boundaryNs: string | null = null;
let purgeRetry: ReturnType<typeof setTimeout> | null = null;
let closePurgeProgress: (() => void) | null = null;
/** Every leave shown, by leftAtNs: the newest page from each update plus the older pages asked for. */
const episodes = new Map<string, Episode>();

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'medium' });

function formatInstant(ns: string | null): string {
  if (ns === null) return '—';
  return dateTime.format(new Date(Number(BigInt(ns) / 1_000_000n)));
}

function render(membership: Membership): void {
  const left = membership.status === 'LEFT';
  root.dataset['status'] = membership.status;
  view.status.textContent = left
    ? 'You have left the community layer. Your activity only personalizes your own experience.'
    : 'You are part of the community layer. Your activity also improves shared recommendations.';
  view.boundary.hidden = !left;
  if (left && membership.leftAtNs) {
    view.boundary.replaceChildren('Left on ', timeElement(membership.leftAtNs, membership.leftAt), '.');
  }
  view.leave.hidden = left;
  view.rejoin.hidden = !left;
  const newlyLeft = left && membership.leftAtNs !== boundaryNs;
  boundaryNs = left ? membership.leftAtNs : null;
  view.purge.hidden = !left;
  if (newlyLeft) void loadPurge();
  if (!left) stopFollowingPurge();
  const oldest = membership.history[0];
  // Older pages stay shown while the newest page still joins them; after a gap (many leaves since
  // the last update) or a deletion, start again from the newest page.
  if (membership.leaveCount < episodes.size || (oldest && episodes.size > 0 && !episodes.has(oldest.leftAtNs))) episodes.clear();
  addEpisodes(membership.history, membership.leaveCount);
}

function addEpisodes(page: Episode[], total: number): void {
  for (const episode of page) episodes.set(episode.leftAtNs, episode);
  const newestFirst = [...episodes.values()].sort((x, y) => (BigInt(y.leftAtNs) > BigInt(x.leftAtNs) ? 1 : -1));
  view.history.replaceChildren(...newestFirst.map(historyRow));
  view.historyTable.hidden = newestFirst.length === 0;
  view.noHistory.hidden = newestFirst.length > 0;
  const more = newestFirst.length < total;
  view.older.hidden = !more;
  view.historyCount.hidden = !more;
  view.historyCount.textContent = `Showing the ${newestFirst.length} most recent of ${total} leaves.`;
}

/** The page before the oldest leave shown. */
async function showOlder(): Promise<void> {
  const oldest = [...episodes.keys()].reduce((x, y) => (BigInt(y) < BigInt(x) ? y : x));
  view.older.disabled = true;
  try {
    const page = await client.olderLeaves(oldest);
    addEpisodes(page.history, page.leaveCount);
    showError(null);
    (view.older.hidden ? view.historyTable : view.older).focus();
  } catch (error) {
    showError(explain(error));
    if (error instanceof SettingsClientError && error.code === 'UNAUTHENTICATED') askForToken();
  } finally {
    view.older.disabled = false;
  }
}

/** The newest receipt; followed live while its purge runs. */
async function loadPurge(): Promise<void> {
  stopFollowingPurge();
  try {
    showPurge(await client.latestPurge());
  } catch (error) {
    showError(explain(error));
    if (boundaryNs !== null) purgeRetry = setTimeout(() => void loadPurge(), PURGE_RETRY_MS);
  }
}

/** The running purge's progress, until it has FINISHED (the stream then completes by itself). */
function followPurge(): void {
  closePurgeProgress = client.watchPurge({
    next: showPurge,
    error: (error) => error.retryable || showError(explain(error)),
    state: (state) => {
      if (state === 'stopped') closePurgeProgress = null;
    },
  });
}

function stopFollowingPurge(): void {
  if (purgeRetry !== null) clearTimeout(purgeRetry);
  purgeRetry = null;
  closePurgeProgress?.();
}

function showPurge(receipt: PurgeReceipt | null): void {
  // A receipt from an earlier leave says nothing about what this leave's boundary left behind.
  const current = receipt !== null && receipt.boundaryNs === boundaryNs;
  view.purgeReceipt.hidden = receipt === null;
  view.purgeStart.hidden = current;
  if (receipt === null) return;
  root.dataset['purge'] = receipt.status;
  const running = receipt.status === 'RUNNING';
  view.purgeProgress.hidden = !running;
  view.purgeState.textContent = running
    ? `Removing your past contributions… ${receipt.removedSoFar} removed so far.`
    : receipt.foundNothing
      ? 'There was nothing left to remove: your past contributions had already been removed.'
      : `${current ? 'Your' : 'Last time, your'} past contributions were removed: ${receipt.removedSoFar} entries, weight ${receipt.weightRemoved}, on ${formatInstant(receipt.finishedAt === null ? null : isoToNs(receipt.finishedAt))}.`;
  const { total, done, failed } = receipt.downstream;
  view.purgeDownstream.hidden = total === 0;
  view.purgeDownstream.textContent = `Removed from ${done} of ${total} ${total === 1 ? 'system' : 'systems'} downstream${failed > 0 ? ` (${failed} reported a problem)` : ''}.`;
  view.purgeTargets.hidden = receipt.targets.length === 0;
  view.purgeTargetRows.replaceChildren(
    ...receipt.targets.map((target) => {
      const row = document.createElement('tr');
      for (const text of [
        target.target === 'community' ? 'Everyone' : `Cohort ${target.target}`,
        String(target.entries),
        String(target.weight),
      ]) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }),
  );
  if (running && boundaryNs !== null && closePurgeProgress === null) followPurge();
}

function isoToNs(iso: string): string {
  return String(BigInt(Date.parse(iso)) * 1_000_000n);
}

async function startPurge(): Promise<void> {
  view.purgeStart.disabled = true;
  try {
    const receipt = await client.purge();
    showError(null);
    showPurge(receipt);
    view.purgeReceipt.focus();
  } catch (error) {
    showError(explain(error));
    if (error instanceof SettingsClientError && error.code === 'UNAUTHENTICATED') askForToken();
  } finally {
    view.purgeStart.disabled = false;
  }
}

function timeElement(ns: string, iso: string | null): HTMLTimeElement {
  const time = document.createElement('time');
  time.dateTime = iso ?? '';
  time.dataset['ns'] = ns;
  time.textContent = formatInstant(ns);
  return time;
}

function historyRow(episode: Episode): HTMLTableRowElement {
  const row = document.createElement('tr');
  const cells = [
    timeElement(episode.leftAtNs, null),
    episode.rejoinedAtNs ? timeElement(episode.rejoinedAtNs, null) : 'still away',
    episode.gatedSignalTotal,
  ];
  for (const content of cells) {
    const cell = document.createElement('td');
    cell.append(content);
    row.append(cell);
  }
  return row;
}

function showError(message: string | null): void {
  view.error.textContent = message ?? '';
  view.error.hidden = message === null;
}

function explain(error: unknown): string {
  if (error instanceof SettingsClientError && error.code !== 'NETWORK') {
    if (error.code === 'UNAUTHENTICATED') return 'Your sign-in has expired or is not valid. Sign in again to manage this setting.';
    if (error.code === 'FORBIDDEN') return 'This account may not change this setting.';
    if (error.code === 'PURGE_IN_PROGRESS')
      return 'Your past contributions are still being removed. You can rejoin when that has finished.';
    if (error.code === 'NOT_LEFT') return 'Leave the community layer first; then you can remove your past contributions.';
    if (error.code === 'TOO_MANY_SUBSCRIPTIONS')
      return 'Too many open pages follow this setting live. Close one; this page retries by itself.';
    return `The service could not do that (${error.message}). Please try again.`;
  }
  return 'Cannot reach the service. Check your connection; the page retries by itself.';
}

async function act(change: () => Promise<Membership>, button: HTMLButtonElement, focusAfter: () => HTMLElement): Promise<void> {
  button.disabled = true;
  try {
    render(await change());
    showError(null);
    focusAfter().focus();
  } catch (error) {
    showError(explain(error));
    if (error instanceof SettingsClientError && error.code === 'UNAUTHENTICATED') askForToken();
  } finally {
    button.disabled = false;
  }
}

/** The live feed: the client reconnects by itself after anything retryable. */
function follow(): void {
  closeStream?.();
  closeStream = client.watchStatus({
    next(membership) {
      render(membership);
      showError(null);
    },
    state(state) {
      root.dataset['live'] = state === 'live' ? 'on' : state === 'connecting' ? 'connecting' : 'off';
      view.live.textContent = {
        connecting: 'Live updates: connecting…',
        live: 'Live updates: on.',
        reconnecting: 'Live updates: reconnecting…',
        stopped: 'Live updates: stopped.',
      }[state];
    },
    error(error) {
      if (error.code === 'TOO_MANY_SUBSCRIPTIONS') showError(explain(error));
      if (error.code !== 'UNAUTHENTICATED' && error.code !== 'FORBIDDEN') return;
      // The server ends the stream when the token expires; the embedding app may hand over a new one.
      showError(explain(error));
      askForToken();
      if (error.code === 'UNAUTHENTICATED') requestToken();
    },
  });
}

function askForToken(): void {
  view.tokenForm.hidden = false;
}

/** Tells the embedding app (if any) that the token is no longer accepted, so it can post a fresh one. */
function requestToken(): void {
  if (window.parent === window) return;
  for (const origin of parentOrigins) window.parent.postMessage({ type: 'community-layer-token-expired' }, origin);
}

/** A new token renews the live stream at once (the old one ends when its token expires). */
function useToken(value: string): void {
  const next = value.trim();
  if (next === token && root.dataset['live'] === 'on') return;
  token = next;
  sessionStorage.setItem(TOKEN_KEY, token);
  view.tokenForm.hidden = true;
  showError(null);
  follow();
}

function initialToken(): string | null {
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromFragment) {
    history.replaceState(null, '', location.pathname + location.search);
    return fromFragment;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

view.leave.addEventListener('click', () => view.confirm.showModal());
view.confirm.addEventListener('close', () => {
  if (view.confirm.returnValue === 'confirm') {
    void act(
      () => client.leave(),
      view.leave,
      () => view.rejoin,
    );
  } else {
    view.leave.focus();
  }
});
view.purgeStart.addEventListener('click', () => {
  view.confirmPurgeBoundary.textContent = `before ${formatInstant(boundaryNs)}`;
  view.confirmPurge.showModal();
});
view.confirmPurge.addEventListener('close', () => {
  if (view.confirmPurge.returnValue === 'confirm') void startPurge();
  else view.purgeStart.focus();
});
view.older.addEventListener('click', () => void showOlder());
view.download.addEventListener('click', () => void (token && downloadMyData(token, view.download, view.downloadState)));
view.rejoin.addEventListener(
  'click',
  () =>
    void act(
      () => client.rejoin(),
      view.rejoin,
      () => view.leave,
    ),
);
view.tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  if (view.tokenInput.value.trim()) useToken(view.tokenInput.value);
});
// An embedding app hands over (and refreshes) the user's token.
window.addEventListener('message', (event: MessageEvent<{ type?: string; token?: string }>) => {
  if (parentOrigins.includes(event.origin) && event.data?.type === 'community-layer-token' && event.data.token) {
    useToken(event.data.token);
  }
});

const startToken = initialToken();
if (startToken) useToken(startToken);
else {
  view.status.textContent = 'Sign in to see your community setting.';
  askForToken();
}
