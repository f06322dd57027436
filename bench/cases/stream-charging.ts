import type { Case, Row } from '../case.js';
import { pageReader, reopeningReader } from '../feed-readers.js';
import { num } from '../format.js';

const LABEL = '23. fair share: change-feed events re-opening the stream vs paging, same budget, same window';
/**
 * Each reader's budget: 200 points at once, 100 a second (a page of 100 costs 101), well under what
 * a stream delivers on a loaded machine (about 700 events a second, uncharged), so the budget binds.
 */
const BUDGET = { capacity: 200, rate: 100 };
const HISTORY = 20_000;
/** Events the re-opener takes from each stream before opening it again (the took ~7,000 of 20,000). */
const PER_OPEN = 500;

/**
 * Issue 45's probe: two services with the same budget read the change feed for the same window, at
 * the same time, from one server process: one pages through it, the other opens the subscription
 * from the start, takes PER_OPEN events and opens it again. Each stream pays for every event it
 * delivers, so re-opening gets no more than paging: the ratio of their events.
 */
export const streamCharging: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    try {
      // History to replay: a leave of each of HISTORY users, written by SQL as an operator may.
      await db.query('SELECT leave_community_layer(g::text::u64) FROM generate_series(1, $1) g', [HISTORY]);
    } finally {
      await db.end();
    }
    const services = `pager=${BUDGET.capacity}/${BUDGET.rate},reopener=${BUDGET.capacity}/${BUDGET.rate}`;
    const processes = await cluster.startProcesses(url, 1, { FAIR_SHARE_SERVICES: services, FAIR_SHARE_INSTANCES: '1' });
    try {
      const target = processes.urls[0]!;
      const [pager, reopener] = await Promise.all([
        cluster.tokenFor('pager', 'community:feed'),
        cluster.tokenFor('reopener', 'community:feed'),
      ]);
      const seconds = Math.max(3, Math.min(20, sizes.durationSec * 1.4));
      const [paged, reopened] = await Promise.all([
        pageReader(target, pager, seconds),
        reopeningReader(target, reopener, seconds, PER_OPEN),
      ]);
      const ratio = reopened.events / Math.max(1, paged.events);
      const allowed = BUDGET.capacity + BUDGET.rate * seconds;
      const row: Row = {
        case: LABEL,
        figure: `${num(reopened.events)} events in ${num(reopened.opens)} stream opens`,
        ceiling: `paging ${num(paged.events)} events in ${num(paged.requests)} requests; the budget ${num(allowed)} points in ${num(seconds, 1)} s`,
        ratio,
        target: '≤ 1.2',
        met: ratio <= 1.2,
        details: { paged, reopened, budget: BUDGET, seconds, history: HISTORY, perOpen: PER_OPEN },
      };
      return [row];
    } finally {
      await processes.stop();
    }
  },
};
