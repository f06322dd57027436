import { SCOPES } from '../auth/authenticate.js';
import type { Viewer } from '../auth/claims.js';
import { fairShareConfig, type FairShareConfig } from '../budgets/fair-share-config.js';
import { principalCache, type Principal } from '../budgets/principal.js';
import type { AppConfig } from '../config/config.js';

/** Who pays: the budgets, and each caller's principal, worked out once per token for the door and the charge alike. */
export interface Principals {
  readonly budgets: FairShareConfig;
  readonly of: (viewer: Viewer | null, address: string) => Principal;
}

export function fairSharePrincipals(config: AppConfig): Principals {
  const budgets = fairShareConfig(config.fairShare, SCOPES.admin);
  return { budgets, of: principalCache(budgets) };
}
