/**
 * `deno run -A bench/oidc_token_endpoint.ts [--node | --server] [--grants 600] [--chains 8] [--rounds 6]
 * [--kinds oidc,cc]`:
 * refresh grants per second through the OIDC provider's `POST /oidc/token` (`grant_type=refresh_token`,
 * `client_secret_basic`) beside svc's own `POST /auth/refresh`, in one run, on the same Postgres
 * (the test server, `SVC_TEST_DATABASE_URL`), interleaved: each round runs one batch of each kind,
 * rotating which goes first, each of `--grants` grants over `--chains` concurrent chains. Kinds:
 * `native` (`/auth/refresh`), `oidc` (a client with the defaults: a new RS256 ID token on every
 * refresh), `oidc-lean` (a client registered with `idTokenOnRefresh: false`: no ID token on
 * refresh; skipped when the server does not know the setting), `oidc-dpop` (the lean client with
 * a DPoP proof on every refresh, signed before the batch's timer: the proof's added cost at the
 * token endpoint, printed beside `oidc-lean`) and `cc` (`client_credentials` of a
 * service account, also over `--chains` concurrent callers). Prints each round, the means and the
 * ratios to native (the goal for OIDC refresh is at least 0.8). With both `oidc` and `oidc-lean`
 * it also prints what the refreshed ID token costs per grant, and the ratio the default client
 * could reach at best while it signs one (if the rest of its grant cost what the native one does).
 *
 * Where svc runs:
 * - by default in this Deno process, through the app (`app.request`, no sockets), on a test bed;
 * - `--node`: `svc start` on Node (the `npm run build:node` bundle) on a fresh database of that
 *   Postgres, over HTTP (`fetch`), started the way `bench/peers/run.ts --node` starts it
 *   (`startSvcOnPostgres`, the same settings);
 * - `--server`: the same on Deno (`svc start` over HTTP), to compare with `--node` like for like.
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
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { startSvcOnPostgres, SVC_BENCH_ENV } from "./peers/run.ts";
import { serverCpu } from "./process_cpu.ts";

const arg = (name: string, fallback: number) =>
  Deno.args.includes(name) ? Number(Deno.args[Deno.args.indexOf(name) + 1]) : fallback;
const GRANTS = arg("--grants", 600);
const CHAINS = arg("--chains", 8);
const ROUNDS = arg("--rounds", 6);
const RUNTIME = Deno.args.includes("--node") ? "node" : Deno.args.includes("--server") ? "deno" : null;
/** `--kinds oidc,cc`: only these beside `native` (to profile one kind). */
const KINDS = Deno.args.includes("--kinds") ? Deno.args[Deno.args.indexOf("--kinds") + 1].split(",") : null;
const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const JSON_TYPE = { "Content-Type": "application/json" };

/** The svc under test, in process or a server: its routes, its admin API, a signed-in user's tokens. */
interface Target {
  /** A request to svc (redirects not followed). */
  call(path: string, init?: RequestInit): Promise<Response>;
  /** A POST of the realm's administrator. */
  admin(path: string, body: unknown): Promise<Response>;
  /** The tokens of a new sign-in of the bench's user. */
  signIn(): Promise<{ accessToken: string; refreshToken: string }>;
  /** svc's clock (milliseconds): a test bed's in process, the real one for a server. */
  now(): number;
  /** CPU seconds so far of svc's process (all its threads) and of its Postgres backends; servers only. */
  cpu?(): Promise<{ svc: number; postgres: number }>;
  close(): Promise<void>;
}

/** svc on a test bed in this process, with the Deno adapter's RS256 signer unless SVC_RSA_NATIVE_SIGNER=false. */
async function inProcess(): Promise<Target> {
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
    const user = await bed.storage.users.create({ realmId, email: "bench@example.test" });
    return {
      call: (path, init) => Promise.resolve(beds.app.request(path, init)),
      now: () => bed.clock.now(),
      admin: (path, body) => beds.request("POST", path, { body }),
      signIn: async () =>
        (await bed.auth.sessions.signIn({ realmId, userId: user.id, orgId: null, mfa: "Password" }))
          .tokens as {
            accessToken: string;
            refreshToken: string;
          },
      close: () => beds.close(),
    };
  } catch (err) {
    await beds.close();
    throw err;
  }
}

/** `svc start` on `runtime` on a fresh Postgres database, over HTTP. */
async function server(runtime: "node" | "deno"): Promise<Target> {
  const signer = Deno.env.get("SVC_RSA_NATIVE_SIGNER");
  const running = await startSvcOnPostgres(
    { ...SVC_BENCH_ENV, ...(signer === undefined ? {} : { SVC_RSA_NATIVE_SIGNER: signer }) },
    runtime,
  );
  try {
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${running.url}${path}`, { ...init, redirect: "manual" });
    const login = async (email: string) => {
      const res = await call("/auth/login", {
        method: "POST",
        headers: JSON_TYPE,
        body: JSON.stringify({ email, password: SVC_BENCH_ENV.SVC_BOOTSTRAP_ADMIN_PASSWORD }),
      });
      if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${await res.text()}`);
      return await res.json() as { accessToken: string; refreshToken: string };
    };
    const adminToken = (await login(SVC_BENCH_ENV.SVC_BOOTSTRAP_ADMIN_EMAIL)).accessToken;
    const admin = (path: string, body: unknown) =>
      call(path, {
        method: "POST",
        headers: { ...JSON_TYPE, Authorization: `Bearer ${adminToken}` },
        body: JSON.stringify(body),
      });
    const user = await admin("/svc-admin/users", {
      email: "bench@example.test",
      password: SVC_BENCH_ENV.SVC_BOOTSTRAP_ADMIN_PASSWORD,
      emailVerified: true,
    });
    if (user.status !== 201) throw new Error(await user.text());
    await user.body?.cancel();
    // svc's Postgres backends, found through a connection of the bench's own to that database.
    const cpu = await serverCpu(running.pid, running.databaseUrl!);
    return {
      call,
      now: () => Date.now(),
      admin,
      signIn: () => login("bench@example.test"),
      cpu: () => cpu.read(),
      async close() {
        await cpu.close();
        await running.stop();
      },
    };
  } catch (err) {
    await running.stop();
    throw err;
  }
}

const target = RUNTIME === null ? await inProcess() : await server(RUNTIME);
try {
  const created = await target.admin("/svc-admin/oidc/clients", {
    clientId: "bench",
    clientType: "confidential",
    redirectUris: [REDIRECT],
    allowedScopes: ["openid", "offline_access"],
    tokenEndpointAuthMethod: "client_secret_basic",
  });
  if (created.status !== 201) throw new Error(await created.text());
  const basic = `Basic ${btoa(`bench:${(await created.json()).clientSecret}`)}`;
  const createdLean = await target.admin("/svc-admin/oidc/clients", {
    clientId: "bench-lean",
    clientType: "confidential",
    redirectUris: [REDIRECT],
    allowedScopes: ["openid", "offline_access"],
    tokenEndpointAuthMethod: "client_secret_basic",
    idTokenOnRefresh: false,
  });
  const basicLean = createdLean.status === 201
    ? `Basic ${btoa(`bench-lean:${(await createdLean.json()).clientSecret}`)}`
    : null;
  if (basicLean === null) await createdLean.body?.cancel();
  const account = await target.admin("/svc-admin/service-accounts", {
    key: "bench-job",
    displayName: "Bench",
  });
  if (account.status !== 201) throw new Error(await account.text());
  const sas = (await account.json()).secret as string;

  /** A new OIDC refresh chain: a browser session, an authorization code, its exchange. */
  const oidcChain = async (clientId: string, auth: string): Promise<string> => {
    const browser = await target.signIn();
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: "openid offline_access",
      state: "s",
    });
    const res = await target.call(`/oidc/authorize?${query}`, {
      headers: { Cookie: `svc_at=${browser.accessToken}` },
    });
    await res.body?.cancel();
    const code = new URL(res.headers.get("Location")!).searchParams.get("code")!;
    const tokens = await target.call("/oidc/token", {
      method: "POST",
      headers: { ...FORM, Authorization: auth },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT })
        .toString(),
    });
    return (await tokens.json()).refresh_token;
  };
  const nativeChain = async (): Promise<string> => (await target.signIn()).refreshToken;

  const oidcGrant = (auth: string) => async (token: string): Promise<string> => {
    const res = await target.call("/oidc/token", {
      method: "POST",
      headers: { ...FORM, Authorization: auth },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token }).toString(),
    });
    const body = await res.json();
    if (!body.refresh_token) throw new Error(`oidc refresh: ${JSON.stringify(body)}`);
    return body.refresh_token;
  };
  const nativeGrant = async (token: string): Promise<string> => {
    const res = await target.call("/auth/refresh", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refreshToken: token }),
    });
    const body = await res.json();
    if (!body.refreshToken) throw new Error(`native refresh: ${JSON.stringify(body)}`);
    return body.refreshToken;
  };

  const ccGrant = async (token: string): Promise<string> => {
    const res = await target.call("/oidc/token", {
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

  /**
   * The lean client's refresh with a DPoP proof (RFC 9449) on every request: the proofs are signed
   * (ES256) before the batch's timer starts, so the batch pays what the server does for one (its
   * checks, its signature's verification, the thumbprint, the single-use `jti` insert, the bound
   * access token).
   */
  const dpopKeys = await generateKeyPair("ES256");
  const dpopJwk = await exportJWK(dpopKeys.publicKey);
  const tokenEndpoint = (await (await target.call("/.well-known/openid-configuration")).json())
    .token_endpoint as string;
  const proofs: string[] = [];
  const signProofs = async (count: number) => {
    proofs.length = 0;
    for (let i = 0; i < count; i++) {
      proofs.push(
        await new SignJWT({ htm: "POST", htu: tokenEndpoint, jti: crypto.randomUUID() })
          .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: dpopJwk })
          .setIssuedAt(Math.floor(target.now() / 1000))
          .sign(dpopKeys.privateKey),
      );
    }
  };
  const dpopGrant = (auth: string) => async (token: string): Promise<string> => {
    const res = await target.call("/oidc/token", {
      method: "POST",
      headers: { ...FORM, Authorization: auth, DPoP: proofs.pop()! },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token }).toString(),
    });
    const body = await res.json();
    if (!body.refresh_token || body.token_type !== "DPoP") {
      throw new Error(`oidc dpop refresh: ${JSON.stringify(body)}`);
    }
    return body.refresh_token;
  };

  type Kind = "native" | "oidc" | "oidc-lean" | "oidc-dpop" | "cc";
  const chainsOf = (make: () => Promise<string>) => Promise.all(Array.from({ length: CHAINS }, make));
  interface Batches {
    chains: string[];
    grant: (token: string) => Promise<string>;
    /** Untimed work before a batch of `grants` (the DPoP proofs). */
    prepare?: (grants: number) => Promise<void>;
  }
  const makers: Partial<Record<Kind, () => Promise<Batches>>> = {
    native: async () => ({ chains: await chainsOf(nativeChain), grant: nativeGrant }),
    oidc: async () => ({ chains: await chainsOf(() => oidcChain("bench", basic)), grant: oidcGrant(basic) }),
    ...(basicLean !== null
      ? {
        "oidc-lean": async () => ({
          chains: await chainsOf(() => oidcChain("bench-lean", basicLean)),
          grant: oidcGrant(basicLean),
        }),
        "oidc-dpop": async () => ({
          chains: await chainsOf(() => oidcChain("bench-lean", basicLean)),
          grant: dpopGrant(basicLean),
          prepare: signProofs,
        }),
      }
      : {}),
    cc: () => Promise.resolve({ chains: Array.from({ length: CHAINS }, () => ""), grant: ccGrant }),
  };
  const names = (Object.keys(makers) as Kind[]).filter((kind) =>
    kind === "native" || KINDS?.includes(kind) !== false
  );
  const kinds: Partial<Record<Kind, Batches>> = {};
  for (const kind of names) kinds[kind] = await makers[kind]!();
  /** Per kind, over the measured rounds: grants, and CPU seconds of svc and of its Postgres backends. */
  const spent = Object.fromEntries(names.map((kind) => [kind, { grants: 0, svc: 0, postgres: 0 }]));
  const batch = async (kind: Kind, grants: number, measured = true): Promise<number> => {
    const { chains, grant, prepare } = kinds[kind]!;
    const perChain = Math.ceil(grants / chains.length);
    await prepare?.(perChain * chains.length);
    const cpuBefore = measured ? await target.cpu?.() : undefined;
    const started = performance.now();
    await Promise.all(chains.map(async (_, i) => {
      for (let n = 0; n < perChain; n++) chains[i] = await grant(chains[i]);
    }));
    const rate = perChain * chains.length / ((performance.now() - started) / 1000);
    if (cpuBefore !== undefined) {
      const cpuAfter = (await target.cpu?.())!;
      spent[kind].grants += perChain * chains.length;
      spent[kind].svc += cpuAfter.svc - cpuBefore.svc;
      spent[kind].postgres += cpuAfter.postgres - cpuBefore.postgres;
    }
    return rate;
  };
  // Warm-up: keys loaded, statements prepared, JIT, the client cache filled.
  for (const kind of names) await batch(kind, CHAINS * 10, false);

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
      } (goal for OIDC refresh >= 0.8); ${GRANTS} grants x ${CHAINS} chains x ${ROUNDS} rounds; svc ${
        RUNTIME === null
          ? "in process (Deno, app.request)"
          : `on ${RUNTIME === "node" ? "Node" : "Deno"} over HTTP`
      }; load average ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`,
  );
  console.log(
    `median of the rounds' ratios: ${
      names.filter((k) => k !== "native").map((k) => `${k} ${median(roundRatios(k)).toFixed(2)}`).join(", ")
    }; load ${Deno.loadavg().join(" ")}`,
  );
  if (names.includes("oidc") && names.includes("oidc-lean")) {
    // The refreshed ID token's share of a grant (an ID token's claims and its RS256 signature): the
    // time per grant the default client spends beyond the lean one. Even if everything else an OIDC
    // refresh does (client authentication, the form, the larger statement) cost nothing more than
    // the native grant, the default client's ratio could not exceed native ÷ (native + that share).
    const perGrant = (kind: Kind) => 1 / mean(totals[kind]);
    const idToken = perGrant("oidc") - perGrant("oidc-lean");
    console.log(
      `the refreshed ID token: ${(idToken * 1000).toFixed(3)} ms per grant (1/oidc - 1/oidc-lean); ` +
        `the default client's ratio is at most ${
          (perGrant("native") / (perGrant("native") + idToken)).toFixed(2)
        } while it signs one (native ${(perGrant("native") * 1000).toFixed(3)} ms per grant)`,
    );
  }
  if (names.includes("oidc-dpop") && names.includes("oidc-lean")) {
    const perGrant = (kind: Kind) => 1 / mean(totals[kind]);
    console.log(
      `a DPoP proof at the token endpoint: ${
        ((perGrant("oidc-dpop") - perGrant("oidc-lean")) * 1000).toFixed(3)
      } ms per grant (1/oidc-dpop - 1/oidc-lean); oidc-dpop ÷ oidc-lean ${
        (mean(totals["oidc-dpop"]) / mean(totals["oidc-lean"])).toFixed(2)
      }`,
    );
  }
  if (target.cpu !== undefined) {
    // CPU per grant does not depend on how busy the machine is the way a rate does.
    console.log(
      `CPU ms per grant (svc process / its Postgres backends): ${
        names.map((kind) => {
          const { grants, svc, postgres } = spent[kind];
          return `${kind} ${(svc * 1000 / grants).toFixed(2)} / ${(postgres * 1000 / grants).toFixed(2)}`;
        }).join(", ")
      }`,
    );
  }
} finally {
  await target.close();
}
