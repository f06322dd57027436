import { count, flag, group, milliseconds, setting } from '../setting.js';

/** The LISTEN session that keeps every instance's membership cache in step. */
export const listener = group(
  {
    heartbeatMs: setting('LISTENER_HEARTBEAT_MS', milliseconds.default(10_000), 'heartbeat period of the listener connection'),
    heartbeatTimeoutMs: setting('LISTENER_HEARTBEAT_TIMEOUT_MS', milliseconds.default(5_000), 'heartbeat (and connect) timeout'),
    backoffMinMs: setting(
      'LISTENER_BACKOFF_MIN_MS',
      milliseconds.default(100),
      'first reconnect delay (backoff is exponential, with full jitter)',
    ),
    backoffMaxMs: setting('LISTENER_BACKOFF_MAX_MS', milliseconds.default(10_000), 'longest reconnect delay'),
  },
  (settings) =>
    settings.superRefine((listener, ctx) => {
      if (listener.backoffMinMs > listener.backoffMaxMs) {
        ctx.addIssue({ code: 'custom', path: ['backoffMinMs'], message: 'must not exceed LISTENER_BACKOFF_MAX_MS' });
      }
    }),
);

export const cache = group({
  resyncMs: setting('CACHE_RESYNC_MS', milliseconds.default(60_000), 'period of the backstop resync of the membership cache'),
});

/** Caps on subscription streams (`communityLayerStatusChanged`, `communityPurgeProgress`), per followed user and per instance. */
export const subscriptions = group({
  perUser: setting(
    'SUBSCRIPTIONS_PER_USER_MAX',
    count(1, 1000).default(8),
    'subscription streams following one user (status and purge progress together), per instance',
  ),
  perInstance: setting(
    'SUBSCRIPTIONS_MAX',
    count(1, 1_000_000).default(10_000),
    'subscription streams per instance (status and purge progress together)',
  ),
});

/** Privacy signals a request may carry (docs/api.md, "Global Privacy Control"). */
export const privacySignals = group({
  globalPrivacyControlLeaves: setting(
    'GLOBAL_PRIVACY_CONTROL_LEAVES',
    flag.default(false),
    "`true`: a request with `Sec-GPC: 1` and a user's own token leaves that ACTIVE user first (reason GLOBAL_PRIVACY_CONTROL), once per user: a later rejoin stands",
  ),
});
