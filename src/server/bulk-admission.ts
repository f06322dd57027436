import type { AsyncLocalStorage } from 'node:async_hooks';
import type http from 'node:http';
import type { Plugin } from 'graphql-yoga';

export interface BulkAdmissionOptions {
  /** A POST body longer than this is bulk (a batch of signals, say); shorter ones always enter. */
  requestBytes: number;
  /** Bulk requests being read and decoded at once. */
  maxInProgress: number;
  /** Bulk requests waiting at the door, their bodies unread; beyond this they are refused. */
  maxWaiting: number;
  /** Also refuse bulk requests while this says so (the signal queue is full). */
  saturated(): boolean;
  /** No bulk request enters while this says so (the event loop has no room); they wait or are refused. */
  busy(): boolean;
}

export interface AdmissionOutcome {
  /** `decoded` (bulk requests only) frees the request's place early, once its CPU-heavy part is done. */
  enter(decoded?: () => void): void;
  refuse(): void;
}

/**
 * The door for bulk requests, ahead of the body parser. Reading, parsing and coercing a batch is
 * the event loop's costliest work, so it is what must be bounded and refused under a flood, before
 * the body is read, not after. At most `maxInProgress` bulk requests are being decoded, and none
 * enters while the event loop is busy; up to `maxWaiting` more wait at the door unread (their bytes
 * stay in the socket, costing nothing); anything beyond, or anything while the signal queue is
 * full, is refused at once. A request
 * leaves the door once decoded: waiting for its commit costs no CPU and the signal queue bounds
 * that stage. Small requests (a status read, a leave, one signal) never wait behind a batch,
 * which keeps them fast while batches are shed. Envoy's circuit breakers (max requests, max
 * pending) have the same shape.
 */
export class BulkAdmission {
  private inProgress = 0;
  /** `res` null: an operation of a socket or stream (admitOperation), which leaves the line only by entering or being refused. */
  private readonly waiting: Array<{ res: http.ServerResponse | null; outcome: AdmissionOutcome }> = [];

  constructor(private readonly options: BulkAdmissionOptions) {}

  get waitingCount(): number {
    return this.waiting.length;
  }

  get inProgressCount(): number {
    return this.inProgress;
  }

  /** Enters now, later (when a bulk request ahead of it is decoded), or is refused. */
  admit(req: http.IncomingMessage, res: http.ServerResponse, outcome: AdmissionOutcome): void {
    if (req.method !== 'POST' || !(Number(req.headers['content-length']) > this.options.requestBytes)) return outcome.enter();
    this.line(res, outcome);
  }

  /**
   * The same door for an operation that came over a WebSocket (or another transport without a
   * request per operation), by the byte length of its message, before it is parsed: resolves to the
   * function that gives its place back (call it once its operation has run), or null when refused.
   */
  admitOperation(bytes: number): Promise<(() => void) | null> {
    if (!this.isBulkOperation(bytes)) return Promise.resolve(() => undefined);
    return new Promise((resolve) => this.line(null, { enter: (leave) => resolve(leave ?? (() => undefined)), refuse: () => resolve(null) }));
  }

  isBulkOperation(bytes: number): boolean {
    return bytes > this.options.requestBytes;
  }

  private line(res: http.ServerResponse | null, outcome: AdmissionOutcome): void {
    if (this.options.saturated()) return outcome.refuse();
    if (this.inProgress < this.options.maxInProgress && !this.options.busy()) return this.enter(res, outcome);
    if (this.waiting.length >= this.options.maxWaiting) return outcome.refuse();
    const ticket = { res, outcome };
    this.waiting.push(ticket);
    // A client that gives up while waiting leaves the line.
    res?.once('close', () => {
      const index = this.waiting.indexOf(ticket);
      if (index >= 0) this.waiting.splice(index, 1);
    });
  }

  private enter(res: http.ServerResponse | null, outcome: AdmissionOutcome): void {
    this.inProgress++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      this.inProgress--;
      this.next();
    };
    res?.once('close', leave);
    outcome.enter(leave);
  }

  /** Lets waiting requests in while there is room (called when one leaves, and when the loop has room again). */
  next(): void {
    while (this.inProgress < this.options.maxInProgress && this.waiting.length > 0 && !this.options.busy()) {
      const { res, outcome } = this.waiting.shift()!;
      if (this.options.saturated()) outcome.refuse();
      else this.enter(res, outcome);
    }
  }
}

/**
 * Marks a request decoded once its operation has run up to its first real wait: graphql-js
 * coerces the variables and runs the resolvers' synchronous part (validation, queueing the
 * signals) in the same turn as `execute`, so a setImmediate from onExecute fires after all of it.
 */
export function useBulkDecoded(scope: AsyncLocalStorage<{ decoded?: () => void }>): Plugin {
  return {
    onExecute() {
      const decoded = scope.getStore()?.decoded;
      if (decoded) setImmediate(decoded);
    },
  };
}
