import type { Budget } from '../config/groups/fair-share.js';
import type { AppConfig } from '../config/config.js';
import type { AddressPrefixes } from './address-group.js';

/** The budgets by class, as the limiter and the request plugin use them. */
export interface FairShareConfig {
  enabled: boolean;
  user: Budget;
  service: Budget;
  admin: Budget;
  anonymous: Budget;
  /** The networks anonymous callers are grouped by. */
  anonymousPrefixes: AddressPrefixes;
  /** Named services' own budgets (FAIR_SHARE_SERVICES). */
  services: ReadonlyMap<string, Budget>;
  membership: Budget;
  /** The scope that makes a caller an admin. */
  adminScope: string;
  instances: number;
  syncMs: number;
}

export function fairShareConfig(config: AppConfig['fairShare'], adminScope: string): FairShareConfig {
  return {
    enabled: config.enabled,
    user: { capacity: config.userCapacity, rate: config.userRate },
    service: { capacity: config.serviceCapacity, rate: config.serviceRate },
    admin: { capacity: config.adminCapacity, rate: config.adminRate },
    anonymous: { capacity: config.anonymousCapacity, rate: config.anonymousRate },
    anonymousPrefixes: { ipv4: config.anonymousIpv4Prefix, ipv6: config.anonymousIpv6Prefix },
    services: config.services,
    membership: { capacity: config.membershipChanges, rate: config.membershipChanges / config.membershipWindowSeconds },
    adminScope,
    instances: config.instances,
    syncMs: config.syncMs,
  };
}
