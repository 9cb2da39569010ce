/**
 * `deno run -A bench/node_ab.ts --base <dir>/cli/node.js [--rounds 5] [--grants 3000] [--clients 16]`:
 * svc on Node built from this checkout (`npm run build:node`'s command, into `.tmp/`) against
 * another Node bundle of svc (`--base`: for example one built from an earlier commit), both
 * `svc start` on fresh databases of the Postgres at `SVC_TEST_DATABASE_URL` with the peers bench's
 * settings (`startSvcOnPostgres`, `SVC_BENCH_ENV`), over HTTP, in alternating batches (which side
 * goes first alternates per round). Workloads: `client_credentials` grants of a service account
 * through `POST /oidc/token`, and `GET /profile/me` with a bearer access token (the per-request
 * machinery of every route). Prints each round's rates, then per side and workload the median
 * rate and the CPU milliseconds per request of svc's process and of its Postgres backends (which
 * do not depend on how busy the machine is the way a rate does), with the load average.
 *
 * To build a base bundle of an earlier commit:
 *
 *     git archive <commit> | tar -x -C .tmp/base && ln -s "$PWD/node_modules" .tmp/base/node_modules
 *     (cd .tmp/base && deno run -A cli/build-node.ts --outdir ../base-node)
 *
 * (a commit before `cli/build-node.ts`: `npm run build:node`'s command of that commit, with its
 * `--outdir` changed).
 *
 * `SVC_BENCH_NODE_FLAGS` (see `bench/peers/run.ts`) applies to both sides.
 *
 * @module
 */
import { startSvcOnPostgres, SVC_BENCH_ENV } from "./peers/run.ts";
import { serverCpu } from "./process_cpu.ts";

const arg = (name: string, fallback: string) =>
  Deno.args.includes(name) ? Deno.args[Deno.args.indexOf(name) + 1] : fallback;
const BASE = arg("--base", "");
const ROUNDS = Number(arg("--rounds", "5"));
const GRANTS = Number(arg("--grants", "3000"));
const CLIENTS = Number(arg("--clients", "16"));
const JSON_TYPE = { "Content-Type": "application/json" };
if (BASE === "") throw new Error("--base <path of a Node bundle's cli/node.js> is required");
if (Deno.env.get("SVC_BENCH_NODE_BUNDLE")) {
  throw new Error("unset SVC_BENCH_NODE_BUNDLE: one side is this checkout");
}

type Work = "cc" | "me";
interface Side {
  name: string;
  request: Record<Work, () => Promise<void>>;
  cpu(): Promise<{ svc: number; postgres: number }>;
  close(): Promise<void>;
}

async function side(name: string, bundle: string | undefined): Promise<Side> {
  const running = await startSvcOnPostgres(SVC_BENCH_ENV, "node", bundle);
  try {
    const call = (path: string, init: RequestInit = {}) => fetch(`${running.url}${path}`, init);
    const login = await call("/auth/login", {
      method: "POST",
      headers: JSON_TYPE,
      body: JSON.stringify({
        email: SVC_BENCH_ENV.SVC_BOOTSTRAP_ADMIN_EMAIL,
        password: SVC_BENCH_ENV.SVC_BOOTSTRAP_ADMIN_PASSWORD,
      }),
    });
    if (login.status !== 200) throw new Error(`${name}: login ${login.status}`);
    const accessToken = (await login.json()).accessToken as string;
    const account = await call("/svc-admin/service-accounts", {
      method: "POST",
      headers: { ...JSON_TYPE, Authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ key: "bench-job", displayName: "Bench" }),
    });
    if (account.status !== 201) throw new Error(`${name}: ${await account.text()}`);
    const ccBody = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: "bench-job",
      client_secret: (await account.json()).secret,
    }).toString();
    const cpu = await serverCpu(running.pid, running.databaseUrl!);
    return {
      name,
      request: {
        cc: async () => {
          const res = await call("/oidc/token", {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            body: ccBody,
          });
          const body = await res.json();
          if (!body.access_token) throw new Error(`${name} client_credentials: ${JSON.stringify(body)}`);
        },
        me: async () => {
          const res = await call("/profile/me", { headers: { Authorization: `Bearer ${accessToken}` } });
          if (res.status !== 200) throw new Error(`${name} /profile/me: ${res.status}`);
          await res.body?.cancel();
        },
      },
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

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const sides = [await side("this checkout", undefined), await side("base", BASE)];
try {
  const works: Work[] = ["cc", "me"];
  const spent = new Map<string, { n: number; svc: number; postgres: number; rates: number[] }>();
  const batch = async (s: Side, work: Work, n: number, measured: boolean) => {
    const perClient = Math.ceil(n / CLIENTS);
    const before = await s.cpu();
    const started = performance.now();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < perClient; i++) await s.request[work]();
    }));
    const rate = perClient * CLIENTS / ((performance.now() - started) / 1000);
    const after = await s.cpu();
    if (!measured) return rate;
    const key = `${s.name}|${work}`;
    const entry = spent.get(key) ?? { n: 0, svc: 0, postgres: 0, rates: [] };
    entry.n += perClient * CLIENTS;
    entry.svc += after.svc - before.svc;
    entry.postgres += after.postgres - before.postgres;
    entry.rates.push(rate);
    spent.set(key, entry);
    return rate;
  };
  // Warm-up: JIT, prepared statements, caches.
  for (const work of works) for (const s of sides) await batch(s, work, CLIENTS * 50, false);
  console.log(`load at the start ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  for (let round = 1; round <= ROUNDS; round++) {
    const line: string[] = [];
    for (const work of works) {
      const order = round % 2 === 1 ? sides : [...sides].reverse();
      for (const s of order) {
        line.push(`${work} ${s.name} ${(await batch(s, work, GRANTS, true)).toFixed(0)}/s`);
      }
    }
    console.log(`round ${round}: ${line.join(", ")}; load ${Deno.loadavg()[0].toFixed(2)}`);
  }
  for (const work of works) {
    for (const s of sides) {
      const e = spent.get(`${s.name}|${work}`)!;
      console.log(
        `${work} ${s.name}: median ${median(e.rates).toFixed(0)}/s; CPU ms per request svc ${
          (e.svc * 1000 / e.n).toFixed(3)
        } / its Postgres backends ${(e.postgres * 1000 / e.n).toFixed(3)}`,
      );
    }
  }
  console.log(`load at the end ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
} finally {
  for (const s of sides) await s.close();
}
