import type { z } from 'zod';
import { auth, authInProduction } from './groups/auth.js';
import { database, databaseInProduction } from './groups/database.js';
import { downstream } from './groups/downstream.js';
import { fairShare } from './groups/fair-share.js';
import { webhooks } from './groups/webhooks.js';
import { graphql, requestBudget } from './groups/graphql.js';
import { bulk, derivedMetricsPort, http, metrics } from './groups/http.js';
import { cache, listener, privacySignals, subscriptions } from './groups/membership.js';
import { accessLog, telemetry } from './groups/observability.js';
import { purge } from './groups/purge.js';
import { serviceSettings, shutdown } from './groups/service.js';
import { signals } from './groups/signals.js';
import { group } from './setting.js';

/**
 * The whole configuration: the service's settings at the top, every other group under its key. A new
 * setting is one `setting(…)` line in its group; a new group is a file in groups/ and a line here.
 * Rules that need NODE_ENV and what production changes are here; each group keeps its own rules.
 */
const settings = {
  ...serviceSettings,
  http: http.schema,
  bulk: bulk.schema,
  metrics: metrics.schema,
  database: database.schema,
  graphql: graphql.schema,
  requestBudget: requestBudget.schema,
  fairShare: fairShare.schema,
  signals: signals.schema,
  listener: listener.schema,
  cache: cache.schema,
  subscriptions: subscriptions.schema,
  privacySignals: privacySignals.schema,
  purge: purge.schema,
  downstream: downstream.schema,
  webhooks: webhooks.schema,
  shutdown: shutdown.schema,
  auth: auth.schema,
  telemetry: telemetry.schema,
  accessLog: accessLog.schema,
};

/**
 * `needsDatabase` false: for tools that never connect (a token minted in production needs no DATABASE_URL).
 * `needsTokens` false: for tools that neither verify nor mint tokens (migrate: its Job's Secret holds no key).
 */
const whole = (needsDatabase: boolean, needsTokens = true) =>
  group(settings, (object) =>
    object
      // Each production rule only over a group that parsed: a broken one is not transformed (no auth.key).
      .superRefine(
        (config, ctx) => void (needsDatabase && config.env === 'production' && databaseInProduction(config.database, ctx)),
        parsed('database'),
      )
      .superRefine((config, ctx) => void (needsTokens && config.env === 'production' && authInProduction(config.auth, ctx)), parsed('auth'))
      .transform(({ graphql, database, metrics, ...config }) => {
        const development = config.env !== 'production';
        return {
          ...config,
          metrics: { ...metrics, port: metrics.port ?? derivedMetricsPort(config.http.port) },
          database: { ...database, migrateOnStart: database.migrateOnStart ?? development },
          graphql: {
            ...graphql,
            graphiql: graphql.graphiql ?? development,
            introspection: graphql.introspection ?? development,
            /** Production hides "did you mean" field suggestions from clients. */
            fieldSuggestions: development,
          },
        };
      }),
  );

export const configuration = whole(true);
export const configurationWithoutDatabase = whole(false);
export const configurationWithoutTokens = whole(true, false);

/** Runs a rule only when nothing under `key` failed (zod otherwise runs it over the unparsed input). */
function parsed(key: string): z.core.$ZodSuperRefineParams {
  return { when: (payload) => !payload.issues.some((issue) => issue.path?.[0] === key) };
}

/** The configuration every module receives, inferred from the settings. */
export interface Config extends z.output<typeof configuration.schema> {}
