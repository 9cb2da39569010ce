/**
 * Concurrency of the single-use stores on a real Postgres server (a pool of 50
 * connections, so the callers truly race on separate backends). Every race must
 * have exactly one winner, and the OTP attempt budget must never be overspent.
 *
 * OTP outcomes under a race of wrong guesses with budget B (see OtpVerifyResult):
 * exactly B `WrongCode` (remainingAttempts B-1 … 0, each once), exactly one
 * `TooManyAttempts` (the guess that found the budget spent and deleted the
 * challenge), and `ExpiredOrMissing` for every other guess (it found the
 * challenge already deleted).
 */
import assert from "node:assert/strict";
import { hashOtpCode, type OtpVerifyResult } from "../../../core/storage/email-otp.ts";
import { hashRecoveryCode } from "../../../core/storage/recovery-codes.ts";
import type { SvcDatabase } from "../../../storage/open.ts";
import { freshPostgres } from "../../support/db.ts";
import { insertUser, newCode, singleUseStores, T0, uniqueId, uuid } from "./support.ts";

const RACERS = 50;
const MINUTE = 60_000;

/** Starts `n` calls at once and waits for all of them. */
function race<T>(n: number, call: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => call(i)));
}

function tally(results: OtpVerifyResult[]): Record<OtpVerifyResult["outcome"], number> {
  const counts = { Success: 0, WrongCode: 0, TooManyAttempts: 0, ExpiredOrMissing: 0 };
  for (const r of results) counts[r.outcome]++;
  return counts;
}

Deno.test("postgres: single-use races have exactly one winner", async (t) => {
  const database: SvcDatabase = await freshPostgres({ maxConnections: RACERS });
  const db = database.db;
  try {
    // Open every pool connection up front so that the races below are between live backends.
    await race(RACERS, () => db.selectFrom("consumed_tokens").select("jti").limit(1).execute());

    await t.step(`${RACERS} consumers of one jti`, async () => {
      const s = singleUseStores(db);
      for (let round = 0; round < 5; round++) {
        const jti = uniqueId("jti");
        const wins = await race(RACERS, () => s.tokens.consume(jti, new Date(T0 + MINUTE)));
        assert.equal(wins.filter(Boolean).length, 1);
      }
    });

    await t.step(`${RACERS} markers of one SAML assertion id`, async () => {
      const s = singleUseStores(db);
      for (let round = 0; round < 5; round++) {
        const connection = uniqueId("conn");
        const wins = await race(RACERS, () => s.saml.mark(connection, "_assertion", new Date(T0 + MINUTE)));
        assert.equal(wins.filter(Boolean).length, 1);
      }
    });

    await t.step(`${RACERS} exchanges of one authorization code`, async () => {
      const s = singleUseStores(db);
      for (let round = 0; round < 5; round++) {
        const hash = hashOtpCode(uniqueId("code"));
        await s.codes.store(newCode(hash, T0));
        const results = await race(RACERS, () => s.codes.exchange(hash));
        assert.equal(results.filter((r) => r.outcome === "Consumed").length, 1);
        assert.equal(results.filter((r) => r.outcome === "Reused").length, RACERS - 1, "losers see Reused");
      }
    });

    await t.step(`${RACERS} consumers of one recovery code`, async () => {
      const s = singleUseStores(db);
      const user = await insertUser(db);
      for (let round = 0; round < 5; round++) {
        const codes = ["r-one", "r-two", "r-three"];
        await s.recovery.replace(user, codes.map((c) => ({ id: uuid(), codeHash: hashRecoveryCode(c) })));
        const wins = await race(RACERS, () => s.recovery.consume(user, "r-two"));
        assert.equal(wins.filter(Boolean).length, 1);
        assert.equal(await s.recovery.countRemaining(user), 2);
      }
    });

    await t.step(`${RACERS} concurrent impersonation starts by one actor`, async () => {
      const s = singleUseStores(db);
      const actor = uuid();
      const results = await Promise.allSettled(
        Array.from({ length: RACERS }, () =>
          s.impersonations.create({
            id: uuid(),
            realmId: uuid(),
            actorId: actor,
            targetId: uuid(),
            reason: "race",
            consentRequired: false,
            expiresAt: new Date(T0 + 30 * MINUTE),
          })),
      );
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    });

    await t.step("100 wrong OTP guesses with budget 5", async () => {
      const s = singleUseStores(db);
      for (let round = 0; round < 5; round++) {
        const id = uniqueId("otp");
        await s.otp.store({
          challengeId: id,
          codeHash: hashOtpCode("424242"),
          expiresAt: new Date(T0 + 5 * MINUTE),
          remainingAttempts: 5,
        });
        const results = await race(100, (i) => s.otp.verify(id, String(100000 + i)));
        assert.deepEqual(tally(results), {
          Success: 0,
          WrongCode: 5,
          TooManyAttempts: 1,
          ExpiredOrMissing: 94,
        });
        const left = results.flatMap((r) => r.outcome === "WrongCode" ? [r.remainingAttempts] : []).sort();
        assert.deepEqual(left, [0, 1, 2, 3, 4], "each decrement observed exactly once");
        assert.equal(await s.otp.get(id), null);
      }
    });

    await t.step(
      "a correct OTP guess racing wrong ones never succeeds after the budget is spent",
      async () => {
        const s = singleUseStores(db);
        let successes = 0;
        for (let round = 0; round < 40; round++) {
          const id = uniqueId("otp");
          await s.otp.store({
            challengeId: id,
            codeHash: hashOtpCode("424242"),
            expiresAt: new Date(T0 + 5 * MINUTE),
            remainingAttempts: 5,
          });
          const position = round % 20; // where the correct guess sits among the racers
          const results = await race(
            100,
            (i) => s.otp.verify(id, i === position ? "424242" : String(100000 + i)),
          );
          const counts = tally(results);
          const correct = results[position];
          if (correct.outcome === "Success") {
            successes++;
            // It consumed one of the 5 attempts: at most 4 wrong guesses came before it, none after.
            assert.ok(counts.WrongCode <= 4, `WrongCode ${counts.WrongCode} with a success`);
            assert.equal(counts.TooManyAttempts, 0);
            assert.equal(counts.Success, 1);
            const left = results.flatMap((r) => r.outcome === "WrongCode" ? [r.remainingAttempts] : [])
              .sort();
            assert.deepEqual(left, [4, 3, 2, 1, 0].slice(0, counts.WrongCode).sort());
          } else {
            assert.ok(["TooManyAttempts", "ExpiredOrMissing"].includes(correct.outcome), correct.outcome);
            assert.deepEqual(counts, { Success: 0, WrongCode: 5, TooManyAttempts: 1, ExpiredOrMissing: 94 });
          }
          assert.equal(counts.Success + counts.WrongCode <= 5, true, "never more than the budget of guesses");
        }
        // The budget exhausted first: the correct guess, sent after the five wrong ones, must lose.
        for (let round = 0; round < 10; round++) {
          const id = uniqueId("otp");
          await s.otp.store({
            challengeId: id,
            codeHash: hashOtpCode("424242"),
            expiresAt: new Date(T0 + 5 * MINUTE),
            remainingAttempts: 5,
          });
          const wrong = race(5, (i) => s.otp.verify(id, String(100000 + i)));
          const w = await wrong;
          assert.equal(tally(w).WrongCode, 5);
          const results = await race(RACERS, (i) => s.otp.verify(id, i % 2 === 0 ? "424242" : "000000"));
          assert.deepEqual(tally(results), {
            Success: 0,
            WrongCode: 0,
            TooManyAttempts: 1,
            ExpiredOrMissing: 49,
          });
        }
        console.log(`correct guess won ${successes}/40 mixed races`);
      },
    );
  } finally {
    await database.close();
  }
});
