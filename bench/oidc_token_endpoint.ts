/**
 * `deno run -A bench/oidc_token_endpoint.ts [--grants 600] [--chains 8] [--rounds 6]`: refresh
 * grants per second through the OIDC provider's `POST /oidc/token` (`grant_type=refresh_token`,
 * `client_secret_basic`) beside svc's own `POST /auth/refresh`, in one run, on the same Postgres
 * (the test server, `SVC_TEST_DATABASE_URL`), through the same in-process app (`app.request`, no
 * sockets), interleaved: each round runs one native batch and one OIDC batch, alternating which
 * goes first, each of `--grants` grants over `--chains` concurrent refresh chains. Prints each
 * round, the totals and the ratio OIDC / native (the goal is at least 0.8).
 *
 * What an OIDC refresh does beyond the native one: client authentication (a client read and a
 * SHA-256), the refresh record and the provider's grant read before the rotation (the client
 * and the scopes are checked before the token is spent), an ID token signed beside the access
 * token, and the `oidc.tokens_issued` event recorded durably (outbox, its own transaction).
 */
import { cryptoRandom } from "../core/random.ts";
import { builtinPlugins } from "../plugins/builtin.ts";
import { pluginBed } from "../test/support/plugins.ts";

const arg = (name: string, fallback: number) =>
  Deno.args.includes(name) ? Number(Deno.args[Deno.args.indexOf(name) + 1]) : fallback;
const GRANTS = arg("--grants", 600);
const CHAINS = arg("--chains", 8);
const ROUNDS = arg("--rounds", 6);
const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

const plugin = builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" }, { postgres: true });
try {
  const { bed, realmId } = beds.admin;
  // The test bed's seeded generator is for reproducible tests; thousands of tokens want real randomness.
  (bed.random as { bytes: (length: number) => Uint8Array }).bytes = cryptoRandom.bytes;
  const created = await beds.request("POST", "/svc-admin/oidc/clients", {
    body: {
      clientId: "bench",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      allowedScopes: ["openid", "offline_access"],
      tokenEndpointAuthMethod: "client_secret_basic",
    },
  });
  if (created.status !== 201) throw new Error(await created.text());
  const basic = `Basic ${btoa(`bench:${(await created.json()).clientSecret}`)}`;
  const user = await bed.storage.users.create({ realmId, email: "bench@example.test" });

  /** A new OIDC refresh chain: a browser session, an authorization code, its exchange. */
  const oidcChain = async (): Promise<string> => {
    const browser = await bed.auth.sessions.signIn({
      realmId,
      userId: user.id,
      orgId: null,
      mfa: "Password",
    });
    const query = new URLSearchParams({
      response_type: "code",
      client_id: "bench",
      redirect_uri: REDIRECT,
      scope: "openid offline_access",
      state: "s",
    });
    const res = await beds.app.request(`/oidc/authorize?${query}`, {
      headers: { Cookie: `svc_at=${browser.tokens.accessToken}` },
    });
    const code = new URL(res.headers.get("Location")!).searchParams.get("code")!;
    const tokens = await beds.app.request("/oidc/token", {
      method: "POST",
      headers: { ...FORM, Authorization: basic },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT })
        .toString(),
    });
    return (await tokens.json()).refresh_token;
  };
  const nativeChain = async (): Promise<string> =>
    (await bed.auth.sessions.signIn({ realmId, userId: user.id, orgId: null, mfa: "Password" })).tokens
      .refreshToken;

  const oidcGrant = async (token: string): Promise<string> => {
    const res = await beds.app.request("/oidc/token", {
      method: "POST",
      headers: { ...FORM, Authorization: basic },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token }).toString(),
    });
    const body = await res.json();
    if (!body.refresh_token) throw new Error(`oidc refresh: ${JSON.stringify(body)}`);
    return body.refresh_token;
  };
  const nativeGrant = async (token: string): Promise<string> => {
    const res = await beds.app.request("/auth/refresh", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refreshToken: token }),
    });
    const body = await res.json();
    if (!body.refreshToken) throw new Error(`native refresh: ${JSON.stringify(body)}`);
    return body.refreshToken;
  };

  const kinds = {
    native: { chains: await Promise.all(Array.from({ length: CHAINS }, nativeChain)), grant: nativeGrant },
    oidc: { chains: await Promise.all(Array.from({ length: CHAINS }, oidcChain)), grant: oidcGrant },
  };
  const batch = async (kind: keyof typeof kinds, grants: number): Promise<number> => {
    const { chains, grant } = kinds[kind];
    const perChain = Math.ceil(grants / chains.length);
    const started = performance.now();
    await Promise.all(chains.map(async (_, i) => {
      for (let n = 0; n < perChain; n++) chains[i] = await grant(chains[i]);
    }));
    return perChain * chains.length / ((performance.now() - started) / 1000);
  };
  // Warm-up: keys loaded, statements prepared, JIT.
  await batch("native", CHAINS * 10);
  await batch("oidc", CHAINS * 10);

  const totals = { native: 0, oidc: 0 };
  console.log(`| round | /auth/refresh grants/s | /oidc/token grants/s | ratio |`);
  console.log(`| --- | --- | --- | --- |`);
  for (let round = 1; round <= ROUNDS; round++) {
    const order: (keyof typeof kinds)[] = round % 2 === 1 ? ["native", "oidc"] : ["oidc", "native"];
    const rates = { native: 0, oidc: 0 };
    for (const kind of order) rates[kind] = await batch(kind, GRANTS);
    totals.native += rates.native;
    totals.oidc += rates.oidc;
    console.log(
      `| ${round} | ${rates.native.toFixed(0)} | ${rates.oidc.toFixed(0)} | ${
        (rates.oidc / rates.native).toFixed(2)
      } |`,
    );
  }
  const native = totals.native / ROUNDS;
  const oidc = totals.oidc / ROUNDS;
  console.log(
    `\nmean: /auth/refresh ${native.toFixed(0)} grants/s, /oidc/token ${oidc.toFixed(0)} grants/s, ` +
      `ratio ${
        (oidc / native).toFixed(2)
      } (goal >= 0.8); ${GRANTS} grants x ${CHAINS} chains x ${ROUNDS} rounds`,
  );
} finally {
  await beds.close();
}
