/**
 * `deno run -A bench/scale_out.ts [--seconds 10] [--chains 16] [--instances 1,3] [--runtime deno|node|bun]
 * [--workloads refresh,login,authenticated]`: requests per second through one instance and through
 * three instances on one Postgres server, measured in the same run. `--chains` concurrent clients
 * send their requests round-robin over the instances, as a load balancer would, each waiting for
 * its answer before the next request:
 *
 * - `refresh`: each client signs in once, then refreshes in a loop (each refresh rotates the token,
 *   so a chain is sequential);
 * - `login`: `POST /auth/login` with the password, argon2id at svc's default parameters on each
 *   instance's worker pool (one worker per core);
 * - `authenticated`: `GET /profile/permissions` with a bearer access token (token verification,
 *   the session check and the subject's snapshot).
 *
 * Reports requests/s, p50 and p99 latency per workload, and the RSS of each instance afterwards.
 */
import { freshServerDatabase, type RealServer, startServer } from "../test/support/server.ts";

const arg = (name: string, fallback: string) =>
  Deno.args.includes(name) ? Deno.args[Deno.args.indexOf(name) + 1] : fallback;
const SECONDS = Number(arg("--seconds", "10"));
const CHAINS = Number(arg("--chains", "16"));
const RUNTIME = arg("--runtime", "deno");
const WORKLOADS = arg("--workloads", "refresh,login,authenticated").split(",");
const ROUNDS = arg("--instances", "1,3").split(",").map(Number);
const EMAIL = "root@example.test";
const PASSWORD = "bootstrap secret";

function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** One request of a client: its state in, its next state out (null: the request failed). */
type Step = (url: string, state: string) => Promise<string | null>;

async function run(urls: string[], states: string[], step: Step): Promise<Figures> {
  const latencies: number[] = [];
  let failures = 0;
  let turn = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(states.map(async (first) => {
    let state = first;
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const next = await step(urls[turn++ % urls.length], state);
      if (next === null) {
        failures++;
        return;
      }
      latencies.push(performance.now() - t0);
      state = next;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((x, y) => x - y);
  return {
    perSecond: latencies.length / elapsed,
    p50: latencies[Math.floor(latencies.length * 0.5)] ?? NaN,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
    failures,
  };
}

async function login(url: string): Promise<{ accessToken: string; refreshToken: string } | null> {
  const res = await fetch(`${url}/auth/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
  });
  const body = await res.json();
  if (res.status !== 200) console.error("login", res.status, JSON.stringify(body));
  return res.status === 200 && body.refreshToken ? body : null;
}

const steps: Record<string, Step> = {
  refresh: async (url, token) => {
    const res = await fetch(`${url}/auth/refresh`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refreshToken: token }),
    });
    const body = await res.json();
    return res.status === 200 ? body.refreshToken : null;
  },
  login: async (url, state) => (await login(url)) === null ? null : state,
  authenticated: async (url, accessToken) => {
    const res = await fetch(`${url}/profile/permissions`, {
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    await res.body?.cancel();
    return res.status === 200 ? accessToken : null;
  },
};

async function measure(instances: number) {
  const database = await freshServerDatabase("svc_scale_bench");
  const servers: RealServer[] = [];
  try {
    const env = {
      SVC_PORT: "0",
      SVC_BASE_URL: "http://localhost:18080",
      SVC_DATABASE_URL: database.url,
      SVC_BOOTSTRAP_ADMIN_EMAIL: EMAIL,
      SVC_BOOTSTRAP_ADMIN_PASSWORD: PASSWORD,
      SVC_MAINTENANCE_INTERVAL_SECONDS: "0",
      // Many sign-ins from one address in a minute: no step-up and no throttling here.
      SVC_RISK_STEP_UP_AT: "1000",
      SVC_RISK_BLOCK_AT: "1000",
      SVC_ABUSE_PER_IP_LIMIT: "1000000",
      SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "1000000",
      SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT: "1000000",
      SVC_ABUSE_CREDENTIAL_STUFFING_DISTINCT_IDENTIFIERS: "1000000",
    };
    servers.push(...await Promise.all(Array.from({ length: instances }, () => startServer(RUNTIME, env))));
    const urls = servers.map((s) => s.url);
    const sessions = [];
    for (let i = 0; i < CHAINS; i++) {
      const session = await login(urls[i % instances]);
      if (session === null) throw new Error("sign-in failed");
      sessions.push(session);
    }
    const figures: Record<string, Figures> = {};
    for (const workload of WORKLOADS) {
      const states = workload === "refresh"
        ? sessions.map((s) => s.refreshToken)
        : sessions.map((s) => s.accessToken);
      figures[workload] = await run(urls, states, steps[workload]);
    }
    return { instances, figures, rss: servers.map((s) => rssMiB(s.pid)) };
  } finally {
    await Promise.allSettled(servers.map((s) => s.stop()));
    await database.drop();
  }
}

const results = [];
for (const instances of ROUNDS) results.push(await measure(instances));
console.log(`${RUNTIME}, ${CHAINS} concurrent clients, ${SECONDS} s per workload, one Postgres server`);
console.log("| workload | instances | requests/s | p50 | p99 | failed clients |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const workload of WORKLOADS) {
  for (const r of results) {
    const f = r.figures[workload];
    console.log(
      `| ${workload} | ${r.instances} | ${f.perSecond.toFixed(0)} | ${f.p50.toFixed(1)} ms | ${
        f.p99.toFixed(1)
      } ms | ${f.failures} |`,
    );
  }
  const one = results.find((r) => r.instances === 1);
  const three = results.find((r) => r.instances === 3);
  if (one && three) {
    console.log(
      `| ${workload}: three / one | | ${
        (three.figures[workload].perSecond / one.figures[workload].perSecond).toFixed(2)
      }× | | | |`,
    );
  }
}
for (const r of results) {
  console.log(`RSS after, ${r.instances} instance(s): ${r.rss.map((m) => `${m.toFixed(0)} MiB`).join(", ")}`);
}
