/**
 * `deno run -A bench/oidc_token_endpoint.ts [--grants 600] [--chains 8] [--rounds 6]`: refresh
 * grants per second through the OIDC provider's `POST /oidc/token` (`grant_type=refresh_token`,
 * `client_secret_basic`) beside svc's own `POST /auth/refresh`, in one run, on the same Postgres
 * (the test server, `SVC_TEST_DATABASE_URL`), through the same in-process app (`app.request`, no
 * sockets), interleaved: each round runs one batch of each kind, rotating which goes first, each
 * of `--grants` grants over `--chains` concurrent chains. Kinds: `native` (`/auth/refresh`),
 * `oidc` (a client with the defaults: a new RS256 ID token on every refresh), `oidc-lean` (a
 * client registered with `idTokenOnRefresh: false`: no ID token on refresh; skipped when the
 * server does not know the setting) and `cc` (`client_credentials` of a service account, also
 * over `--chains` concurrent callers). Prints each round, the means and the ratios to native
 * (the goal for OIDC refresh is at least 0.8).
 *
 * What an OIDC refresh does beyond the native one: client authentication (a SHA-256 of the
 * secret; the client itself is cached, its row version checked by the grant's statement), the
 * grant row and the `oidc.tokens_issued` webhook deliveries in the same one statement as the
 * rotation, and (by default) an ID token signed beside the access token.
 *
 * RS256 signatures: on OpenSSL's libcrypto through FFI where it loads, as `svc start` on Deno
 * signs (`cli/deno-openssl-rs256.ts`); `SVC_RSA_NATIVE_SIGNER=false` in the environment: Deno's
 * WebCrypto through jose. Interleave runs of both to compare them.
 */
import { openSslRs256Signer } from "../cli/deno-openssl-rs256.ts";
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
const jwsSigner = Deno.env.get("SVC_RSA_NATIVE_SIGNER") === "false" ? null : openSslRs256Signer();
console.log(`RS256 signer: ${jwsSigner?.name ?? "webcrypto (jose)"}; load ${Deno.loadavg().join(" ")}`);
const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" }, {
  postgres: true,
  jwsSigner: jwsSigner ?? undefined,
});
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
  const createdLean = await beds.request("POST", "/svc-admin/oidc/clients", {
    body: {
      clientId: "bench-lean",
      clientType: "confidential",
      redirectUris: [REDIRECT],
      allowedScopes: ["openid", "offline_access"],
      tokenEndpointAuthMethod: "client_secret_basic",
      idTokenOnRefresh: false,
    },
  });
  const basicLean = createdLean.status === 201
    ? `Basic ${btoa(`bench-lean:${(await createdLean.json()).clientSecret}`)}`
    : null;
  if (basicLean === null) await createdLean.body?.cancel();
  const account = await beds.request("POST", "/svc-admin/service-accounts", {
    body: { key: "bench-job", displayName: "Bench" },
  });
  if (account.status !== 201) throw new Error(await account.text());
  const sas = (await account.json()).secret as string;
  const user = await bed.storage.users.create({ realmId, email: "bench@example.test" });

  /** A new OIDC refresh chain: a browser session, an authorization code, its exchange. */
  const oidcChain = async (clientId: string, auth: string): Promise<string> => {
    const browser = await bed.auth.sessions.signIn({
      realmId,
      userId: user.id,
      orgId: null,
      mfa: "Password",
    });
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
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
      headers: { ...FORM, Authorization: auth },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT })
        .toString(),
    });
    return (await tokens.json()).refresh_token;
  };
  const nativeChain = async (): Promise<string> =>
    (await bed.auth.sessions.signIn({ realmId, userId: user.id, orgId: null, mfa: "Password" })).tokens
      .refreshToken;

  const oidcGrant = (auth: string) => async (token: string): Promise<string> => {
    const res = await beds.app.request("/oidc/token", {
      method: "POST",
      headers: { ...FORM, Authorization: auth },
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

  const ccGrant = async (token: string): Promise<string> => {
    const res = await beds.app.request("/oidc/token", {
      method: "POST",
      headers: { ...FORM },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: "bench-job",
        client_secret: sas,
      })
        .toString(),
    });
    const body = await res.json();
    if (!body.access_token) throw new Error(`client_credentials: ${JSON.stringify(body)}`);
    return token;
  };

  type Kind = "native" | "oidc" | "oidc-lean" | "cc";
  const chainsOf = (make: () => Promise<string>) => Promise.all(Array.from({ length: CHAINS }, make));
  const kinds: Partial<Record<Kind, { chains: string[]; grant: (token: string) => Promise<string> }>> = {
    native: { chains: await chainsOf(nativeChain), grant: nativeGrant },
    oidc: { chains: await chainsOf(() => oidcChain("bench", basic)), grant: oidcGrant(basic) },
    ...(basicLean !== null
      ? {
        "oidc-lean": {
          chains: await chainsOf(() => oidcChain("bench-lean", basicLean)),
          grant: oidcGrant(basicLean),
        },
      }
      : {}),
    cc: { chains: Array.from({ length: CHAINS }, () => ""), grant: ccGrant },
  };
  const names = Object.keys(kinds) as Kind[];
  const batch = async (kind: Kind, grants: number): Promise<number> => {
    const { chains, grant } = kinds[kind]!;
    const perChain = Math.ceil(grants / chains.length);
    const started = performance.now();
    await Promise.all(chains.map(async (_, i) => {
      for (let n = 0; n < perChain; n++) chains[i] = await grant(chains[i]);
    }));
    return perChain * chains.length / ((performance.now() - started) / 1000);
  };
  // Warm-up: keys loaded, statements prepared, JIT, the client cache filled.
  for (const kind of names) await batch(kind, CHAINS * 10);

  const totals = Object.fromEntries(names.map((kind) => [kind, [] as number[]])) as Record<Kind, number[]>;
  console.log(
    `| round | ${names.map((kind) => `${kind}/s`).join(" | ")} | ${
      names.filter((k) => k !== "native").map((k) => `${k} ÷ native`).join(" | ")
    } |`,
  );
  console.log(
    `| --- | ${names.map(() => "---").join(" | ")} | ${names.slice(1).map(() => "---").join(" | ")} |`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    const rates = {} as Record<Kind, number>;
    for (const kind of order) rates[kind] = await batch(kind, GRANTS);
    for (const kind of names) totals[kind].push(rates[kind]);
    console.log(
      `| ${round} | ${names.map((kind) => rates[kind].toFixed(0)).join(" | ")} | ${
        names.filter((k) => k !== "native").map((k) => (rates[k] / rates.native).toFixed(2)).join(" | ")
      } |`,
    );
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  };
  // Per-round ratios, then their median: a round's kinds ran back to back, under the same load.
  const roundRatios = (kind: Kind) => totals[kind].map((rate, i) => rate / totals.native[i]);
  console.log(
    `\nmean: ${names.map((kind) => `${kind} ${mean(totals[kind]).toFixed(0)}/s`).join(", ")}; ratios to ` +
      `/auth/refresh: ${
        names.filter((k) => k !== "native").map((k) =>
          `${k} ${(mean(totals[k]) / mean(totals.native)).toFixed(2)}`
        )
          .join(", ")
      } (goal for OIDC refresh >= 0.8); ${GRANTS} grants x ${CHAINS} chains x ${ROUNDS} rounds`,
  );
  console.log(
    `median of the rounds' ratios: ${
      names.filter((k) => k !== "native").map((k) => `${k} ${median(roundRatios(k)).toFixed(2)}`).join(", ")
    }; load ${Deno.loadavg().join(" ")}`,
  );
} finally {
  await beds.close();
}
