import { Counter, type Registry } from 'prom-client';

/** Fair share (src/budgets): the points operations spent, and the points of those refused, by caller class. */
export function fairShareMetrics(registry: Registry) {
  return {
    admittedCost: new Counter<'class'>({
      name: 'community_fair_share_admitted_cost_total',
      help: "Points admitted against callers' budgets (an operation's charge: its cost, or the signals it writes when more), by class: user, service, admin, anonymous.",
      labelNames: ['class'] as const,
      registers: [registry],
    }),
    refusedCost: new Counter<'class'>({
      name: 'community_fair_share_refused_cost_total',
      help: 'Points of operations refused with 429 RATE_LIMITED (over the budget, or over the membership-change limit), by class.',
      labelNames: ['class'] as const,
      registers: [registry],
    }),
  };
}
