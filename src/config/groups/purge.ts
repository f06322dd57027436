import { count, group, milliseconds, setting } from '../setting.js';

export const purge = group({
  chunkSize: setting(
    'PURGE_CHUNK_SIZE',
    count(1, 100_000).default(25_000),
    'signals (each with its cohort entries) removed per purge transaction',
  ),
  chunkPauseMs: setting(
    'PURGE_CHUNK_PAUSE_MS',
    count(0, 60_000).default(0),
    'pause between purge chunks (leaves the database more room for other work)',
  ),
  pollMs: setting(
    'PURGE_POLL_MS',
    milliseconds.default(1_000),
    'how often an idle instance looks for purges to run (requested elsewhere, or left by a crash)',
  ),
});
