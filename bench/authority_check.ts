/**
 * The cost of the authority rule (issue 24) on the admin routes: `GET /svc-admin/users?limit=50`
 * (today's users list, as the realm administrator) against the same request followed by the
 * authority check a managing route now makes (`requireAuthorityOver`: the subject's grants in
 * every context it holds them, the caller's authority, the comparison), and against the check
 * alone, rounds interleaved in the same run:
 *
 *     deno run -A bench/authority_check.ts [--postgres] [--rounds 60]
 *
 * The subject is the expensive kind: a member of two organizations holding `svc-admin` pinned
 * to one, an org role in the other and a realm-wide role (four contexts to load and judge). The
 * snapshots are cached as in a running server. Goal: list + check ≤ 1.1× the list. A script, not a
 * `deno bench` file (named without `_bench`, like `scale_out.ts`), so `npm run bench` does not run it.
 *
 * @module
 */
import { requireAuthorityOver } from "../http/admin/authority.ts";
import { adminBed } from "../test/support/admin.ts";
import { seeder } from "../test/support/seed.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
const POSTGRES = Deno.args.includes("--postgres");
const ROUNDS = arg("rounds", 60);
const USERS = 2_000;

const admin = await adminBed({}, { postgres: POSTGRES });
try {
  const { bed, realmId, orgA, orgB } = admin;
  const seed = seeder(bed.database.db);
  for (let i = 0; i < USERS; i++) await seed.user(realmId);
  const subject = await seed.user(realmId);
  await bed.storage.organizations.addMember(orgA, subject);
  await bed.storage.organizations.addMember(orgB, subject);
  const svcAdmin = (await bed.storage.roles.getByKey(realmId, "svc-admin", null))!.id;
  await seed.assign(realmId, svcAdmin, { kind: "User", id: subject }, orgA);
  const orgRole = await seed.role(realmId, "bench-org", [{ pattern: "svc:org:users-read" }], orgB);
  await seed.assign(realmId, orgRole, { kind: "User", id: subject }, orgB);
  const realmRole = await seed.role(realmId, "bench-realm", [{ pattern: "docs:global:read" }]);
  await seed.assign(realmId, realmRole, { kind: "User", id: subject });
  await bed.snapshots.invalidateAll();

  const deps = { storage: bed.storage, snapshots: bed.snapshots };
  const scope = {
    principal: { userId: admin.users.global, realmId, orgId: null, sessionId: null },
    global: true,
    orgId: null,
  };
  const list = async () => {
    const res = await admin.request("GET", "/svc-admin/users?limit=50");
    if (res.status !== 200) throw new Error(`list: ${res.status} ${await res.text()}`);
    await res.json();
  };
  const check = () => requireAuthorityOver(deps, scope, { kind: "User", id: subject });
  await check(); // the root covers it: no throw

  const measures: Record<string, () => Promise<unknown>> = {
    "users list `GET /svc-admin/users?limit=50` (today)": list,
    "users list + authority check": async () => {
      await list();
      await check();
    },
    "authority check alone": check,
  };
  const samples = new Map<string, number[]>(Object.keys(measures).map((name) => [name, []]));
  for (let round = -5; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(measures)) {
      const t0 = performance.now();
      await run();
      if (round >= 0) samples.get(name)!.push(performance.now() - t0);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const medians = new Map([...samples].map(([name, xs]) => [name, median(xs)]));
  const base = medians.get("users list `GET /svc-admin/users?limit=50` (today)")!;
  console.log(
    `${POSTGRES ? "Postgres" : "PGlite"}: ${USERS} users; ${ROUNDS} interleaved rounds, medians`,
  );
  console.log("| measure | median | vs list |");
  console.log("| --- | ---: | ---: |");
  for (const [name, ms] of medians) {
    console.log(`| ${name} | ${ms.toFixed(2)} ms | ${(ms / base).toFixed(2)}× |`);
  }
  const ratio = medians.get("users list + authority check")! / base;
  console.log(`list + check / list: ${ratio.toFixed(2)}× (goal ≤ 1.1×)`);
} finally {
  await admin.close();
}
