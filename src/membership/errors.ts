/** A subscription refused by a cap: `perUser` (streams following one user) or `perInstance`. */
export class TooManySubscriptionsError extends Error {
  override name = 'TooManySubscriptionsError';
  constructor(
    readonly limit: 'perUser' | 'perInstance',
    readonly max: number,
  ) {
    super(
      limit === 'perInstance'
        ? `This instance follows its maximum of ${max} subscriptions; retry later.`
        : `At most ${max} subscriptions may follow one user; close one first.`,
    );
  }
}
