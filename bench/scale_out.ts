/**
 * `deno run -A bench/scale_out.ts [--seconds 10] [--chains 16] [--instances 1,3]`: refresh grants per second through
 * one instance and through three instances on one Postgres server, measured in the same run. Each
 * of `--chains` clients signs in once, then refreshes in a loop (each refresh rotates the token,
 * so a chain is sequential), its requests spread round-robin over the instances as a load
 * balancer would. Reports grants/s, p50 and p99 latency, and the RSS of each instance afterwards.
 */
import {
  FAST_SERVER_PASSWORD_ENV,
  freshServerDatabase,
  type RealServer,
  startServer,
} from "../test/support/server.ts";

const arg = (name: string, fallback: number) =>
  Deno.args.includes(name) ? Number(Deno.args[Deno.args.indexOf(name) + 1]) : fallback;
const SECONDS = arg("--seconds", 10);
const CHAINS = arg("--chains", 16);
const RUNTIME = Deno.args.includes("--runtime") ? Deno.args[Deno.args.indexOf("--runtime") + 1] : "deno";

function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function measure(instances: number) {
  const database = await freshServerDatabase("svc_scale_bench");
  const servers: RealServer[] = [];
  try {
    const env = {
      SVC_PORT: "0",
      SVC_BASE_URL: "http://localhost:18080",
      SVC_DATABASE_URL: database.url,
      SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test",
      SVC_BOOTSTRAP_ADMIN_PASSWORD: "bootstrap secret",
      SVC_MAINTENANCE_INTERVAL_SECONDS: "0",
      // Many sign-ins from one address in a minute: no step-up for this measurement.
      SVC_RISK_STEP_UP_AT: "1000",
      SVC_RISK_BLOCK_AT: "1000",
      SVC_ABUSE_PER_IP_LIMIT: "100000",
      SVC_ABUSE_PER_IP_ACCOUNT_LIMIT: "100000",
      ...FAST_SERVER_PASSWORD_ENV,
    };
    servers.push(...await Promise.all(Array.from({ length: instances }, () => startServer(RUNTIME, env))));
    const urls = servers.map((s) => s.url);
    const tokens: string[] = [];
    for (let i = 0; i < CHAINS; i++) {
      const res = await fetch(`${urls[i % instances]}/auth/login`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email: "root@example.test", password: "bootstrap secret" }),
      });
      const body = await res.json();
      if (!body.refreshToken) throw new Error(`sign-in: ${JSON.stringify(body)}`);
      tokens.push(body.refreshToken);
    }
    const latencies: number[] = [];
    let failures = 0;
    let turn = 0;
    const deadline = performance.now() + SECONDS * 1000;
    const started = performance.now();
    await Promise.all(tokens.map(async (first) => {
      let token = first;
      while (performance.now() < deadline) {
        const url = urls[turn++ % instances];
        const t0 = performance.now();
        const res = await fetch(`${url}/auth/refresh`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ refreshToken: token }),
        });
        const body = await res.json();
        if (res.status !== 200) {
          failures++;
          return;
        }
        latencies.push(performance.now() - t0);
        token = body.refreshToken;
      }
    }));
    const elapsed = (performance.now() - started) / 1000;
    latencies.sort((x, y) => x - y);
    return {
      instances,
      grantsPerSecond: latencies.length / elapsed,
      p50: latencies[Math.floor(latencies.length * 0.5)],
      p99: latencies[Math.floor(latencies.length * 0.99)],
      failures,
      rss: servers.map((s) => rssMiB(s.pid)),
    };
  } finally {
    await Promise.allSettled(servers.map((s) => s.stop()));
    await database.drop();
  }
}

const ROUNDS = Deno.args.includes("--instances")
  ? Deno.args[Deno.args.indexOf("--instances") + 1].split(",").map(Number)
  : [1, 3];
const results = [];
for (const instances of ROUNDS) results.push(await measure(instances));
console.log(`refresh grants, ${CHAINS} concurrent chains, ${SECONDS} s each, one Postgres server`);
console.log("| instances | grants/s | p50 | p99 | failed chains | RSS per instance |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const r of results) {
  console.log(
    `| ${r.instances} | ${r.grantsPerSecond.toFixed(0)} | ${r.p50.toFixed(1)} ms | ${
      r.p99.toFixed(1)
    } ms | ${r.failures} | ${r.rss.map((m) => `${m.toFixed(0)} MiB`).join(", ")} |`,
  );
}
const one = results.find((r) => r.instances === 1);
const three = results.find((r) => r.instances === 3);
if (one && three) {
  console.log(`three instances / one: ${(three.grantsPerSecond / one.grantsPerSecond).toFixed(2)}×`);
}
