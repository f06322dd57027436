import type { Cluster } from './cluster.js';
import { BUDGET, ENVIRONMENT, STEADY_PER_SEC } from './cases/fair-share-settings.js';
import { startFlood } from './flood.js';
import { openLoop } from './open-loop.js';
import { body, SIGNAL, type Workload } from './workload.js';

/**
 * The fair-share case's flood for `npm run bench:profile -- --only flood`: one user token at ten
 * times its budget beside the other users' steady load, so the profile shows what refusing costs.
 */
export const FLOOD_ENVIRONMENT = ENVIRONMENT;

export async function floodLoad(cluster: Cluster, url: string, workload: Workload, durationSec: number) {
  const token = await cluster.tokenFor('777777', 'none');
  const bodies = Array.from({ length: 1_000 }, () => body(SIGNAL, { input: workload.nextSignal() }));
  const probeBody = body('query ($userId: UInt64) { communityLayerStatus(userId: $userId) { status } }', { userId: workload.userIds[0] });
  const flood = await startFlood({ urls: [url], token, userId: '777777', pointsPerSec: 10 * BUDGET.rate, batchSize: 10 });
  const steady = await openLoop({
    url,
    token: cluster.token,
    bodies,
    ratePerSec: STEADY_PER_SEC,
    durationSec,
    timeoutMs: 10_000,
    probeBody,
  });
  const flooded = await flood.stop();
  return { requests: flooded.sent + steady.sent + steady.probeMs.length, durationSec, failed: flooded.other + steady.failures };
}
