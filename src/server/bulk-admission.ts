import type http from 'node:http';
import { receiveBody, withBody } from './received-body.js';

export interface BulkAdmissionOptions {
  /** A POST body longer than this is bulk (a batch of signals, say); shorter ones always enter. */
  requestBytes: number;
  /** Bulk requests being read and decoded at once. */
  maxInProgress: number;
  /** Bulk requests at the door besides those: bodies arriving, or arrived and waiting for a place; beyond this they are refused. */
  maxWaiting: number;
  /** Places (in progress or waiting) one client address may hold; 0: no cap. */
  maxPerAddress: number;
  /** Places one credential (bearer token) may hold; 0: no cap. */
  maxPerCredential: number;
  /** How long an admitted bulk request may take to send its body; then 408 and its place is free. */
  bodyTimeoutMs: number;
  /** Also refuse bulk requests while this says so (the signal queue is full). */
  saturated(): boolean;
  /** No bulk request enters while this says so (the event loop has no room); they wait or are refused. */
  busy(): boolean;
}

/** Who holds a place: the peer's address and the credential it sent. */
export interface BulkClient {
  address: string;
  credential: string;
}

export interface AdmissionOutcome {
  /**
   * `decoded` (bulk requests only) frees the request's place early, once its CPU-heavy part is
   * done; `received` is the request to hand on, its body already read (bulk HTTP requests only).
   */
  enter(decoded?: () => void, received?: http.IncomingMessage): void;
  refuse(): void;
  /** The body did not arrive within `bodyTimeoutMs` (408). */
  timeOut(): void;
}

/** `received` and `res` null: an operation of a socket (admitOperation), which leaves the line only by entering or being refused. */
interface Ticket {
  received: http.IncomingMessage | null;
  res: http.ServerResponse | null;
  client: BulkClient;
  outcome: AdmissionOutcome;
}

/**
 * The door for bulk requests, ahead of the body parser. Reading, parsing and coercing a batch is
 * the event loop's costliest work, so it is what must be bounded and refused under a flood, before
 * anything is parsed, not after. At most `maxInProgress` bulk requests are being decoded, and none
 * enters while the event loop is busy; up to `maxWaiting` more are at the door, their bodies
 * arriving (read into memory, so at most `maxInProgress + maxWaiting` bodies of the body limit) or
 * arrived and waiting; anything beyond, or anything while the signal queue is full, is refused at
 * once, its body unread. A place to decode is taken only once the body is whole, so a slow body
 * delays no one else's batch. A request leaves the door once decoded: waiting for its commit costs
 * no CPU and the signal queue bounds that stage. Small requests (a status read, a leave, one signal)
 * never wait behind a batch, which keeps them fast while batches are shed. Envoy's circuit
 * breakers (max requests, max pending) have the same shape.
 *
 * Against slow and hostile clients: an admitted request must send its whole body within
 * `bodyTimeoutMs` (a trickle would hold its place in the line for as long as it liked), and one
 * address or one credential holds only so many places, so it cannot fill the line for everyone else.
 */
export class BulkAdmission {
  private inProgress = 0;
  private receiving = 0;
  private readonly waiting: Ticket[] = [];
  private readonly held = new Map<string, number>();

  constructor(private readonly options: BulkAdmissionOptions) {}

  /** At the door, not decoding: bodies arriving, or arrived and waiting for a place. */
  get waitingCount(): number {
    return this.receiving + this.waiting.length;
  }

  get inProgressCount(): number {
    return this.inProgress;
  }

  /** Bulk: a POST whose declared body is over `requestBytes`. */
  isBulk(req: http.IncomingMessage): boolean {
    return req.method === 'POST' && Number(req.headers['content-length']) > this.options.requestBytes;
  }

  /** Once its body has arrived, enters now or later (when a bulk request ahead of it is decoded); or is refused, or times out. */
  admit(req: http.IncomingMessage, res: http.ServerResponse, client: BulkClient, outcome: AdmissionOutcome): void {
    if (!this.isBulk(req)) return outcome.enter();
    if (this.full() || !this.hold(client)) return outcome.refuse();
    res.once('close', () => this.release(client));
    this.receiving++;
    void receiveBody(req, this.options.bodyTimeoutMs).then((reception) => {
      this.receiving--;
      if (reception === 'gone') return this.next();
      if (reception === 'late') {
        outcome.timeOut();
        return this.next();
      }
      const ticket = { received: withBody(req, reception.body), res, client, outcome };
      if (!this.line(ticket)) return;
      // A client that gives up while waiting leaves the line.
      res.once('close', () => {
        const index = this.waiting.indexOf(ticket);
        if (index >= 0) this.waiting.splice(index, 1);
      });
    });
  }

  /**
   * The same door for an operation that came over a WebSocket (or another transport without a
   * request per operation), by the byte length of its message, before it is parsed: resolves to the
   * function that gives its place back (call it once its operation has run), or null when refused.
   */
  admitOperation(bytes: number, client: BulkClient): Promise<(() => void) | null> {
    if (!this.isBulkOperation(bytes)) return Promise.resolve(() => undefined);
    if (this.full() || !this.hold(client)) return Promise.resolve(null);
    return new Promise((resolve) => {
      const release = () => this.release(client);
      const outcome: AdmissionOutcome = {
        enter: (leave) =>
          resolve(() => {
            leave?.();
            release();
          }),
        refuse: () => {
          release();
          resolve(null);
        },
        timeOut: () => undefined,
      };
      this.line({ received: null, res: null, client, outcome });
    });
  }

  isBulkOperation(bytes: number): boolean {
    return bytes > this.options.requestBytes;
  }

  /** No room for another bulk request (decoding, arriving or waiting), or the signal queue is full. */
  private full(): boolean {
    return (
      this.options.saturated() ||
      this.inProgress + this.receiving + this.waiting.length >= this.options.maxInProgress + this.options.maxWaiting
    );
  }

  /** Joins the line, behind any waiting already, and enters if there is room (true: it still waits); its room was counted at admission. */
  private line(ticket: Ticket): boolean {
    this.waiting.push(ticket);
    this.next();
    return this.waiting.includes(ticket);
  }

  /** Lets waiting requests in while there is room (called when one leaves, and when the loop has room again). */
  next(): void {
    while (this.inProgress < this.options.maxInProgress && this.waiting.length > 0 && !this.options.busy()) {
      const ticket = this.waiting.shift()!;
      if (this.options.saturated()) ticket.outcome.refuse();
      else this.enter(ticket);
    }
  }

  private enter({ received, res, outcome }: Ticket): void {
    this.inProgress++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      this.inProgress--;
      this.next();
    };
    res?.once('close', leave);
    outcome.enter(leave, received ?? undefined);
  }

  /** Takes a place for the client's address and credential, unless either holds its cap already. */
  private hold(client: BulkClient): boolean {
    const keys = this.keys(client);
    if (keys.some(([key, max]) => (this.held.get(key) ?? 0) >= max)) return false;
    for (const [key] of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    return true;
  }

  private release(client: BulkClient): void {
    for (const [key] of this.keys(client)) {
      const count = (this.held.get(key) ?? 1) - 1;
      if (count === 0) this.held.delete(key);
      else this.held.set(key, count);
    }
  }

  private keys(client: BulkClient): Array<[string, number]> {
    const keys: Array<[string, number]> = [];
    if (this.options.maxPerAddress > 0) keys.push([`address ${client.address}`, this.options.maxPerAddress]);
    if (this.options.maxPerCredential > 0) keys.push([`credential ${client.credential}`, this.options.maxPerCredential]);
    return keys;
  }
}
