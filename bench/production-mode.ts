/**
 * The bench measures the service as teams run it: every server, those in the bench's own event loop
 * (apps, bare Yoga) and the processes it starts, runs with NODE_ENV=production. Libraries read it
 * once, as they load (graphql-js then drops its development-only `instanceOf` checks), so each bench
 * entry imports this module first, before anything that imports graphql. Tests keep NODE_ENV=test.
 */
process.env.NODE_ENV = 'production';

/** What every server a case starts is configured with, under any settings of the case's own. */
export const PRODUCTION = { NODE_ENV: 'production' } as const;
