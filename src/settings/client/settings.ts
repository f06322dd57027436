/**
 * The example settings page: the signed-in user's standing in the community layer, live.
 * It needs a bearer token for the user: from the embedding app (postMessage or `#token=`), or, in
 * development, pasted into the form (the server prints one at start).
 */

interface Episode {
  leftAtNs: string;
  leftAt: string | null;
  rejoinedAtNs: string | null;
  /** A decimal string: exact at any size. */
  gatedSignalTotal: string;
}

interface Membership {
  userId: string;
  status: 'ACTIVE' | 'LEFT';
  leftAtNs: string | null;
  leftAt: string | null;
  leaveCount: number;
  /** The newest page of leaves, oldest first. */
  history: Episode[];
}

interface PurgeReceipt {
  purgeId: string;
  status: 'RUNNING' | 'FINISHED';
  boundaryNs: string;
  finishedAt: string | null;
  removedSoFar: number;
  weightRemoved: number;
  foundNothing: boolean;
  targets: { target: string; entries: number; weight: number }[];
  /** The registered downstream systems: how many report the purge done. */
  downstream: { total: number; done: number; failed: number };
}

interface GraphQLError {
  message: string;
  extensions?: { code?: string; requestId?: string };
}

class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** The operations of operations.graphql, sent by hash. */
type Operation = 'SettingsLeave' | 'SettingsRejoin' | 'SettingsWatch' | 'SettingsOlderLeaves' | 'SettingsLatestPurge' | 'SettingsPurge';

const PURGE_POLL_MS = 1000;
const TOKEN_KEY = 'community-layer-token';
const root = document.documentElement;
const endpoint = new URL(root.dataset['api'] ?? '/graphql', location.href).toString();
const parentOrigins = (root.dataset['parentOrigins'] ?? '').split(' ').filter(Boolean);
/** Operation name → trusted-document hash (operations.graphql, hashed at build time; the server fills this in). */
const documents = JSON.parse(root.dataset['documents'] ?? '{}') as Partial<Record<Operation, string>>;

/** A request body naming a trusted document by its hash instead of sending its text. */
function operationBody(name: Operation, variables: Record<string, unknown> = {}): string {
  return JSON.stringify({ operationName: name, variables, extensions: { persistedQuery: { version: 1, sha256Hash: documents[name] } } });
}

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
  tokenForm: element<HTMLFormElement>('token-form'),
  tokenInput: element<HTMLTextAreaElement>('token-input'),
};

let token: string | null = null;
let stream: AbortController | null = null;
let retryDelay = 500;
/** The boundary shown while LEFT (null while ACTIVE), and the pending receipt poll. */
let boundaryNs: string | null = null;
let purgePoll: ReturnType<typeof setTimeout> | null = null;
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
  if (!left && purgePoll !== null) {
    clearTimeout(purgePoll);
    purgePoll = null;
  }
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
    const page = (await request('SettingsOlderLeaves', { before: oldest })) as unknown as Pick<Membership, 'leaveCount' | 'history'>;
    addEpisodes(page.history, page.leaveCount);
    showError(null);
    (view.older.hidden ? view.historyTable : view.older).focus();
  } catch (error) {
    showError(explain(error));
    if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') askForToken();
  } finally {
    view.older.disabled = false;
  }
}

/** The newest receipt; polled while its purge runs. */
async function loadPurge(): Promise<void> {
  if (purgePoll !== null) clearTimeout(purgePoll);
  purgePoll = null;
  try {
    const receipts = (await request('SettingsLatestPurge')) as unknown as PurgeReceipt[];
    showPurge(receipts[0] ?? null);
  } catch (error) {
    showError(explain(error));
    if (boundaryNs !== null) purgePoll = setTimeout(() => void loadPurge(), PURGE_POLL_MS);
  }
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
      for (const text of [target.target === 'community' ? 'Everyone' : `Cohort ${target.target}`, String(target.entries), String(target.weight)]) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }),
  );
  if (running && boundaryNs !== null) purgePoll = setTimeout(() => void loadPurge(), PURGE_POLL_MS);
}

function isoToNs(iso: string): string {
  return String(BigInt(Date.parse(iso)) * 1_000_000n);
}

async function startPurge(): Promise<void> {
  view.purgeStart.disabled = true;
  try {
    const receipt = (await request('SettingsPurge')) as unknown as PurgeReceipt;
    showError(null);
    showPurge(receipt);
    view.purgeReceipt.focus();
  } catch (error) {
    showError(explain(error));
    if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') askForToken();
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
  if (error instanceof ApiError) {
    if (error.code === 'UNAUTHENTICATED') return 'Your sign-in has expired or is not valid. Sign in again to manage this setting.';
    if (error.code === 'FORBIDDEN') return 'This account may not change this setting.';
    if (error.code === 'PURGE_IN_PROGRESS') return 'Your past contributions are still being removed. You can rejoin when that has finished.';
    if (error.code === 'NOT_LEFT') return 'Leave the community layer first; then you can remove your past contributions.';
    if (error.code === 'TOO_MANY_SUBSCRIPTIONS') return 'Too many open pages follow this setting live. Close one; this page retries by itself.';
    return `The service could not do that (${error.message}). Please try again.`;
  }
  return 'Cannot reach the service. Check your connection; the page retries by itself.';
}

async function request(operation: Operation, variables: Record<string, unknown> = {}): Promise<Membership> {
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: operationBody(operation, variables),
    });
  } catch {
    throw new ApiError('network', 'NETWORK');
  }
  const body = (await response.json().catch(() => ({}))) as { data?: Record<string, Membership>; errors?: GraphQLError[] };
  const failure = body.errors?.[0];
  if (failure) throw new ApiError(failure.message, failure.extensions?.code ?? 'ERROR');
  const result = body.data && Object.values(body.data)[0];
  if (!result) throw new ApiError(`HTTP ${response.status}`, 'ERROR');
  return result;
}

async function act(operation: Operation, button: HTMLButtonElement, focusAfter: () => HTMLElement): Promise<void> {
  button.disabled = true;
  try {
    render(await request(operation));
    showError(null);
    focusAfter().focus();
  } catch (error) {
    showError(explain(error));
    if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') askForToken();
  } finally {
    button.disabled = false;
  }
}

/** The live feed: GraphQL over server-sent events, read from a fetch stream (it carries the token). */
async function follow(): Promise<void> {
  stream?.abort();
  const controller = new AbortController();
  stream = controller;
  view.live.textContent = 'Live updates: connecting…';
  root.dataset['live'] = 'connecting';
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: operationBody('SettingsWatch'),
    });
    if (!response.ok || !response.body) {
      // A refusal (e.g. TOO_MANY_SUBSCRIPTIONS) still carries its GraphQL error as an event.
      const failure = eventError(await response.text().catch(() => ''));
      throw new ApiError(failure?.message ?? `HTTP ${response.status}`, failure?.extensions?.code ?? 'ERROR');
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        onEvent(buffer.slice(0, boundary));
        buffer = buffer.slice(boundary + 2);
      }
    }
    throw new ApiError('stream ended', 'NETWORK');
  } catch (error) {
    if (controller.signal.aborted) return;
    root.dataset['live'] = 'off';
    if (error instanceof ApiError && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN')) {
      // The server ends the stream when the token expires; the embedding app may hand over a new one.
      view.live.textContent = 'Live updates: stopped.';
      showError(explain(error));
      askForToken();
      if (error.code === 'UNAUTHENTICATED') requestToken();
      return;
    }
    if (error instanceof ApiError && error.code === 'TOO_MANY_SUBSCRIPTIONS') showError(explain(error));
    view.live.textContent = 'Live updates: reconnecting…';
    setTimeout(() => void follow(), retryDelay);
    retryDelay = Math.min(retryDelay * 2, 15_000);
  }
}

type EventMessage = { data?: { communityLayerStatusChanged: Membership }; errors?: GraphQLError[] };

function eventMessage(block: string): EventMessage | null {
  const data = /^data: ?(.*)$/m.exec(block)?.[1];
  return data ? (JSON.parse(data) as EventMessage) : null;
}

function eventError(body: string): GraphQLError | undefined {
  return body
    .split('\n\n')
    .map((block) => eventMessage(block)?.errors?.[0])
    .find(Boolean);
}

function onEvent(block: string): void {
  const message = eventMessage(block);
  if (!message) return;
  const failure = message.errors?.[0];
  if (failure) throw new ApiError(failure.message, failure.extensions?.code ?? 'ERROR');
  if (!message.data) return;
  render(message.data.communityLayerStatusChanged);
  showError(null);
  retryDelay = 500;
  view.live.textContent = 'Live updates: on.';
  root.dataset['live'] = 'on';
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
  void follow();
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
    void act('SettingsLeave', view.leave, () => view.rejoin);
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
view.rejoin.addEventListener('click', () => void act('SettingsRejoin', view.rejoin, () => view.leave));
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
