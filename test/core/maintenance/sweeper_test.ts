import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { MaintenanceSweeper, OUTBOX_RETENTION_MS } from "../../../core/maintenance/sweeper.ts";
import { seededRandom } from "../../../core/random.ts";
import { hashOtpCode } from "../../../core/storage/email-otp.ts";
import { createSqlCounterStore } from "../../../storage/sql/abuse-counters.ts";
import { createSqlStorage, type Storage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";

Deno.test("MaintenanceSweeper deletes only what has expired, and one failing task does not stop the rest", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const storage = createSqlStorage(database, { clock, random: seededRandom(3) });
  const at = (ms: number) => new Date(clock.now() + ms);
  try {
    await storage.consumedTokens.consume("expired-jti", at(60_000));
    await storage.consumedTokens.consume("live-jti", at(3_600_000));
    await storage.samlAssertions.mark("idp", "expired", at(60_000));
    await storage.dpop.useProof("expired-proof", at(60_000));
    await storage.dpop.useProof("live-proof", at(3_600_000));
    await storage.emailOtp.store({
      challengeId: "expired",
      codeHash: await hashOtpCode("123456"),
      expiresAt: at(60_000),
      remainingAttempts: 5,
    });
    await storage.mailOutbox.add({
      realmId: "9b0c3c1e-1111-4a4a-8888-000000000001",
      userId: null,
      kind: "email_otp",
      to: "a@example.test",
      from: "svc",
      subject: "s",
      text: "t",
      html: "h",
    });
    clock.advance(120_000);

    await t.step("a sweep deletes the expired rows and keeps the live ones", async () => {
      const sweeper = new MaintenanceSweeper({
        storage,
        counters: createSqlCounterStore(database.db, { clock }),
        clock,
        intervalMs: 0,
      });
      const report = await sweeper.runOnce();
      assert.equal(report.consumedTokens, 1);
      assert.equal(report.samlAssertions, 1);
      assert.equal(report.dpopProofs, 1);
      assert.equal(
        await storage.dpop.useProof("live-proof", at(3_600_000)),
        false,
        "a live proof stays used",
      );
      assert.equal(await storage.dpop.useProof("expired-proof", at(60_000)), true, "a swept proof is gone");
      assert.equal(report.emailOtpChallenges, 1);
      assert.equal(report.mailOutbox, 0, "mail is kept for a week");
      assert.equal(typeof report.abuseCounters, "number");
      assert.equal(await storage.consumedTokens.consume("live-jti", at(3_600_000)), false, "still consumed");
      assert.equal(
        await storage.consumedTokens.consume("expired-jti", at(60_000)),
        true,
        "pruned, so new again",
      );
      clock.advance(OUTBOX_RETENTION_MS);
      assert.equal((await sweeper.runOnce()).mailOutbox, 1);
    });

    await t.step("a failing task is reported and the others still run", async () => {
      const failing: Storage = {
        ...storage,
        samlAssertions: { ...storage.samlAssertions, prune: () => Promise.reject(new Error("disk on fire")) },
      };
      const errors: string[] = [];
      const report = await new MaintenanceSweeper({
        storage: failing,
        clock,
        intervalMs: 0,
        onError: (task) => errors.push(task),
      }).runOnce();
      assert.deepEqual(errors, ["samlAssertions"]);
      assert.ok(!("samlAssertions" in report));
      assert.equal(typeof report.consumedTokens, "number");
      assert.equal(typeof report.passkeyCeremonies, "number");
    });
  } finally {
    await database.close();
  }
});
