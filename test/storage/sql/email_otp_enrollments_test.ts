import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { createSqlEmailOtpEnrollmentStore } from "../../../storage/sql/email-otp-enrollments.ts";
import { drivers } from "../../support/db.ts";
import { seeder, uuid } from "../../support/seed.ts";

for (const driver of drivers) {
  Deno.test(`email OTP enrollments (${driver.name})`, async () => {
    const database = await driver.open();
    try {
      const clock = new ManualClock(Date.UTC(2026, 0, 1));
      const store = createSqlEmailOtpEnrollmentStore(database.db, clock);
      const seed = seeder(database.db);
      const user = await seed.user(await seed.realm());
      assert.equal(await store.enrolledAt(user), null);
      const first = await store.enroll(user);
      assert.equal(first.getTime(), clock.now());
      clock.advance(60_000);
      assert.equal(
        (await store.enroll(user)).getTime(),
        first.getTime(),
        "enrolling again keeps the first time",
      );
      assert.equal((await store.enrolledAt(user))?.getTime(), first.getTime());
      assert.equal(await store.remove(user), true);
      assert.equal(await store.remove(user), false);
      assert.equal(await store.enrolledAt(uuid()), null);
      assert.equal(await store.enrolledAt("not-a-uuid"), null);
      assert.equal(await store.remove("not-a-uuid"), false);
    } finally {
      await database.close();
    }
  });
}
