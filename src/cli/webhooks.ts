import { parseArgs } from 'node:util';
import type { MembershipEventKind } from '../db/schema.js';
import { replayDelivery } from '../webhooks/replay-delivery.js';
import { listDeliveries } from '../webhooks/delivery.store.js';
import { DestinationPolicy } from '../webhooks/destination-policy.js';
import { disableEndpoint, enableEndpoint, listEndpoints, registerEndpoint } from '../webhooks/endpoint.store.js';
import type { WebhookEndpoint } from '../webhooks/webhook-records.js';
import { idArgument, positional, runDatabaseCommand, UsageError } from './database-command.js';
import { answerStandardOptions } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';

const KINDS = ['LEFT', 'REJOINED', 'PURGE_REQUESTED', 'PURGE_FINISHED'] as const satisfies readonly MembershipEventKind[];

const USAGE = `usage: npm run webhooks -- <command>

Webhook endpoints and their deliveries (docs/downstream.md), on DATABASE_URL:
  register <url> --kinds LEFT,PURGE_FINISHED   register an endpoint; prints its signing secret (once)
  list                                         every endpoint: id, url, kinds, failures, disabled reason
  disable <id> --reason "<why>"                stop delivering to it (its pending deliveries are skipped)
  enable <id>                                  deliver again, with a clean failure count; replays what it missed
  deliveries <endpoint id> [--last 20]         its deliveries, newest first
  replay <delivery id>                         deliver again, same webhook-id, fresh retry period
Kinds: ${KINDS.join(', ')}. The same as the admin operations of the GraphQL API.`;

answerStandardOptions(USAGE);
failInOneLine('webhooks');

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { kinds: { type: 'string' }, reason: { type: 'string' }, last: { type: 'string', default: '20' } },
});

const describe = (e: WebhookEndpoint) =>
  [
    e.id,
    e.url,
    e.event_kinds.join(','),
    `${e.consecutive_failures} failures`,
    e.disabled_reason ? `disabled: ${e.disabled_reason}` : 'enabled',
  ].join('\t');

function kindsArgument(text: string | undefined): MembershipEventKind[] {
  const kinds = (text ?? '').split(',').filter(Boolean);
  const unknown = kinds.find((kind) => !(KINDS as readonly string[]).includes(kind));
  if (kinds.length === 0 || unknown !== undefined)
    throw new UsageError(unknown ? `unknown kind ${unknown}` : 'name at least one kind with --kinds');
  return [...new Set(kinds)] as MembershipEventKind[];
}

await runDatabaseCommand(
  USAGE,
  async (db, config) => {
    const [command, ...rest] = positionals;
    const found = (what: string, value: unknown): number => {
      if (value) return 0;
      console.error(`no ${what} ${rest[0]}`);
      return 1;
    };
    switch (command) {
      case 'register': {
        const url = positional(rest, 0, 'url');
        // The same rule as registerWebhookEndpoint: no user info, no internal address unless allowed.
        const refusal = new DestinationPolicy(config.webhooks.allowedDestinations).refusal(url);
        if (refusal !== null) throw new UsageError(`<url>: ${refusal}`);
        const endpoint = await registerEndpoint(db, url, kindsArgument(values.kinds));
        console.log(`registered endpoint ${endpoint.id}\nsecret ${endpoint.secret}`);
        return 0;
      }
      case 'list':
        for (const endpoint of await listEndpoints(db)) console.log(describe(endpoint));
        return 0;
      case 'disable': {
        const reason = values.reason?.trim();
        if (!reason) throw new UsageError('say why with --reason');
        const endpoint = await disableEndpoint(db, idArgument(positional(rest, 0, 'id'), 'id'), reason);
        if (endpoint) console.log(describe(endpoint));
        return found('endpoint', endpoint);
      }
      case 'enable': {
        const endpoint = await enableEndpoint(db, idArgument(positional(rest, 0, 'id'), 'id'));
        if (endpoint) console.log(describe(endpoint));
        return found('endpoint', endpoint);
      }
      case 'deliveries': {
        const last = Number(values.last);
        if (!Number.isInteger(last) || last < 1 || last > 100) throw new UsageError('--last must be 1–100');
        for (const d of await listDeliveries(db, idArgument(positional(rest, 0, 'endpoint id'), 'endpoint id'), last)) {
          console.log(
            [d.id, `msg_${d.event_position}`, d.status, `${d.attempts} attempts`, d.last_status_code ?? '-', d.last_error ?? ''].join('\t'),
          );
        }
        return 0;
      }
      case 'replay': {
        const delivery = await replayDelivery(db, idArgument(positional(rest, 0, 'delivery id'), 'delivery id'));
        if (delivery) console.log(`delivery ${delivery.id} is PENDING again (msg_${delivery.event_position})`);
        return found('delivery', delivery);
      }
      default:
        throw new UsageError(command === undefined ? 'missing <command>' : `unknown command ${command}`);
    }
  },
  () => null,
);
