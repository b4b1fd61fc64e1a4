// The OAuth 2.1 authorization server of the end-to-end tests: oidc-provider
// (pinned in scripts/npm-deps.sh, installed in .npm-deps/oauth-as/) on
// 127.0.0.1, with auto-consent for the one account "alice" and a few
// test-only endpoints. Started by internal/testoauth (Go); see its package
// documentation for the behaviour the tests rely on.
//
// Environment:
//   AS_NODE_MODULES  the node_modules folder holding oidc-provider (required)
//   AS_PORT          port to listen on (or argv[2]); 0 or unset: a free port
//   AS_ACCESS_TTL    access token lifetime in seconds (default 3600)
//   AS_RESOURCE      the one valid resource indicator; unset: any http(s) URL
//                    on a loopback host
//   AS_SCOPES        the resource's scopes (default "mcp:read mcp:admin")
//   AS_DEVICE_INTERVAL  seconds a device should wait between token polls,
//                    sent as "interval" in device authorization responses;
//                    unset: none is sent (RFC 8628: the device waits 5 s)
//   AS_DPOP_NONCE    "1": a token request's DPoP proof must carry the
//                    server's nonce (RFC 9449 §8; use_dpop_nonce otherwise).
//                    DPoP itself is always on (ES256 among others); a proof
//                    with no nonce when none is required gets one for next time
//
// Once listening it prints one JSON line on stdout: {"issuer": ..., "port": N}.
//
// Test-only endpoints (form-encoded bodies):
//   POST /test/device/approve user_code=...  grant a pending device request as alice
//   POST /test/device/deny    user_code=...  deny it (the device gets access_denied)
//   POST /test/revoke-all                    revoke alice's grants and their tokens
//   POST /test/access-ttl     seconds=N      access token lifetime from now on
//   GET  /test/stats                         {"refreshes": n, "refreshAttempts": m, "reuses": r}
//                                            (reuses: spent refresh tokens presented again,
//                                            each of which revoked its grant)
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.AS_NODE_MODULES;
if (!modules) throw new Error('AS_NODE_MODULES is not set');
const entry = createRequire(join(modules, 'noop.js')).resolve('oidc-provider');
const { default: Provider, errors } = await import(pathToFileURL(entry).href);

const ACCOUNT = 'alice';
let accessTTL = Number(process.env.AS_ACCESS_TTL || 3600); // POST /test/access-ttl changes it
const onlyResource = process.env.AS_RESOURCE || '';
const rsScope = process.env.AS_SCOPES || 'mcp:read mcp:admin';
const dpopNonce = process.env.AS_DPOP_NONCE === '1';
const loopbacks = new Set(['127.0.0.1', 'localhost', '[::1]']);

function validResource(indicator) {
  if (onlyResource) return indicator === onlyResource;
  const u = URL.parse(indicator);
  return !!u && ['http:', 'https:'].includes(u.protocol) && loopbacks.has(u.hostname) && !u.hash;
}

const signingKey = {
  ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
  kid: 'as-key-1', use: 'sig', alg: 'RS256',
};

const configuration = {
  jwks: { keys: [signingKey] },
  cookies: { keys: ['hermes-test-as-cookie-key'] },
  // The resource's scopes are listed too, so that scopes_supported names
  // them and a client may register them (DCR "scope").
  scopes: ['openid', 'offline_access', 'email', ...rsScope.split(' ')],
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  async findAccount(ctx, sub) {
    if (sub !== ACCOUNT) return undefined;
    return {
      accountId: sub,
      claims: () => ({ sub, email: 'alice@example.test', email_verified: true }),
    };
  },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    // client_credentials for a client registered with that grant (with
    // resource indicators: a JWT access token for the resource).
    clientCredentials: { enabled: true },
    deviceFlow: { enabled: true },
    dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => dpopNonce },
    revocation: {
      enabled: true,
      allowedPolicy: (ctx, client, token) => token.clientId === client.clientId,
    },
    introspection: {
      enabled: true,
      allowedPolicy: (ctx, client, token) => token.clientId === client.clientId,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: () => false,
      async getResourceServerInfo(ctx, indicator) {
        if (!validResource(indicator)) throw new errors.InvalidTarget();
        return {
          scope: rsScope,
          audience: indicator,
          accessTokenTTL: accessTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  responseTypes: ['code'],
  pkce: { required: () => true },
  // Refresh tokens for every client allowed the refresh_token grant, without
  // offline_access; they outlive the browser session and rotate on each use
  // (a spent one is invalid_grant, and its reuse revokes the whole grant).
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  expiresWithSession: async () => false,
  rotateRefreshToken: true,
  ttl: { AccessToken: () => accessTTL },
};

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(process.env.AS_PORT || process.argv[2] || 0), '127.0.0.1', resolve);
});
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, configuration);

// Counters and grants for the test endpoints.
const stats = { refreshes: 0, refreshAttempts: 0, reuses: 0 };
const grants = new Set();
provider.on('grant.saved', (grant) => grants.add(grant.jti));
provider.on('grant.success', (ctx) => {
  if (ctx.oidc.params.grant_type === 'refresh_token') { stats.refreshes++; stats.refreshAttempts++; }
});
provider.on('grant.error', (ctx, err) => {
  if (ctx.oidc?.params?.grant_type !== 'refresh_token') return;
  stats.refreshAttempts++;
  // RFC 9700 §4.14.2 reuse detection: oidc-provider has just revoked the
  // grant of the spent refresh token presented again.
  if (err?.error_detail === 'refresh token already used') stats.reuses++;
});
// RFC 8628 §3.2 "interval": oidc-provider sends none; the response body is
// still open to change when the event fires.
const deviceInterval = Number(process.env.AS_DEVICE_INTERVAL || 0);
provider.on('device_authorization.success', (ctx, body) => {
  if (deviceInterval > 0) body.interval = deviceInterval;
});
provider.on('server_error', (ctx, err) => console.error('as.mjs server_error:', err));

// Auto-consent: the login prompt logs alice in, the consent prompt grants
// whatever is missing; each ends with a redirect back to the provider.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: ACCOUNT } };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    throw new Error(`unexpected prompt ${prompt.name}`);
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

// approveDevice grants alice what a pending device authorization request
// asked for, as oidc-provider's own verification pages would (or denies it).
async function approveDevice(userCode, deny) {
  const normalized = String(userCode ?? '').toUpperCase().replace(/\W/g, '');
  const code = await provider.DeviceCode.findByUserCode(normalized);
  if (!code || code.accountId || code.error) return 404;
  if (deny) {
    Object.assign(code, { error: 'access_denied', errorDescription: 'End-User denied the request' });
    await code.save();
    return 200;
  }
  const scopes = String(code.params.scope ?? '').split(' ').filter(Boolean);
  const resources = [code.params.resource ?? []].flat();
  const grant = new provider.Grant({ accountId: ACCOUNT, clientId: code.clientId });
  grant.addOIDCScope(scopes.filter((s) => configuration.scopes.includes(s)).join(' '));
  const allowed = rsScope.split(' ');
  for (const r of resources) grant.addResourceScope(r, scopes.filter((s) => allowed.includes(s)).join(' '));
  Object.assign(code, {
    accountId: ACCOUNT,
    authTime: Math.floor(Date.now() / 1000),
    grantId: await grant.save(),
    scope: scopes.join(' '),
  });
  if (resources.length) code.resource = resources.length === 1 ? resources[0] : resources;
  await code.save();
  return 200;
}

// revokeAll ends every grant alice gave, with all its tokens.
async function revokeAll() {
  const models = [provider.AccessToken, provider.RefreshToken, provider.AuthorizationCode, provider.DeviceCode];
  for (const id of grants) {
    await Promise.all(models.map((m) => m.revokeByGrantId(id)));
    await provider.Grant.adapter.destroy(id);
  }
  const n = grants.size;
  grants.clear();
  return n;
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

function json(res, status, value) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

const providerHandler = provider.callback();
server.on('request', async (req, res) => {
  const path = new URL(req.url, issuer).pathname;
  try {
    if (path.startsWith('/interaction/')) return await interaction(req, res);
    if (req.method === 'POST' && (path === '/test/device/approve' || path === '/test/device/deny')) {
      const form = await readForm(req);
      const status = await approveDevice(form.get('user_code'), path.endsWith('deny'));
      return json(res, status, status === 200 ? { ok: true } : { error: 'no pending device code for this user_code' });
    }
    if (req.method === 'POST' && path === '/test/access-ttl') {
      const seconds = Number((await readForm(req)).get('seconds'));
      if (!(seconds >= 1)) return json(res, 400, { error: 'seconds must be 1 or more' });
      accessTTL = seconds;
      return json(res, 200, { ok: true });
    }
    if (req.method === 'POST' && path === '/test/revoke-all') return json(res, 200, { revoked: await revokeAll() });
    if (req.method === 'GET' && path === '/test/stats') return json(res, 200, stats);
    return providerHandler(req, res);
  } catch (err) {
    console.error('as.mjs:', err);
    return json(res, 500, { error: String(err?.message ?? err) });
  }
});

process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
