import type { Case } from './case.js';
import { leaveUsers } from './cluster.js';
import { createScratchTable } from './raw-signal.js';
import { createWorkload } from './workload.js';

type CaseArguments = Parameters<Case['run']>;

/** What both signal cases start from: a fresh database, one app, the LEFT share of users, the ceiling's table. */
export async function prepareSignalCase(cluster: CaseArguments[0], sizes: CaseArguments[1]) {
  const url = await cluster.freshDatabase();
  const app = await cluster.startApp(url);
  const db = await cluster.sqlClient(url);
  const workload = createWorkload(sizes.workload);
  await leaveUsers(db, workload.leftUserIds, [app]);
  await createScratchTable(db);
  return { url, app, db, workload, left: new Set(workload.leftUserIds) };
}
