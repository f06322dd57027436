import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { isU64 } from '../ids/u64.js';
import { mintToken, resolveAuthKey } from '../auth/tokens.js';

/** `npm run token -- --sub 42 [--scope "community:admin signals:write"] [--expires 1h]` */
const { values } = parseArgs({
  options: { sub: { type: 'string' }, scope: { type: 'string' }, expires: { type: 'string', default: '12h' } },
});
if (!values.sub || !isU64(values.sub)) {
  console.error('usage: npm run token -- --sub <UInt64 user id> [--scope "community:admin signals:write"] [--expires 12h]');
  process.exit(2);
}
const config = loadConfig(process.env);
const key = await resolveAuthKey(config.auth, config.database.embeddedDataDir);
if (key.kind !== 'secret') {
  console.error('A public key or an identity provider is configured: tokens come from the identity provider that holds the private key');
  process.exit(2);
}
console.log(
  await mintToken(key.secret, {
    sub: values.sub,
    expiresIn: values.expires,
    ...(values.scope ? { scope: values.scope } : {}),
    ...(config.auth.issuer ? { issuer: config.auth.issuer } : {}),
    ...(config.auth.audience ? { audience: config.auth.audience } : {}),
  }),
);
