/**
 * Offset pages of an organization's members while the membership grows (spec 2.10: stable
 * order, creation time then id, with offset and limit): a member that existed when paging began
 * is listed exactly once, however many members join between (or during) page reads, whatever
 * the clock does (ties, steps back). On both drivers, then with real concurrency on Postgres.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom, randomUuid } from "../../../core/random.ts";
import { freshPostgres } from "../../support/db.ts";
import { conformance, storesOver } from "./support.ts";

type Stores = ReturnType<typeof storesOver>;

/** Every page of `orgId`'s members, `between(pageIndex)` running after each page read. */
async function pageAll(
  stores: Stores,
  orgId: string,
  limit: number,
  between: (page: number) => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  for (let offset = 0, page = 0;; offset += limit, page++) {
    const items = await stores.organizations.listMembers(orgId, { offset, limit });
    seen.push(...items.map((m) => m.userId));
    if (items.length < limit) return seen;
    await between(page);
  }
}

/** Each of `existing` appears exactly once in `seen`, and nothing appears twice. */
function assertEachOnce(seen: readonly string[], existing: readonly string[]): void {
  assert.equal(new Set(seen).size, seen.length, "a member was listed twice");
  const listed = new Set(seen);
  const skipped = existing.filter((id) => !listed.has(id));
  assert.deepEqual(skipped, [], "members that existed when paging began were skipped");
}

conformance({
  "org members paging": {
    "property: pages over a growing membership never skip or repeat an existing member": async (
      { stores, realm, org, user, clock },
    ) => {
      const r = await realm();
      const clockStep = fc.integer({ min: -3, max: 3 }); // ties and steps back included
      await fc.assert(
        fc.asyncProperty(
          fc.array(clockStep, { minLength: 0, maxLength: 12 }),
          fc.integer({ min: 1, max: 4 }),
          fc.array(fc.array(clockStep, { maxLength: 3 }), { maxLength: 8 }),
          async (initialSteps, limit, growth) => {
            const o = await org(r.id);
            const add = async (step: number) => {
              clock.set(clock.now() + step);
              await stores.organizations.addMember(o.id, (await user(r.id)).id);
            };
            for (const step of initialSteps) await add(step);
            const existing = (await stores.organizations.listMembers(o.id)).map((m) => m.userId);
            const seen = await pageAll(stores, o.id, limit, async (page) => {
              for (const step of growth[page] ?? []) await add(step);
            });
            assertEachOnce(seen, existing);
          },
        ),
        { numRuns: 25 },
      );
    },
  },
});

Deno.test("postgres: paging while members join concurrently never skips or repeats an existing member", async () => {
  const database = await freshPostgres({ maxConnections: 12 });
  try {
    // The clock stands still: every membership of a run is created "at the same time".
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const stores = storesOver(database.db, clock);
    const realm = await stores.realms.create({
      name: `paging-${randomUuid(cryptoRandom)}`,
      displayName: "P",
    });
    const newUser = async () =>
      (await stores.users.create({ realmId: realm.id, email: `${randomUuid(cryptoRandom)}@example.com` })).id;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 5, max: 25 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 5, max: 30 }),
        async (initial, limit, joining) => {
          const org = await stores.organizations.create({
            realmId: realm.id,
            name: `org-${randomUuid(cryptoRandom)}`,
            displayName: "Org",
          });
          for (let i = 0; i < initial; i++) await stores.organizations.addMember(org.id, await newUser());
          const existing = (await stores.organizations.listMembers(org.id)).map((m) => m.userId);
          const joiners = await Promise.all(Array.from({ length: joining }, newUser));
          // Joins race the page reads on other connections of the pool.
          const [seen] = await Promise.all([
            pageAll(stores, org.id, limit, () => new Promise((resolve) => setTimeout(resolve, 1))),
            Promise.all(joiners.map((id) => stores.organizations.addMember(org.id, id))),
          ]);
          assertEachOnce(seen, existing);
          assert.equal(await stores.organizations.countMembers(org.id), initial + joining);
        },
      ),
      { numRuns: 8 },
    );
  } finally {
    await database.close();
  }
});
