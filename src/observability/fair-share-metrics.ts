import { Counter, type Registry } from 'prom-client';

type Class = 'user' | 'service' | 'admin' | 'anonymous';

/**
 * Fair share (src/budgets): the points operations spent, and the points of those refused, by caller
 * class. Every request counts here, so a count is a plain addition; the counters take the sums when
 * scraped (prom-client's label hashing per request was a fifth of the limiter's own CPU).
 */
export function fairShareMetrics(registry: Registry) {
  const counter = (name: string, help: string) => {
    const pending = new Map<Class, number>();
    new Counter<'class'>({
      name,
      help,
      labelNames: ['class'] as const,
      registers: [registry],
      collect() {
        for (const [cls, points] of pending) if (points > 0) this.inc({ class: cls }, points);
        pending.clear();
      },
    });
    return (cls: Class, points: number) => pending.set(cls, (pending.get(cls) ?? 0) + points);
  };
  return {
    admitted: counter(
      'community_fair_share_admitted_cost_total',
      "Points admitted against callers' budgets (an operation's charge: its cost, or the signals it writes when more), by class: user, service, admin, anonymous.",
    ),
    refused: refusals(
      counter(
        'community_fair_share_refused_cost_total',
        'Points of operations refused with 429 RATE_LIMITED (over the budget, or over the membership-change limit), by class.',
      ),
      counter(
        'community_fair_share_refusals_total',
        'Operations (or requests refused at the door) refused with 429 RATE_LIMITED, by class.',
      ),
    ),
  };
}

/** A refusal counts its points and itself. */
function refusals(points: (cls: Class, points: number) => void, count: (cls: Class, points: number) => void) {
  return (cls: Class, cost: number) => {
    points(cls, cost);
    count(cls, 1);
  };
}
