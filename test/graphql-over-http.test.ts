import { serverAudits } from 'graphql-http';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { useCluster } from './support/harness.js';

let app: App;
useCluster([{}], (cluster) => (app = cluster.apps[0]!));

/** The audits of graphql-http (the GraphQL-over-HTTP reference implementation), against the real server. */
describe('graphql-http server audits', () => {
  const audits = serverAudits({ url: () => app.url });
  const level = (name: string) => /^(MUST|SHOULD|MAY)/.exec(name)?.[1] ?? 'MAY';

  it('runs every audit', () => {
    expect(audits.filter((audit) => level(audit.name) === 'MUST').length).toBeGreaterThanOrEqual(13);
    expect(audits.filter((audit) => level(audit.name) === 'SHOULD').length).toBeGreaterThanOrEqual(23);
  });

  it.each(audits.filter((audit) => level(audit.name) !== 'MAY').map((audit) => [audit.name, audit] as const))(
    '%s',
    async (_name, audit) => {
      const result = await audit.fn();
      expect(result.status, result.status === 'ok' ? '' : `${result.reason}`).toBe('ok');
    },
  );
});
