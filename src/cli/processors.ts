import { parseArgs } from 'node:util';
import { listProcessors, registerProcessor, retireProcessor } from '../purge/acknowledgement.store.js';
import { DownstreamRefusal } from '../purge/downstream-refusal.js';
import { processorInputProblem } from '../purge/processor-input.js';
import { idArgument, positional, runDatabaseCommand, UsageError } from './database-command.js';
import { answerStandardOptions } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';

const USAGE = `usage: npm run processors -- <command>

The downstream processors that acknowledge purges (docs/downstream.md), on DATABASE_URL:
  register <subject> <name>   register one: <subject> is the sub of its service token (a client id,
                              never a UInt64), <name> what people see; it counts for purges from now on
  list                        every processor: id, subject, name, retired or not
  retire <id>                 it no longer counts, nor may it acknowledge; its acknowledgements stay
The same as the admin operations registerDownstreamProcessor, downstreamProcessors, retireDownstreamProcessor.`;

answerStandardOptions(USAGE);
failInOneLine('processors');

const { positionals } = parseArgs({ allowPositionals: true, options: {} });

await runDatabaseCommand(
  USAGE,
  async (db) => {
    const [command, ...rest] = positionals;
    if (command === 'register') {
      const subject = positional(rest, 0, 'subject');
      const name = positional(rest, 1, 'name');
      const problem = processorInputProblem(subject, name);
      if (problem) throw new UsageError(problem.message);
      const processor = await registerProcessor(db, subject, name);
      console.log(`registered processor ${processor.id} (${processor.subject}): its tokens need the scope community:purge-ack`);
      return 0;
    }
    if (command === 'list') {
      for (const p of await listProcessors(db))
        console.log(
          [p.id, p.subject, JSON.stringify(p.name), p.retired_at ? `retired ${p.retired_at.toISOString()}` : 'active'].join('\t'),
        );
      return 0;
    }
    if (command === 'retire') {
      const processor = await retireProcessor(db, idArgument(positional(rest, 0, 'id'), 'id'));
      if (!processor) {
        console.error(`no processor ${rest[0]}`);
        return 1;
      }
      console.log(`retired processor ${processor.id} (${processor.subject})`);
      return 0;
    }
    throw new UsageError(command === undefined ? 'missing <command>' : `unknown command ${command}`);
  },
  (error) => (error instanceof DownstreamRefusal ? `refused: ${error.message}` : null),
);
