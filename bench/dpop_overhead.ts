/**
 * `deno run -A bench/dpop_overhead.ts [--rounds 400]`: what a DPoP proof adds to a request of svc's
 * own API, beside the same request with a Bearer token, in one run on one Postgres (a fresh schema
 * on `SVC_TEST_DATABASE_URL`). `GET /profile/me` through the app (`app.request`), the variants
 * interleaved one request each per round so a busy machine slows them alike:
 *
 * - `Bearer`: an unbound `at+svc` (the baseline);
 * - `DPoP ES256` / `DPoP EdDSA`: a bound token and a fresh proof per request, signed before the
 *   timer starts (what the server pays: the proof's checks, its signature, the key thumbprint and
 *   the single-use `jti` insert);
 * - `DPoP ES256, nonce`: the same with `SVC_DPOP_NONCE_REQUIRED=true` (the nonce's HMAC).
 *
 * The report gives each variant's p50 and p75, the p50 ratio to Bearer and the milliseconds added
 * at p50, and what signing a proof costs the client (not in the request times).
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from "jose";
import { systemClock } from "../core/clock.ts";
import { loadConfig } from "../core/config/mod.ts";
import { accessTokenHash, verifyDpopProof } from "../core/dpop/proof.ts";
import { cryptoRandom } from "../core/random.ts";
import { createApp } from "../http/app.ts";
import { createAuthStack } from "../http/auth/stack.ts";
import { createSqlStorage } from "../storage/storage.ts";
import { freshPostgres } from "../test/support/db.ts";
import { seeder } from "../test/support/seed.ts";

const ROUNDS = Number(Deno.args.includes("--rounds") ? Deno.args[Deno.args.indexOf("--rounds") + 1] : "400");
const BASE = "http://localhost:8080";

const database = await freshPostgres({ maxConnections: 10 });
try {
  const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
  const seed = seeder(database.db);
  const realmId = (await storage.realms.create({ name: "default", displayName: "Default", isDefault: true }))
    .id;
  const userId = await seed.user(realmId);

  const appOf = (env: Record<string, string>) => {
    const config = loadConfig({ env: { SVC_BASE_URL: BASE, ...env } }).config;
    const auth = createAuthStack({
      config,
      storage,
      clock: systemClock,
      random: cryptoRandom,
      events: { emit() {} },
    });
    const app = createApp({
      config,
      readinessChecks: [],
      clock: systemClock,
      random: cryptoRandom,
      authenticator: auth.authenticator,
      routes: auth.routes,
    });
    return { auth, app };
  };
  const plain = appOf({});
  const withNonce = appOf({ SVC_DPOP_NONCE_REQUIRED: "true" });
  await plain.auth.keys.ensurePrimary(realmId);

  const keyOf = async (alg: string) => {
    const { privateKey, publicKey } = await generateKeyPair(alg);
    const jwk = await exportJWK(publicKey);
    return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, "sha256") };
  };
  const es256 = await keyOf("ES256");
  const eddsa = await keyOf("EdDSA");
  const signIn = async (jkt?: string) =>
    (await plain.auth.sessions.signIn({
      realmId,
      userId,
      mfa: "Password",
      ...(jkt ? { dpop: { jkt, bindRefresh: true } } : {}),
    })).tokens.accessToken;
  const bearerToken = await signIn();
  const es256Token = await signIn(es256.jkt);
  const eddsaToken = await signIn(eddsa.jkt);
  const nonce = await withNonce.auth.dpop.currentNonce();

  const proof = (key: Awaited<ReturnType<typeof keyOf>>, token: string, withNonceClaim = false) =>
    new SignJWT({
      jti: crypto.randomUUID(),
      htm: "GET",
      htu: `${BASE}/profile/me`,
      iat: Math.floor(Date.now() / 1000),
      ath: accessTokenHash(token),
      ...(withNonceClaim ? { nonce } : {}),
    }).setProtectedHeader({ alg: key.alg, typ: "dpop+jwt", jwk: key.jwk }).sign(key.privateKey);

  type Variant = [string, () => Promise<{ headers: Record<string, string>; app: typeof plain.app }>];
  const variants: Variant[] = [
    [
      "Bearer",
      () => Promise.resolve({ headers: { Authorization: `Bearer ${bearerToken}` }, app: plain.app }),
    ],
    ["DPoP ES256", async () => ({
      headers: { Authorization: `DPoP ${es256Token}`, DPoP: await proof(es256, es256Token) },
      app: plain.app,
    })],
    ["DPoP EdDSA", async () => ({
      headers: { Authorization: `DPoP ${eddsaToken}`, DPoP: await proof(eddsa, eddsaToken) },
      app: plain.app,
    })],
    ["DPoP ES256, nonce", async () => ({
      headers: { Authorization: `DPoP ${es256Token}`, DPoP: await proof(es256, es256Token, true) },
      app: withNonce.app,
    })],
  ];

  const times = new Map(variants.map(([name]) => [name, [] as number[]]));
  let signMs = 0;
  for (let round = -20; round < ROUNDS; round++) { // 20 warm-up rounds, not recorded
    for (const [name, prepare] of variants) {
      const signStarted = performance.now();
      const { headers, app } = await prepare();
      if (round >= 0 && name === "DPoP ES256") signMs += performance.now() - signStarted;
      const start = performance.now();
      const res = await app.request("/profile/me", { headers });
      await res.arrayBuffer();
      const elapsed = performance.now() - start;
      if (res.status !== 200) {
        throw new Error(`${name}: ${res.status} ${res.headers.get("WWW-Authenticate")}`);
      }
      if (round >= 0) times.get(name)!.push(elapsed);
    }
  }

  const quantile = (values: number[], q: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  };
  const baseline = quantile(times.get("Bearer")!, 0.5);
  console.log(`GET /profile/me through the app, ${ROUNDS} rounds, variants interleaved (Postgres)`);
  console.log(
    "variant".padEnd(22),
    "p50 ms".padStart(8),
    "p75 ms".padStart(8),
    "ratio".padStart(7),
    "+ms p50".padStart(8),
  );
  for (const [name] of variants) {
    const values = times.get(name)!;
    const p50 = quantile(values, 0.5);
    console.log(
      name.padEnd(22),
      p50.toFixed(3).padStart(8),
      quantile(values, 0.75).toFixed(3).padStart(8),
      `${(p50 / baseline).toFixed(2)}x`.padStart(7),
      (p50 - baseline).toFixed(3).padStart(8),
    );
  }
  console.log(
    `client side: signing an ES256 proof (not in the times above) ${(signMs / ROUNDS).toFixed(3)} ms`,
  );

  // Where the added time goes: the pure checks (signature included) and the single-use insert.
  const proofs = await Promise.all(Array.from({ length: 200 }, () => proof(es256, es256Token)));
  let started = performance.now();
  for (const one of proofs) {
    await verifyDpopProof(one, {
      method: "GET",
      url: `${BASE}/profile/me`,
      now: Date.now(),
      accessToken: es256Token,
    });
  }
  const verifyMs = (performance.now() - started) / proofs.length;
  started = performance.now();
  for (let i = 0; i < 200; i++) {
    await storage.dpop.useProof(crypto.randomUUID(), new Date(Date.now() + 120_000));
  }
  const insertMs = (performance.now() - started) / 200;
  console.log(
    `parts: verifyDpopProof (ES256, thumbprint, ath) ${verifyMs.toFixed(3)} ms; used-jti insert ${
      insertMs.toFixed(3)
    } ms`,
  );
} finally {
  await database.close();
}
