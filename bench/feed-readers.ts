/** Two ways to read the change feed within one budget, each for `seconds` (case 23). */

const PAGE = 'query ($after: String) { communityMembershipChangePage(after: $after, first: 100) { changes { cursor } endCursor hasMore } }';
const STREAM = JSON.stringify({ query: 'subscription { communityMembershipChanges { cursor } }' });

type Cost = { requestedQueryCost: number; throttleStatus: { currentlyAvailable: number; restoreRate: number } };

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const retryAfterMs = (response: Response) => Math.max(50, 1000 * Number(response.headers.get('retry-after') ?? 1));

/** Pages through the feed, from the start again at its end, waiting out each 429: the events it got. */
export async function pageReader(url: string, token: string, seconds: number): Promise<{ events: number; requests: number }> {
  const until = performance.now() + seconds * 1000;
  let after: string | null = null;
  let events = 0;
  let requests = 0;
  while (performance.now() < until) {
    requests++;
    const response: Response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: PAGE, variables: { after } }),
    });
    if (response.status === 429) {
      // As a client that reads `extensions.cost` waits: until the points it lacks have refilled, not a whole Retry-After.
      const { cost } = ((await response.json()) as { extensions: { cost: Cost } }).extensions;
      const lacking = cost.requestedQueryCost - cost.throttleStatus.currentlyAvailable;
      await wait(Math.min(Math.max(10, (1000 * lacking) / cost.throttleStatus.restoreRate), until - performance.now()));
      continue;
    }
    const page: { changes: unknown[]; endCursor: string | null; hasMore: boolean } = (
      (await response.json()) as {
        data: { communityMembershipChangePage: { changes: unknown[]; endCursor: string | null; hasMore: boolean } };
      }
    ).data.communityMembershipChangePage;
    events += page.changes.length;
    after = page.hasMore ? page.endCursor : null;
  }
  return { events, requests };
}

/**
 * The re-opener: opens the subscription from the start, reads `perOpen` events, drops it and
 * opens it again (waiting out a 429): the events it got, and how many streams it opened.
 */
export async function reopeningReader(
  url: string,
  token: string,
  seconds: number,
  perOpen: number,
): Promise<{ events: number; opens: number }> {
  const until = performance.now() + seconds * 1000;
  let events = 0;
  let opens = 0;
  while (performance.now() < until) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(0, until - performance.now()));
    try {
      const response = await fetch(url, {
        method: 'POST',
        signal: abort.signal,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
        body: STREAM,
      });
      if (response.status === 429) {
        await response.arrayBuffer();
        await wait(Math.min(retryAfterMs(response), until - performance.now()));
        continue;
      }
      opens++;
      let got = 0;
      let carry = '';
      for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
        const text = carry + chunk;
        const blocks = text.split('\n\n');
        carry = blocks.pop()!;
        const delivered = Math.min(blocks.filter((block) => block.startsWith('event: next')).length, perOpen - got);
        got += delivered;
        events += delivered;
        if (got >= perOpen) break;
      }
      abort.abort();
    } catch {
      // The window ended while a stream was open: what it delivered so far counts.
    } finally {
      clearTimeout(timer);
    }
  }
  return { events, opens };
}
