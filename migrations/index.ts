import type { Migration } from 'kysely';
import * as membership from './0001_membership.js';
import * as signals from './0002_signals.js';
import * as boundary from './0003_boundary.js';
import * as membershipGuard from './0004_membership_guard.js';

/** Listed explicitly (not read from the folder) so they load the same under tsc, tsx and vitest. */
export const migrations: Record<string, Migration> = {
  '0001_membership': membership,
  '0002_signals': signals,
  '0003_boundary': boundary,
  '0004_membership_guard': membershipGuard,
};
