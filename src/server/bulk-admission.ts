import type http from 'node:http';

export interface BulkAdmissionOptions {
  /** A POST body longer than this is bulk (a batch of signals, say); shorter ones always enter. */
  requestBytes: number;
  /** Bulk requests being read and decoded at once. */
  maxInProgress: number;
  /** Bulk requests waiting at the door, their bodies unread; beyond this they are refused. */
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
  /** `decoded` (bulk requests only) frees the request's place early, once its CPU-heavy part is done. */
  enter(decoded?: () => void): void;
  refuse(): void;
  /** The body did not arrive within `bodyTimeoutMs` (408). */
  timeOut(): void;
}

interface Ticket {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  client: BulkClient;
  outcome: AdmissionOutcome;
}

/**
 * The door for bulk requests, ahead of the body parser. Reading, parsing and coercing a batch is
 * the event loop's costliest work, so it is what must be bounded and refused under a flood, before
 * the body is read, not after. At most `maxInProgress` bulk requests are being decoded, and none
 * enters while the event loop is busy; up to `maxWaiting` more wait at the door unread (their bytes
 * stay in the socket, costing nothing); anything beyond, or anything while the signal queue is
 * full, is refused at once. A request leaves the door once decoded: waiting for its commit costs no
 * CPU and the signal queue bounds that stage. Small requests (a status read, a leave, one signal)
 * never wait behind a batch, which keeps them fast while batches are shed. Envoy's circuit
 * breakers (max requests, max pending) have the same shape.
 *
 * Against slow and hostile clients: a request in progress must send its whole body within
 * `bodyTimeoutMs` (a trickle would hold the place for as long as it liked), and one address or one
 * credential holds only so many places, so it cannot fill the line for everyone else.
 */
export class BulkAdmission {
  private inProgress = 0;
  private readonly waiting: Ticket[] = [];
  private readonly held = new Map<string, number>();

  constructor(private readonly options: BulkAdmissionOptions) {}

  get waitingCount(): number {
    return this.waiting.length;
  }

  get inProgressCount(): number {
    return this.inProgress;
  }

  /** Bulk: a POST whose declared body is over `requestBytes`. */
  isBulk(req: http.IncomingMessage): boolean {
    return req.method === 'POST' && Number(req.headers['content-length']) > this.options.requestBytes;
  }

  /** Enters now, later (when a bulk request ahead of it is decoded), or is refused. */
  admit(req: http.IncomingMessage, res: http.ServerResponse, client: BulkClient, outcome: AdmissionOutcome): void {
    if (!this.isBulk(req)) return outcome.enter();
    if (this.options.saturated() || !this.hold(client)) return outcome.refuse();
    res.once('close', () => this.release(client));
    const ticket = { req, res, client, outcome };
    if (this.inProgress < this.options.maxInProgress && !this.options.busy()) return this.enter(ticket);
    if (this.waiting.length >= this.options.maxWaiting) return outcome.refuse();
    this.waiting.push(ticket);
    // A client that gives up while waiting leaves the line.
    res.once('close', () => {
      const index = this.waiting.indexOf(ticket);
      if (index >= 0) this.waiting.splice(index, 1);
    });
  }

  /** Lets waiting requests in while there is room (called when one leaves, and when the loop has room again). */
  next(): void {
    while (this.inProgress < this.options.maxInProgress && this.waiting.length > 0 && !this.options.busy()) {
      const ticket = this.waiting.shift()!;
      if (this.options.saturated()) ticket.outcome.refuse();
      else this.enter(ticket);
    }
  }

  private enter({ req, res, outcome }: Ticket): void {
    this.inProgress++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      clearTimeout(deadline);
      this.inProgress--;
      this.next();
    };
    const deadline = setTimeout(() => {
      if (req.readableEnded) return;
      leave();
      outcome.timeOut();
    }, this.options.bodyTimeoutMs);
    req.once('end', () => clearTimeout(deadline));
    res.once('close', leave);
    outcome.enter(leave);
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
