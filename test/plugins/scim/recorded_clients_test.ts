/**
 * Recorded request sequences in the shapes Okta and Entra ID document (fixtures/okta.json,
 * fixtures/entra.json), replayed against a connection of organization A: every answer's status
 * and the documented fields, `application/scim+json`, and svc's state after each step (the user
 * is a member of the organization; deactivation suspends it through svc's suspend path and ends
 * its session at once; reactivation restores it; group pushes change the organization group's
 * members; deleting removes the membership). Every write is one audit entry with actor kind
 * `System` and actor id `scim:connection:<id>`; a write that changes nothing writes none; events
 * `user.*` and `group.*` are emitted.
 */
import { strict as assert } from "node:assert";
import { scimBed } from "./bed.ts";

interface Step {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  status: number;
  save?: Record<string, string>;
  expect?: Record<string, unknown>;
  check?: string;
}

const fixture = async (name: string): Promise<{ steps: Step[] }> =>
  JSON.parse(await Deno.readTextFile(new URL(`./fixtures/${name}.json`, import.meta.url)));

/** Reads `a.b.0.c` (keys with dots, such as URNs, are tried whole first). */
function at(value: unknown, path: string): unknown {
  if (path === "") return value;
  if (value === null || typeof value !== "object") return undefined;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => path === k || path.startsWith(`${k}.`)).sort((a, b) =>
    b.length - a.length
  );
  for (const key of keys) {
    const found = at(obj[key], path.slice(key.length + 1));
    if (found !== undefined) return found;
  }
  return undefined;
}

for (const client of ["okta", "entra"]) {
  Deno.test(`recorded ${client} provisioning sequence`, async (t) => {
    const b = await scimBed();
    try {
      const bed = b.plugged.admin.bed;
      const conn = await b.connection(b.orgA);
      const vars: Record<string, string> = {};
      const fill = (text: string) => text.replace(/\{(userId|groupId)\}/g, (_, k) => vars[k] ?? `{${k}}`);
      const fillDeep = (v: unknown): unknown => JSON.parse(fill(JSON.stringify(v)));
      let session: string | null = null;
      for (const step of (await fixture(client)).steps) {
        await t.step(step.name, async () => {
          const before = await b.chainLength();
          const eventsBefore = bed.events.length;
          const res = await b.scim(
            conn,
            step.method,
            fill(step.path),
            step.body === undefined ? undefined : fillDeep(step.body),
          );
          const text = await res.text();
          assert.equal(res.status, step.status, text);
          const body = text === "" ? null : JSON.parse(text);
          if (text !== "") assert.match(res.headers.get("Content-Type") ?? "", /^application\/scim\+json/);
          for (const [path, expected] of Object.entries(step.expect ?? {})) {
            assert.deepEqual(at(body, path), fillDeep(expected), `${path} in ${text}`);
          }
          for (const [name, path] of Object.entries(step.save ?? {})) vars[name] = String(at(body, path));
          if (step.body !== undefined) {
            assert.ok(!text.includes("1mz050nq"), "a password is never stored or answered");
          }
          const written = await b.chainLength() - before;
          const userId = vars.userId;
          const groupId = vars.groupId;
          if (step.method !== "GET" && res.status < 300 && step.check !== "no-audit") {
            assert.ok(written >= 1, "a change is audited");
            const entries = (await bed.storage.adminAudit.list(b.realmId)).slice(-written);
            for (const entry of entries) {
              assert.equal(entry.actorKind, "System");
              assert.equal(entry.actorId, `scim:connection:${conn.id}`);
            }
            assert.ok(bed.events.length > eventsBefore, "a change emits events");
            for (const e of bed.events.slice(eventsBefore)) assert.match(e.kind, /^(user|group)\./);
          }
          if (step.method === "GET") assert.equal(written, 0);
          switch (step.check) {
            case "member-active": {
              assert.equal(await bed.storage.organizations.isMember(b.orgA, userId), true);
              assert.equal((await bed.storage.users.get(userId))?.status, "Active");
              session = (await bed.auth.sessions.signIn({
                realmId: b.realmId,
                userId,
                orgId: b.orgA,
                mfa: "Password",
              }))
                .session.id;
              break;
            }
            case "suspended": {
              assert.equal((await bed.storage.users.get(userId))?.status, "Suspended");
              assert.equal(await bed.storage.sessions.getActive(session!), null, "the session ended at once");
              assert.ok(bed.events.slice(eventsBefore).some((e) => e.kind === "user.suspended"));
              break;
            }
            case "no-audit":
              assert.equal(written, 0);
              break;
            case "display-name-updated":
              assert.equal((await bed.storage.users.get(userId))?.displayName, "Another User");
              break;
            case "email-updated":
              assert.equal((await bed.storage.users.get(userId))?.email, "updatedemail@microsoft.com");
              break;
            case "in-group":
              assert.deepEqual((await bed.storage.groups.listMembers(groupId)).map((m) => m.userId), [
                userId,
              ]);
              assert.equal((await bed.storage.groups.get(groupId))?.orgId, b.orgA);
              break;
            case "not-in-group":
              assert.deepEqual(await bed.storage.groups.listMembers(groupId), []);
              break;
            case "group-gone":
              assert.equal(await bed.storage.groups.get(groupId), null);
              break;
            case "not-member":
              assert.equal(await bed.storage.organizations.isMember(b.orgA, userId), false);
              assert.ok(bed.events.slice(eventsBefore).some((e) => e.kind === "user.org_left"));
              break;
          }
        });
      }
      await t.step("the provisioning log holds the sequence with outcomes; the chain verifies", async () => {
        const log =
          await (await b.admin("GET", `/svc-admin/scim/connections/${conn.id}/log?limit=200`, "orgA")).json();
        const steps = (await fixture(client)).steps;
        assert.equal(log.items.length, steps.length);
        assert.deepEqual(
          log.items.map((i: { status: number }) => i.status).reverse(),
          steps.map((s) => s.status),
        );
        assert.equal((await bed.storage.adminAudit.verify(b.realmId)).valid, true);
      });
    } finally {
      await b.close();
    }
  });
}
