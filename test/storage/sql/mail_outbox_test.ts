import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { createSqlMailOutboxStore } from "../../../storage/sql/mail-outbox.ts";
import { drivers } from "../../support/db.ts";

const T0 = Date.UTC(2026, 0, 1);

const message = (to: string, kind = "email_otp", subject = "s") => ({
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

      await t.step("prune by age and delete for a recipient", async () => {
        clock.advance(60_000);
        await outbox.add(message("c@example.com", "email_otp", "5"));
        assert.equal(await outbox.prune(new Date(T0 + 1)), 4);
        assert.deepEqual((await outbox.list()).map((m) => m.subject), ["5"]);
        await outbox.add(message("C@EXAMPLE.COM", "email_otp", "6"));
        await outbox.add(message("d@example.com", "email_otp", "7"));
        assert.equal(await outbox.deleteForRecipient("c@example.com"), 2);
        assert.deepEqual((await outbox.list()).map((m) => m.subject), ["7"]);
      });
    } finally {
      await database.close();
    }
  });
}
