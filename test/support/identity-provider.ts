import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import {
  AUDIENCE,
  clientSecret,
  providerConfiguration,
  REDIRECT_URI,
  RESOURCES,
  type SCOPE_CLAIM_OF_CLIENT,
  type SigningKey,
  USER_ID_CLAIM,
  WEB_CLIENT,
} from './identity-provider-configuration.js';

/**
 * A real OpenID provider (panva's certified `oidc-provider`) on a loopback port, shaped like the
 * providers teams use: JWT access tokens for our API (audience `community-layer`), the app's user
 * id in a namespaced claim added by the provider's `extraTokenClaims`, client-credentials clients
 * whose scopes land in `scope` (RFC 9068), `scp` (Okta) or `permissions` (Auth0 RBAC) through its
 * JWT format customizer, and user tokens from a real authorization code flow whose login page
 * signs in the `login_hint` account.
 */

export interface IdentityProviderOptions {
  /** Signing keys, served in this order; the first of each algorithm signs. */
  keys: SigningKey[];
  /** Accounts by `sub`, with the value of their app user id claim (omitted: no such claim). */
  accounts: Record<string, string | number | undefined>;
  /** Cache-Control of the JWKS response (real providers send one; Auth0: max-age=15). */
  jwksCacheControl?: string;
}

export class IdentityProvider {
  private provider: Provider | null = null;
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private port = 0;

  private constructor(private options: IdentityProviderOptions) {}

  static async start(options: IdentityProviderOptions): Promise<IdentityProvider> {
    const idp = new IdentityProvider(options);
    await idp.listen();
    return idp;
  }

  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get jwksUri(): string {
    return `${this.issuer}/jwks`;
  }

  /** Serves (and signs with) `keys` from now on, as a provider does when it rotates. */
  rotate(keys: SigningKey[]): void {
    this.options = { ...this.options, keys };
    this.provider = this.createProvider();
  }

  /** Down: the port refuses connections (and open keep-alive connections are cut). */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** Up again, on the same port (so the same issuer). */
  resume(): Promise<void> {
    return this.listen();
  }

  /** A client-credentials grant at the token endpoint: a service caller's token. */
  async clientCredentialsToken(
    clientId: keyof typeof SCOPE_CLAIM_OF_CLIENT,
    scope: string,
    resource: string = RESOURCES.api,
  ): Promise<string> {
    return this.tokenRequest(clientId, { grant_type: 'client_credentials', scope, resource });
  }

  /**
   * A user's access token through the authorization code flow with PKCE, over HTTP: authorization
   * request, login and consent interactions (cookies carried by hand), code exchange.
   */
  async userToken(accountId: string, apiScope = '', resource: string = RESOURCES.api): Promise<string> {
    // A sign-in always grants something: openid, which never reaches the API's token.
    const scope = `openid ${apiScope}`.trim();
    const verifier = randomBytes(32).toString('base64url');
    const cookies = new Map<string, string>();
    let url = new URL('/auth', this.issuer);
    url.search = new URLSearchParams({
      client_id: WEB_CLIENT,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope,
      resource,
      login_hint: accountId,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    for (let hops = 0; hops < 10; hops++) {
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
      });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const separator = pair!.indexOf('=');
        cookies.set(pair!.slice(0, separator), pair!.slice(separator + 1));
      }
      const location = response.headers.get('location');
      if (!location) throw new Error(`authorization flow stopped with HTTP ${response.status}: ${await response.text()}`);
      url = new URL(location, url);
      if (url.href.startsWith(REDIRECT_URI)) {
        const code = url.searchParams.get('code');
        if (!code) throw new Error(`authorization failed: ${url.search}`);
        return this.tokenRequest(WEB_CLIENT, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
          resource,
        });
      }
    }
    throw new Error('authorization flow redirected too often');
  }

  private async tokenRequest(clientId: string, form: Record<string, string>): Promise<string> {
    const response = await fetch(new URL('/token', this.issuer), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret(clientId)}`).toString('base64')}`,
      },
      body: new URLSearchParams(form),
    });
    const body = (await response.json()) as { access_token?: string };
    if (!body.access_token) throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
    return body.access_token;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const provider = this.provider!;
    if (req.url?.startsWith('/interaction/')) return this.interact(provider, req, res);
    if (req.url === '/jwks' && this.options.jwksCacheControl) res.setHeader('cache-control', this.options.jwksCacheControl);
    provider.callback()(req, res);
  }

  /** The login page (signs in the `login_hint` account) and the consent page (grants what was asked). */
  private async interact(provider: Provider, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: String(details.params['login_hint']) } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params['client_id']) });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.port = (this.server.address() as AddressInfo).port;
        this.provider ??= this.createProvider();
        resolve();
      });
    });
  }

  private createProvider(): Provider {
    return new Provider(this.issuer, providerConfiguration(this.options.keys, this.options.accounts));
  }
}

/** An app that trusts `idp` (discovery), reads the namespaced user id claim, refetches keys quickly. */
export function oidcEnvironment(idp: IdentityProvider, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    AUTH_JWT_SECRET: '',
    AUTH_OIDC_ISSUER: idp.issuer,
    AUTH_JWT_AUDIENCE: AUDIENCE,
    AUTH_USER_ID_CLAIM: USER_ID_CLAIM,
    AUTH_JWKS_COOLDOWN_MS: '100',
    ...overrides,
  };
}
