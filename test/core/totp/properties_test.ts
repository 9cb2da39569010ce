/**
 * Model-based properties of TOTP verification over the real store (one PGlite): random walks
 * of clock moves, fresh codes of steps around now and replays of accepted codes.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { decodeBase32 } from "../../../core/totp/base32.ts";
import { TotpService } from "../../../core/totp/service.ts";
import { hotp, totpStep } from "../../../core/totp/totp.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { testSecretCipher } from "../../support/secret-cipher.ts";
import { seeder } from "../../support/seed.ts";

type Action =
  | { kind: "advance"; ms: number }
  | { kind: "present"; offset: number }
  | { kind: "replay"; pick: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 95_000 }) }),
  fc.record({ kind: fc.constant("present" as const), offset: fc.integer({ min: -3, max: 3 }) }),
  fc.record({ kind: fc.constant("replay" as const), pick: fc.nat() }),
);

Deno.test("totp properties: accepted codes never verify again; nothing at or before the last accepted step verifies", async (t) => {
  const database = await freshEmbedded();
  try {
    const clock = new ManualClock(0);
    const storage = createSqlStorage(database, { clock, random: cryptoRandom });
    const seed = seeder(database.db);
    const realm = await seed.realm();
    const totp = new TotpService({
      store: storage.totpEnrollments,
      cipher: testSecretCipher(storage.subjectKeys, cryptoRandom),
      clock,
      random: cryptoRandom,
      issuer: "svc",
    });

    await t.step("random walks against the model", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_000_000, max: 4_000_000_000 }),
          fc.array(action, { minLength: 1, maxLength: 14 }),
          async (startSeconds, actions) => {
            clock.set(startSeconds * 1000);
            const user = await seed.user(realm);
            const secret = decodeBase32((await totp.startEnrollment(user, "p@example.com")).secret);
            const confirmStep = totpStep(clock.now());
            assert.equal((await totp.confirmEnrollment(user, hotp(secret, confirmStep))).ok, true);
            let last = confirmStep;
            const accepted: number[] = [confirmStep];
            for (const a of actions) {
              if (a.kind === "advance") {
                clock.advance(a.ms);
                continue;
              }
              const now = totpStep(clock.now());
              const step = a.kind === "present" ? now + a.offset : accepted[a.pick % accepted.length];
              const result = await totp.verify(user, hotp(secret, step));
              const inWindow = Math.abs(step - now) <= 1;
              // The model: accepted exactly when in the window and after the last accepted step.
              assert.equal(
                result.ok,
                inWindow && step > last,
                JSON.stringify({ a, step, now, last, result }),
              );
              if (a.kind === "replay") {
                assert.equal(result.ok, false, "an accepted code is never accepted again");
              }
              if (result.ok) {
                assert.equal(result.step, step);
                assert.ok(accepted.every((s) => s < step), "accepted steps strictly increase");
                accepted.push(step);
                last = step;
              } else if (inWindow) {
                assert.equal(
                  result.reason,
                  "replayed",
                  "a matching code at or before the last step is a replay",
                );
              }
            }
            assert.equal((await storage.totpEnrollments.get(user))?.lastAcceptedStep, last);
          },
        ),
        { numRuns: 40 },
      );
    });

    await t.step("every code of a window, presented in any order, verifies at most once", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.shuffledSubarray([-1, 0, 1, -1, 0, 1], { minLength: 1 }),
          async (offsets) => {
            clock.set(Date.UTC(2030, 0, 1));
            const user = await seed.user(realm);
            const secret = decodeBase32((await totp.startEnrollment(user, "q@example.com")).secret);
            const now = totpStep(clock.now());
            // Confirm with an older step so the whole window is fresh.
            clock.advance(-90_000);
            assert.equal((await totp.confirmEnrollment(user, hotp(secret, now - 3))).ok, true);
            clock.advance(90_000);
            const wins = new Map<number, number>();
            let highest = -Infinity;
            for (const offset of offsets) {
              const result = await totp.verify(user, hotp(secret, now + offset));
              if (result.ok) {
                wins.set(offset, (wins.get(offset) ?? 0) + 1);
                assert.ok(now + offset > highest);
                highest = now + offset;
              } else {
                assert.ok(now + offset <= highest, "only a step at or before the last accepted one fails");
              }
            }
            assert.ok([...wins.values()].every((n) => n === 1));
          },
        ),
        { numRuns: 25 },
      );
    });
  } finally {
    await database.close();
  }
});
