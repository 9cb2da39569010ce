import { strict as assert } from "node:assert";
import fc from "fast-check";
import { sql } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { createSqlMailOutboxStore } from "../../../storage/sql/mail-outbox.ts";
import { drivers, freshPostgres } from "../../support/db.ts";
import { seeder } from "../../support/seed.ts";

const T0 = Date.UTC(2026, 0, 1);
const REALM_1 = "9b0c3c1e-1111-4a4a-8888-000000000001";
const REALM_2 = "9b0c3c1e-2222-4a4a-8888-000000000002";
const USER_1 = "9b0c3c1e-1111-4a4a-8888-0000000000a1";

const message = (
  to: string,
  kind = "email_otp",
  subject = "s",
  addressee: { realmId: string; userId: string | null } = { realmId: REALM_1, userId: null },
) => ({
  ...addressee,
  kind,
  to,
  from: "no-reply@localhost",
  subject,
  text: `text for ${to}`,
  html: `<p>html for ${to}</p>`,
});

for (const driver of drivers) {
  Deno.test(`${driver.name}: mail outbox store`, async (t) => {
    const database = await driver.open();
    try {
      const clock = new ManualClock(T0);
      const outbox = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });

      await t.step("add, list in insertion order, filter, page and find the latest", async () => {
        const a = await outbox.add(message("a@example.com", "email_otp", "1"));
        assert.match(a.id, /^[0-9a-f-]{36}$/);
        assert.deepEqual(
          { ...a, id: "", seq: 0 },
          {
            ...message("a@example.com", "email_otp", "1"),
            id: "",
            seq: 0,
            createdAt: new Date(T0),
            sentAt: null,
            deliveryStatus: "pending",
            attempts: 0,
            nextAttemptAt: new Date(T0),
            lastError: null,
          },
        );
        // Same instant: order still follows insertion.
        await outbox.add(message("b@example.com", "password_reset", "2"));
        await outbox.add(message("A@Example.com", "invitation", "3"));
        await outbox.add(message("a@example.com", "email_otp", "4"));
        assert.deepEqual((await outbox.list()).map((m) => m.subject), ["1", "2", "3", "4"]);
        assert.deepEqual((await outbox.list({ to: "a@example.com" })).map((m) => m.subject), ["1", "3", "4"]);
        assert.deepEqual((await outbox.list({ kind: "email_otp" })).map((m) => m.subject), ["1", "4"]);
        assert.deepEqual((await outbox.list({ limit: 2 })).map((m) => m.subject), ["1", "2"]);
        const page = await outbox.list({ limit: 2 });
        assert.deepEqual((await outbox.list({ afterSeq: page[1].seq })).map((m) => m.subject), ["3", "4"]);
        assert.equal((await outbox.latest({ to: "A@EXAMPLE.COM" }))?.subject, "4");
        assert.equal((await outbox.latest({ kind: "invitation" }))?.subject, "3");
        assert.equal(await outbox.latest({ kind: "new_device_alert" }), null);
      });

      await t.step("markSent once; pending filter", async () => {
        const [first] = await outbox.list();
        clock.advance(1000);
        assert.equal(await outbox.markSent(first.id), true);
        assert.equal(await outbox.markSent(first.id), false);
        assert.equal(await outbox.markSent("not-a-uuid"), false);
        assert.equal(await outbox.markSent(crypto.randomUUID()), false);
        assert.deepEqual((await outbox.list())[0].sentAt, new Date(T0 + 1000));
        assert.deepEqual((await outbox.list({ pendingOnly: true })).map((m) => m.subject), ["2", "3", "4"]);
      });

      await t.step("prune by age", async () => {
        clock.advance(60_000);
        await outbox.add(message("c@example.com", "email_otp", "5"));
        assert.equal(await outbox.prune(new Date(T0 + 1)), 4);
        assert.deepEqual((await outbox.list()).map((m) => m.subject), ["5"]);
        await outbox.prune(new Date(T0 + 120_000));
      });

      await t.step(
        "the realm fences lists, counts and reads; erasure deletes by user, in the realm",
        async () => {
          const user1 = { realmId: REALM_1, userId: USER_1 };
          const old = await outbox.add(message("old@example.com", "password_reset", "u-old", user1));
          await outbox.add(message("new@example.com", "new_device_alert", "u-new", user1));
          await outbox.add(message("OLD@example.com", "sign_up", "r1-nobody"));
          const other = await outbox.add(
            message("old@example.com", "password_reset", "r2", { realmId: REALM_2, userId: null }),
          );
          assert.deepEqual((await outbox.list({ realmId: REALM_2 })).map((m) => m.subject), ["r2"]);
          assert.equal(await outbox.count({ realmId: REALM_1, to: "old@example.com" }), 2);
          assert.equal(await outbox.count({ realmId: "not-a-uuid" }), 0);
          assert.equal(await outbox.get(old.id, { realmId: REALM_2 }), null);
          assert.equal((await outbox.get(old.id, { realmId: REALM_1 }))?.userId, USER_1);
          assert.equal((await outbox.get(other.id, { realmId: REALM_2 }))?.realmId, REALM_2);
          assert.deepEqual(await outbox.addressesOf(USER_1), ["old@example.com", "new@example.com"]);
          // The user's mail whatever its address, and the realm's user-less mail to a past address.
          assert.equal(
            await outbox.deleteForUser(USER_1, {
              realmId: REALM_1,
              addresses: ["new@example.com", "Old@example.com"],
            }),
            3,
          );
          assert.deepEqual((await outbox.list()).map((m) => m.subject), ["r2"], "another realm's mail stays");
          assert.deepEqual(await outbox.addressesOf(USER_1), []);
          await outbox.prune(new Date(T0 + 10_000_000));
        },
      );
    } finally {
      await database.close();
    }
  });
}

for (const driver of drivers) {
  Deno.test(`${driver.name}: mail stored before messages carried a realm takes the realm of its one recipient`, async () => {
    const database = await driver.open();
    try {
      const seed = seeder(database.db);
      const realm1 = await seed.realm();
      const realm2 = await seed.realm();
      const only = await seed.user(realm1);
      const twice1 = await seed.user(realm1);
      const twice2 = await seed.user(realm2);
      const shared = "shared@example.test";
      await database.db.updateTable("users").set({ email: shared }).where("id", "in", [twice1, twice2])
        .execute();
      const onlyEmail = (await database.db.selectFrom("users").select("email").where("id", "=", only)
        .executeTakeFirstOrThrow()).email;
      // The schema as it was: no realm, no user; then the next boot's DDL.
      await sql`ALTER TABLE mail_outbox DROP COLUMN realm_id, DROP COLUMN user_id`.execute(database.db);
      await sql`DELETE FROM svc_schema_state`.execute(database.db);
      const legacy = async (to: string, subject: string) =>
        await sql`INSERT INTO mail_outbox (id, kind, recipient, sender, subject, text_body, html_body, created_at)
          VALUES (${crypto.randomUUID()}, 'password_reset', ${to}, 'svc', ${subject}, 't', 'h', ${new Date(
          T0,
        )})`
          .execute(database.db);
      await legacy(onlyEmail.toUpperCase(), "one user");
      await legacy(shared, "two realms");
      await legacy("nobody@example.test", "no user");
      await database.ensureSchema();
      const rows = await database.db.selectFrom("mail_outbox").select(["subject", "realm_id", "user_id"])
        .orderBy("seq").execute();
      assert.deepEqual(rows, [
        { subject: "one user", realm_id: realm1, user_id: only },
        { subject: "two realms", realm_id: null, user_id: null },
        { subject: "no user", realm_id: null, user_id: null },
      ]);
      // Once only: a realm that takes the address later does not get the mail on the next DDL run.
      await seed.user(realm2).then((id) =>
        database.db.updateTable("users").set({ email: "nobody@example.test" }).where("id", "=", id).execute()
      );
      await sql`DELETE FROM svc_schema_state`.execute(database.db);
      await database.ensureSchema();
      const after = await database.db.selectFrom("mail_outbox").select("realm_id").where(
        "subject",
        "=",
        "no user",
      )
        .executeTakeFirstOrThrow();
      assert.equal(after.realm_id, null);
    } finally {
      await database.close();
    }
  });
}

Deno.test("postgres: property: the outbox's realm fence and erasure by user never cross realms", async () => {
  const database = await freshPostgres({ maxConnections: 1 });
  try {
    const clock = new ManualClock(T0);
    const outbox = createSqlMailOutboxStore(database.db, { clock, random: cryptoRandom });
    const realms = [REALM_1, REALM_2];
    const users = [USER_1, "9b0c3c1e-2222-4a4a-8888-0000000000b2", null];
    const addresses = ["a@example.test", "A@example.test", "b@example.test"];
    const spec = fc.record({
      realm: fc.constantFrom(...realms),
      user: fc.constantFrom(...users),
      to: fc.constantFrom(...addresses),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { maxLength: 8 }), fc.constantFrom(...realms), async (specs, realm) => {
        await outbox.prune(new Date(T0 + 1));
        const added = [];
        for (const m of specs) {
          added.push(
            await outbox.add(message(m.to, "password_reset", "s", { realmId: m.realm, userId: m.user })),
          );
        }
        const mine = added.filter((m) => m.realmId === realm).map((m) => m.id).sort();
        const listed = (await outbox.list({ realmId: realm, limit: 1000 })).map((m) => m.id).sort();
        assert.deepEqual(listed, mine);
        assert.equal(
          await outbox.count({ realmId: realm, to: "a@example.test" }),
          added.filter((m) => m.realmId === realm && m.to.toLowerCase() === "a@example.test").length,
        );
        for (const m of added) {
          assert.equal(
            (await outbox.get(m.id, { realmId: realm }))?.id ?? null,
            m.realmId === realm ? m.id : null,
          );
        }
        // Erasing USER_1 of `realm` (with its address a@…): its mail anywhere, the realm's user-less mail to it.
        await outbox.deleteForUser(USER_1, { realmId: realm, addresses: ["a@example.test"] });
        const left = new Set((await outbox.list({ limit: 1000 })).map((m) => m.id));
        for (const m of added) {
          const gone = m.userId === USER_1 ||
            (m.userId === null && m.realmId === realm && m.to.toLowerCase() === "a@example.test");
          assert.equal(left.has(m.id), !gone, JSON.stringify(m));
        }
      }),
      { numRuns: 25 },
    );
  } finally {
    await database.close();
  }
});
