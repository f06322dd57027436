import type { AppConfig } from '../config/config.js';
import type { InstanceDatabase } from '../db/instance-database.js';
import type { ChannelListener } from '../db/listen/channel-listener.js';
import { checkListenSession } from '../db/listen/listen-check.js';
import { sessionName } from '../db/session-names.js';
import type { MembershipSync } from '../membership/cache/membership-sync.js';
import type { Part } from '../util/lifecycle.js';

export interface ListenerPartsOptions {
  config: AppConfig;
  connections: InstanceDatabase;
  listener: ChannelListener;
  membershipCache: MembershipSync;
  instanceId: string;
}

/** The listener (after checking its session can LISTEN) and the cache's backstop, which follow membership. */
export function listenerParts({ config, connections, listener, membershipCache, instanceId }: ListenerPartsOptions): Part[] {
  return [
    {
      name: 'listener',
      async start() {
        await checkListenSession({
          endpoint: connections.listenEndpoint,
          applicationName: sessionName('listen check', instanceId),
          timeoutMs: config.listener.heartbeatTimeoutMs,
          db: connections.database.db,
        });
        await listener.start(); // the cache is loaded once it resolves
      },
      stop: () => listener.stop(),
    },
    { name: 'membership backstop', start: () => membershipCache.start(), stop: () => membershipCache.stop() },
  ];
}
