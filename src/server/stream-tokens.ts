import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * The tokens of graphql-sse's single-connection streams. A reservation (PUT) needs a valid bearer
 * token, and later requests of the mode carry only the stream token: signing it with a key of this
 * instance lets the bulk door tell a reserved stream's POST from an anonymous one by its headers,
 * before any body is read, with no table of streams to keep.
 */
export class StreamTokens {
  private readonly key = randomBytes(32);

  issue(): string {
    const id = randomUUID();
    return `${id}.${this.mac(id)}`;
  }

  verify(token: string): boolean {
    const [id, mac, ...rest] = token.split('.');
    if (!id || !mac || rest.length > 0) return false;
    const expected = Buffer.from(this.mac(id));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private mac(id: string): string {
    return createHmac('sha256', this.key).update(id).digest('base64url');
  }
}
