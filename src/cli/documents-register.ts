import { connectDatabase } from '../db/database.js';
import { persistedDocuments } from '../db/persisted-documents.js';
import { readManifestFiles } from '../graphql/trusted-documents/manifest-files.js';
import { createLogger } from '../observability/logger.js';
import { answerStandardOptions } from './command-line.js';
import { failInOneLine } from './one-line-failure.js';
import { readConfigOrExit } from './read-config.js';

answerStandardOptions(
  `usage: npm run documents:register -- <manifest.json> [...]\n\nRegisters persisted documents (Apollo manifest or { "id": "document" } files) in the shared registry on DATABASE_URL.`,
);
failInOneLine('documents:register');

/**
 * `npm run documents:register -- manifest.json [...]`: an operator registers a team's persisted
 * documents (Apollo manifest or plain `{ "id": "document" }` files) in the shared registry, where
 * every instance finds them, in `only` mode too. Ids are taken as the files give them: Relay's and
 * codegen's are not all sha256 of the text. An id already naming another document is refused.
 */
const files = process.argv.slice(2).filter((argument) => argument !== '--');
if (files.length === 0) {
  console.error('usage: npm run documents:register -- <manifest.json> [...]');
  process.exit(2);
}
const config = readConfigOrExit();
if (!config.database.url) {
  console.error('DATABASE_URL: set it to the database the servers use');
  process.exit(2);
}
const documents = readManifestFiles(process.cwd(), files);
const database = connectDatabase({ url: config.database.url, poolMax: 1, logger: createLogger(config) });
const registry = persistedDocuments(database.db, config.graphql.apqMaxDocuments);
const counts = { stored: 0, exists: 0, conflict: 0, full: 0 };
try {
  for (const { id, body } of documents) {
    const outcome = await registry.register(id, body, 'operator');
    counts[outcome]++;
    if (outcome === 'conflict') console.error(`refused ${id}: this id already names another document`);
  }
} finally {
  await database.close();
}
console.log(`registered ${counts.stored}, already registered ${counts.exists}, refused ${counts.conflict}`);
process.exit(counts.conflict > 0 ? 1 : 0);
