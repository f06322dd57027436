import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CONSENT_REASONS, consentProblem, type Consent, type ConsentReason } from '../membership/consent.js';
import { MAX_BULK_MEMBERSHIP_CHANGES, type BulkMembershipChange } from '../membership/memberships.js';
import { createLogger } from '../observability/logger.js';
import { runDatabaseCommand, UsageError } from './database-command.js';
import { answerStandardOptions } from './command-line.js';
import { IdFileError, idsOfFile } from './id-file.js';
import { offlineMemberships } from './offline-memberships.js';
import { failInOneLine } from './one-line-failure.js';

const USAGE = `usage: npm run memberships -- <leave|rejoin> --file <ids.txt> [--reason ADMIN] [--reason-text "<why>"] [--policy-version <v>]

Leaves or rejoins many users on DATABASE_URL, each exactly as leaveCommunityLayer or
rejoinCommunityLayer would (its own boundary, history entry, change-feed event and webhook), in
calls of at most ${MAX_BULK_MEMBERSHIP_CHANGES} users, one transaction per lock bucket (docs/operations.md):
  --file <path>            one user id per line; blank lines and # comments are skipped. A bad or
                           repeated id refuses the whole file, naming its lines: nothing is written
  --reason <reason>        ${CONSENT_REASONS.join(', ')} (default ADMIN)
  --reason-text <text>     why, in words (1–500 characters)
  --policy-version <v>     the privacy policy version in force (1–64 characters)
Prints "userId outcome [code]" per user (CHANGED, UNCHANGED, REFUSED) and a summary on stderr;
exits 1 if any user was refused. Running the same file again is safe: done users answer UNCHANGED.`;

answerStandardOptions(USAGE);
failInOneLine('memberships');

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    file: { type: 'string' },
    reason: { type: 'string', default: 'ADMIN' },
    'reason-text': { type: 'string' },
    'policy-version': { type: 'string' },
  },
});

function consentArguments(): Consent {
  if (!(CONSENT_REASONS as readonly string[]).includes(values.reason)) throw new UsageError(`unknown reason ${values.reason}`);
  const consent = {
    reason: values.reason as ConsentReason,
    reasonText: values['reason-text'] ?? null,
    policyVersion: values['policy-version'] ?? null,
  };
  const problem = consentProblem(consent);
  if (problem) throw new UsageError(problem[1]);
  return consent;
}

await runDatabaseCommand(
  USAGE,
  async (db, config) => {
    const [action, ...rest] = positionals;
    if (action !== 'leave' && action !== 'rejoin')
      throw new UsageError(action === undefined ? 'missing <leave|rejoin>' : `unknown command ${action}`);
    if (rest.length > 0) throw new UsageError(`unknown argument ${rest[0]}`);
    if (!values.file) throw new UsageError('name the file of ids with --file');
    const consent = consentArguments();
    const ids = idsOfFile(values.file, await readFile(values.file, 'utf8'));
    const memberships = offlineMemberships(db, createLogger(config));
    const total = { changed: 0, unchanged: 0, refused: 0 };
    for (let from = 0; from < ids.length; from += MAX_BULK_MEMBERSHIP_CHANGES) {
      const chunk = ids.slice(from, from + MAX_BULK_MEMBERSHIP_CHANGES);
      const answer: BulkMembershipChange =
        action === 'leave' ? await memberships.leaveMany(chunk, consent) : await memberships.rejoinMany(chunk, consent);
      // Printed per call, so a run cut off later still shows what was done.
      console.log(answer.results.map((r) => [r.userId, r.outcome, ...(r.refusal ? [r.refusal.code] : [])].join(' ')).join('\n'));
      total.changed += answer.changed;
      total.unchanged += answer.unchanged;
      total.refused += answer.refused;
    }
    console.error(`${action}: ${ids.length} users, ${total.changed} changed, ${total.unchanged} unchanged, ${total.refused} refused`);
    return total.refused > 0 ? 1 : 0;
  },
  (error) => (error instanceof IdFileError ? error.message : null),
);
