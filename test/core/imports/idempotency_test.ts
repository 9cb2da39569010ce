/**
 * Idempotency as a property (spec appendix): any sequence of imports of overlapping exports
 * leaves a realm exactly as one import of their union does; a dry run of any export writes
 * nothing and reports the counts of the real run that follows.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { runImport } from "../../../core/imports/engine.ts";
import type { ImportedUser, ImportItem } from "../../../core/imports/model.ts";
import type { Storage } from "../../../core/storage/storage.ts";
import { importBed } from "./support.ts";

const BCRYPT_A = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
const BCRYPT_B = "$2b$04$.umPE/6kJRO5OijOTz3jZ.2i.MFCC9fOp99JjWjYp9calWRLIJAvm";
const ROLES = ["Admin", "Billing Team", "viewer"];
const GROUPS = ["/staff", "/staff/ops", "Contractors"];

/** The universe: each user's data is fixed, so that overlapping exports agree. */
const UNIVERSE: ImportedUser[] = Array.from({ length: 8 }, (_, i) => ({
  email: i % 2 === 0 ? `User${i}@Example.test` : ` user${i}@example.test`,
  displayName: i % 3 === 0 ? null : `User ${i}`,
  emailVerified: i % 2 === 1,
  suspended: i === 4,
  credential: i === 5 ? null : { algorithm: "bcrypt", hash: i % 2 === 0 ? BCRYPT_A : BCRYPT_B },
  // Odd users have neither roles nor groups: they take the engine's bulk path for new users.
  roleKeys: i % 2 === 1 ? [] : ROLES.filter((_, r) => (i + r) % 3 !== 0),
  groupKeys: i % 2 === 1 ? [] : GROUPS.filter((_, g) => (i + g) % 2 === 0),
  attributes: { index: i, team: `t${i % 2}` },
}));

function itemsOf(indices: readonly number[]): ImportItem[] {
  return [
    ...ROLES.map((key): ImportItem => ({ kind: "role", role: { key, displayName: key } })),
    ...indices.map((i): ImportItem => ({ kind: "user", user: UNIVERSE[i] })),
  ];
}

/** A realm's imported state, without ids or times. */
async function stateOf(storage: Storage, realmId: string) {
  const users = await storage.users.listByRealm(realmId, { offset: 0, limit: 1000 });
  const roles = new Map((await storage.roles.list(realmId)).map((r) => [r.id, `${r.key}=${r.displayName}`]));
  const out = [];
  for (const user of users.sort((a, b) => a.email.localeCompare(b.email))) {
    const credentials = (await storage.passwordCredentials.list(user.id)).map((c) =>
      `${c.algorithm}:${c.hash}`
    );
    const assigned = (await storage.roles.listAssignmentsForPrincipal("User", user.id)).map((a) =>
      roles.get(a.roleId)
    );
    const groups = (await storage.groups.listGroupsOfUser(user.id)).map((g) => `${g.key}=${g.displayName}`);
    out.push({
      email: user.email,
      displayName: user.displayName,
      emailVerified: user.emailVerified,
      status: user.status,
      attributes: user.attributes,
      credentials: credentials.sort(),
      roles: assigned.sort(),
      groups: groups.sort(),
    });
  }
  return { users: out, roles: [...roles.values()].sort() };
}

Deno.test("imports: a sequence of overlapping exports equals one import of their union; dry runs write nothing", async () => {
  const bed = await importBed(undefined, 4);
  try {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.nat({ max: UNIVERSE.length - 1 }), { maxLength: 8 }), {
          minLength: 1,
          maxLength: 3,
        }),
        async (exports) => {
          run++;
          const sequence = (await bed.storage.realms.create({ name: `seq-${run}`, displayName: "S" })).id;
          const union = (await bed.storage.realms.create({ name: `union-${run}`, displayName: "U" })).id;
          for (const indices of exports) {
            const before = await bed.rowCounts();
            const dry = await runImport(
              bed.deps,
              { targetRealmId: sequence, dryRun: true },
              itemsOf(indices),
            );
            assert.deepEqual(await bed.rowCounts(), before, "a dry run writes nothing");
            const real = await runImport(
              bed.deps,
              { targetRealmId: sequence, dryRun: false },
              itemsOf(indices),
            );
            assert.deepEqual({ ...dry, dryRun: false }, real, "a dry run reports the counts of the real run");
          }
          const all = [...new Set(exports.flat())];
          await runImport(bed.deps, { targetRealmId: union, dryRun: false }, itemsOf(all));
          assert.deepEqual(await stateOf(bed.storage, sequence), await stateOf(bed.storage, union));
        },
      ),
      { numRuns: 12 },
    );
  } finally {
    await bed.close();
  }
});
