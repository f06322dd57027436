/** The longest a leave waits behind the one before it (a leave whose execution never reported back). */
const LONGEST_WAIT_MS = 10_000;

/**
 * Leaves are never refused, so a caller past its budget who keeps leaving must not get more of the
 * server for it: its leaves beyond the budget wait in line (per caller and instance), each for the
 * one before and then for its points (FairShare.takeWhenAvailable). So a flood of leaves gets the
 * budget's rate and one timer, and a person whose budget was spent waits for one leave's points
 * (55 ms with the default user budget).
 */
export class LeaveLine {
  private readonly tails = new Map<string, Promise<void>>();

  /** Resolves once the caller's earlier leaves here are done, to the function that says this one is. */
  join(key: string): Promise<() => void> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return before.then(() => {
      const timer = setTimeout(done, LONGEST_WAIT_MS).unref();
      return () => {
        clearTimeout(timer);
        done();
      };
    });
  }
}
