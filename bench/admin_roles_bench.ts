/**
 * Role assignment through the admin API with snapshot eviction, beside a primary-key read in the
 * same run:
 *
 *     deno bench -A bench/admin_roles_bench.ts                      # PGlite in memory
 *     SVC_BENCH_POSTGRES=1 deno bench -A bench/admin_roles_bench.ts # a fresh Postgres schema
 *
 * - baseline: `SELECT … FROM roles WHERE id = $1` (the primary-key read every assignment does);
 * - `POST /svc-admin/role-assignments` by the realm administrator through the full app: fence,
 *   validation, escalation guard, the assignment and its audit entry in one transaction, then the
 *   eviction of the assignee's snapshot; the assignee's snapshot is warm before each call (so the
 *   eviction matters), and the assignment is removed after it (outside the timing);
 * - the same followed by the assignee's next authorized request (`GET /profile/permissions`),
 *   which rebuilds the evicted snapshot and sees the new grant.
 *
 * @module
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../test/support/admin.ts";
import { seeder } from "../test/support/seed.ts";

const bed = await adminBed({}, { postgres: Deno.env.get("SVC_BENCH_POSTGRES") === "1" });
const db = bed.bed.database.db;
const seed = seeder(db);
const assignee = await seed.user(bed.realmId);
await db.insertInto("org_memberships").values({ org_id: bed.orgA, user_id: assignee, created_at: new Date() })
  .execute();
const { tokens } = await bed.bed.auth.sessions.signIn({
  realmId: bed.realmId,
  userId: assignee,
  orgId: bed.orgA,
  mfa: "Password",
});
const assigneeHeaders = { Authorization: `Bearer ${tokens.accessToken}` };
const role = await (await bed.request("POST", "/svc-admin/roles", {
  body: {
    key: "bench-reader",
    displayName: "Reader",
    orgId: bed.orgA,
    grants: [{ pattern: "docs:org:read", effect: "Allow" }],
  },
})).json();

async function assign(): Promise<string> {
  const res = await bed.request("POST", "/svc-admin/role-assignments", {
    body: { roleId: role.id, principalKind: "User", principalId: assignee },
  });
  if (res.status !== 201) throw new Error(`assignment: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

async function permissions(): Promise<string[]> {
  const res = await bed.app.request("/profile/permissions", { headers: assigneeHeaders });
  return (await res.json()).permissions;
}

/** The assignee's snapshot is cached, and no assignment is left. */
async function reset(assignmentId: string | null): Promise<void> {
  if (assignmentId !== null) await bed.bed.storage.roles.unassign(assignmentId);
  await bed.bed.snapshots.invalidateUser(assignee);
  assert.deepEqual(await permissions(), []); // warm, without the grant
}

// Warm up every path once.
for (let i = 0; i < 20; i++) {
  await reset(null);
  const id = await assign();
  assert.deepEqual(await permissions(), ["docs:org:read"]);
  await bed.bed.storage.roles.unassign(id);
}

Deno.bench({
  name: "primary-key read of a role",
  group: "role assignment",
  baseline: true,
  async fn() {
    await db.selectFrom("roles").selectAll().where("id", "=", role.id).executeTakeFirstOrThrow();
  },
});

Deno.bench({
  name: "POST /svc-admin/role-assignments (warm assignee snapshot evicted)",
  group: "role assignment",
  async fn(b) {
    await reset(null);
    b.start();
    const id = await assign();
    b.end();
    await bed.bed.storage.roles.unassign(id);
  },
});

Deno.bench({
  name: "assignment + the assignee's next request sees it",
  group: "role assignment",
  async fn(b) {
    await reset(null);
    b.start();
    const id = await assign();
    const seen = await permissions();
    b.end();
    if (seen.length !== 1) throw new Error(`not evicted: ${seen}`);
    await bed.bed.storage.roles.unassign(id);
  },
});

globalThis.addEventListener("unload", () => void bed.close());
