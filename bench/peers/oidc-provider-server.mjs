/**
 * panva's oidc-provider as a peer for bench/peers/run.ts: `node bench/peers/oidc-provider-server.mjs`,
 * its in-memory adapter (the default), one confidential client (`client_secret_basic`) allowed the
 * authorization code, refresh token and client credentials grants, and one resource server whose
 * access tokens are RS256 JWTs (resource indicators with `accessTokenFormat: "jwt"`, the resource
 * being the default one, so a request without `resource` gets a JWT too). Refresh tokens rotate on
 * every use (`rotateRefreshToken: true`), as svc's do; a refresh with `openid` in its scope also
 * answers an ID token, as svc's does.
 *
 * Environment: `PORT` (0: any free port). Prints `oidc-provider listening on http://127.0.0.1:<port>`.
 *
 * `POST /bench/refresh-token` (only here, for the bench) mints a refresh token for a new grant of one
 * account, as a finished authorization code flow would leave it, so that the bench needs no browser
 * interaction to start its refresh chains; everything measured goes through the provider's own
 * `/token` endpoint.
 */
import { createServer } from "node:http";
import { generateKeyPairSync } from "node:crypto";
import Provider from "oidc-provider";

const port = Number(process.env.PORT ?? 0);
const CLIENT = { id: "bench", secret: "bench-secret-bench-secret-bench-secret" };
const RESOURCE = "https://api.example.test";

const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: "jwk" }), kid: "bench-rs256", alg: "RS256", use: "sig" };

const server = createServer();
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    grant_types: ["authorization_code", "refresh_token", "client_credentials"],
    response_types: ["code"],
    redirect_uris: ["https://app.example.test/cb"],
    token_endpoint_auth_method: "client_secret_basic",
    scope: "openid offline_access api:read",
  }],
  jwks: { keys: [jwk] },
  scopes: ["openid", "offline_access", "api:read"],
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  rotateRefreshToken: true,
  // svc's defaults: 10-minute access and ID tokens, 30-day refresh tokens (set explicitly, also so
  // that oidc-provider prints no notice about its own defaults).
  ttl: {
    AccessToken: 600,
    ClientCredentials: 600,
    IdToken: 600,
    RefreshToken: 30 * 24 * 3600,
    Grant: 30 * 24 * 3600,
  },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (resource !== RESOURCE) throw new Provider.errors.InvalidTarget();
        return {
          scope: "api:read",
          audience: RESOURCE,
          accessTokenFormat: "jwt",
          accessTokenTTL: 600,
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
});

let accounts = 0;
/** A refresh token of a new grant, as the authorization code exchange would have stored it. */
async function mintRefreshToken() {
  const accountId = `user-${++accounts}`;
  const client = await provider.Client.find(CLIENT.id);
  const grant = new provider.Grant({ accountId, clientId: CLIENT.id });
  grant.addOIDCScope("openid offline_access");
  grant.addResourceScope(RESOURCE, "api:read");
  const grantId = await grant.save();
  const token = new provider.RefreshToken({
    accountId,
    client,
    grantId,
    gty: "authorization_code",
    scope: "openid offline_access api:read",
    resource: RESOURCE,
    authTime: Math.floor(Date.now() / 1000),
    iiat: Math.floor(Date.now() / 1000),
  });
  return await token.save();
}

const callback = provider.callback();
server.on("request", (req, res) => {
  if (req.method === "POST" && req.url === "/bench/refresh-token") {
    mintRefreshToken().then((token) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ refresh_token: token }));
    }, (err) => {
      res.writeHead(500);
      res.end(String(err));
    });
    return;
  }
  callback(req, res);
});
console.log(`oidc-provider listening on ${issuer}`);
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
