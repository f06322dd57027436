import { fork } from 'node:child_process';

export interface HostileOptions {
  /** The GraphQL endpoint (http://…/graphql); the WebSocket flood uses the same URL as ws://. */
  url: string;
  /** A valid token of the attacker's own: trickles take bulk places, flood operations get past authentication. */
  token: string;
  /** Sockets that POST a large Content-Length, then send one byte a second; each cut one reconnects. */
  trickles: number;
  trickleContentLength: number;
  /** graphql-ws sockets, each keeping `floodInFlight` large mutations in flight (re-sent as soon as answered). */
  floodSockets: number;
  floodInFlight: number;
  floodBody: { query: string; variables: Record<string, unknown> };
}

export interface HostileSample {
  trickleConnections: number;
  /** Trickles the server ended (a response, a cut connection) before they finished their body. */
  tricklesEnded: number;
  /** Of those, refused at once (503): they come back a second later. */
  tricklesRefused: number;
  floodSent: number;
  floodOverloaded: number;
  floodAdmitted: number;
  floodOther: number;
  firstOther: string | null;
}

/** Starts the attack in a child process (never in the server's event loop); `stop()` ends it and reports. */
export function startHostile(options: HostileOptions): { stop(): Promise<HostileSample> } {
  const child = fork(new URL('./hostile-client.ts', import.meta.url), [], { serialization: 'advanced' });
  const result = new Promise<HostileSample>((resolve, reject) => {
    let sample: HostileSample | null = null;
    child.once('message', (message) => (sample = message as HostileSample));
    child.once('error', reject);
    child.once('exit', (code) => (sample ? resolve(sample) : reject(new Error(`hostile client exited with ${code} and no result`))));
  });
  child.send({ start: options });
  return {
    stop: () => {
      child.send({ stop: true });
      return result;
    },
  };
}
