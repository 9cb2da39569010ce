/**
 * Model-based tests: random command sequences (including moving a ManualClock)
 * run against each single-use store and against a plain in-memory model; every
 * answer of the store must equal the model's. Each property run uses its own
 * keys and a clock base far after every earlier run's, and prunes first, so
 * one database per driver serves the whole file and prune counts are exact.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ManualClock } from "../../../core/clock.ts";
import { ConflictError } from "../../../core/errors.ts";
import type { Executor } from "../../../storage/database.ts";
import { hashOtpCode, type OtpVerifyResult } from "../../../core/storage/email-otp.ts";
import { hashRecoveryCode } from "../../../core/storage/recovery-codes.ts";
import { drivers } from "../../support/db.ts";
import { insertUser, newCode, singleUseStores, T0, uniqueId, uuid } from "./support.ts";

type Stores = ReturnType<typeof singleUseStores>;
/** The real side of a run: the stores, their clock, and this run's key prefix. */
interface Real {
  s: Stores;
  clock: ManualClock;
  key: (k: number) => string;
}
/** The model's clock. */
interface Timed {
  now: number;
}

const NUM_RUNS = 100;
const MAX_COMMANDS = 40;
const DAY = 86_400_000;
let runBase = T0;

/** A fresh real side: a clock far past every previous run (so earlier rows are all expired). */
function freshReal(db: Executor): Real {
  runBase += 30 * DAY;
  const clock = new ManualClock(runBase);
  const prefix = uniqueId("m");
  return { s: singleUseStores(db, clock), clock, key: (k) => `${prefix}-${k}` };
}

/** A command from a name and a body. */
function command<M extends object>(
  name: string,
  run: (model: M, real: Real) => Promise<void>,
): fc.AsyncCommand<M, Real> {
  return { check: () => true, run, toString: () => name };
}

const advance = <M extends Timed>() =>
  fc.integer({ min: 0, max: 90_000 }).map((ms) =>
    command<M>(`advance(${ms})`, async (m, r) => {
      m.now += ms;
      r.clock.advance(ms);
      await Promise.resolve();
    })
  );

const keyArb = fc.integer({ min: 0, max: 3 });
const ttlArb = fc.integer({ min: 1, max: 120_000 });

// ---------------- Email OTP ----------------
interface OtpModel extends Timed {
  challenges: Map<number, { code: string; expiresAt: number; remaining: number }>;
}
const otpCodeArb = fc.constantFrom("111111", "222222", "333333");

function otpCommands() {
  return [
    fc.tuple(keyArb, otpCodeArb, ttlArb, fc.integer({ min: 0, max: 4 })).map(([k, code, ttl, budget]) =>
      command<OtpModel>(`store(${k}, ${code}, ttl ${ttl}, budget ${budget})`, async (m, r) => {
        m.challenges.set(k, { code, expiresAt: m.now + ttl, remaining: budget });
        await r.s.otp.store({
          challengeId: r.key(k),
          codeHash: hashOtpCode(code),
          expiresAt: new Date(r.clock.now() + ttl),
          remainingAttempts: budget,
        });
      })
    ),
    fc.tuple(keyArb, otpCodeArb).map(([k, code]) =>
      command<OtpModel>(`verify(${k}, ${code})`, async (m, r) => {
        const c = m.challenges.get(k);
        let expected: OtpVerifyResult;
        if (!c) expected = { outcome: "ExpiredOrMissing" };
        else if (c.expiresAt <= m.now) {
          m.challenges.delete(k);
          expected = { outcome: "ExpiredOrMissing" };
        } else if (c.remaining <= 0) {
          m.challenges.delete(k);
          expected = { outcome: "TooManyAttempts" };
        } else if (c.code === code) {
          m.challenges.delete(k);
          expected = { outcome: "Success" };
        } else {
          c.remaining -= 1;
          expected = { outcome: "WrongCode", remainingAttempts: c.remaining };
        }
        assert.deepEqual(await r.s.otp.verify(r.key(k), code), expected);
      })
    ),
    keyArb.map((k) =>
      command<OtpModel>(`get(${k})`, async (m, r) => {
        const c = m.challenges.get(k);
        const got = await r.s.otp.get(r.key(k));
        assert.deepEqual(
          got &&
            { codeHash: got.codeHash, expiresAt: got.expiresAt.getTime(), remaining: got.remainingAttempts },
          c ? { codeHash: hashOtpCode(c.code), expiresAt: c.expiresAt, remaining: c.remaining } : null,
        );
      })
    ),
    fc.constant(command<OtpModel>("prune", async (m, r) => {
      let expected = 0;
      for (const [k, c] of m.challenges) if (c.expiresAt <= m.now) (m.challenges.delete(k), expected++);
      assert.equal(await r.s.otp.prune(), expected);
    })),
    advance<OtpModel>(),
  ];
}

// ---------------- Deny-lists: consumed jtis and SAML assertion ids ----------------
interface DenyModel extends Timed {
  entries: Map<number, number>;
}
interface DenyOps {
  add(r: Real, k: number, expiresAt: Date): Promise<boolean>;
  has(r: Real, k: number): Promise<boolean>;
  prune(r: Real): Promise<number>;
}
const jtiOps: DenyOps = {
  add: (r, k, exp) => r.s.tokens.consume(r.key(k), exp),
  has: (r, k) => r.s.tokens.isConsumed(r.key(k)),
  prune: (r) => r.s.tokens.prune(),
};
const samlOps: DenyOps = {
  add: (r, k, exp) => r.s.saml.mark(r.key(k % 2), `_assertion-${k}`, exp),
  has: (r, k) => r.s.saml.isMarked(r.key(k % 2), `_assertion-${k}`),
  prune: (r) => r.s.saml.prune(),
};

function denyCommands(ops: DenyOps) {
  return [
    fc.tuple(keyArb, ttlArb).map(([k, ttl]) =>
      command<DenyModel>(`consume(${k}, ttl ${ttl})`, async (m, r) => {
        const expected = !m.entries.has(k);
        if (expected) m.entries.set(k, m.now + ttl);
        assert.equal(await ops.add(r, k, new Date(r.clock.now() + ttl)), expected);
      })
    ),
    keyArb.map((k) =>
      command<DenyModel>(`has(${k})`, async (m, r) => {
        assert.equal(await ops.has(r, k), m.entries.has(k));
      })
    ),
    fc.constant(command<DenyModel>("prune", async (m, r) => {
      let expected = 0;
      for (const [k, exp] of m.entries) if (exp <= m.now) (m.entries.delete(k), expected++);
      assert.equal(await ops.prune(r), expected);
    })),
    advance<DenyModel>(),
  ];
}

// ---------------- Authorization codes ----------------
interface CodeModel extends Timed {
  codes: Map<number, { expiresAt: number; consumed: boolean }>;
}
const codeHash = (r: Real, k: number) => hashOtpCode(r.key(k));

function codeCommands() {
  return [
    fc.tuple(keyArb, ttlArb).map(([k, ttl]) =>
      command<CodeModel>(`store(${k}, ttl ${ttl})`, async (m, r) => {
        const record = newCode(codeHash(r, k), r.clock.now(), ttl);
        if (m.codes.has(k)) {
          await assert.rejects(() => r.s.codes.store(record));
        } else {
          m.codes.set(k, { expiresAt: m.now + ttl, consumed: false });
          await r.s.codes.store(record);
        }
      })
    ),
    keyArb.map((k) =>
      command<CodeModel>(`exchange(${k})`, async (m, r) => {
        const c = m.codes.get(k);
        const expected = !c
          ? "Unknown"
          : c.consumed
          ? "Reused"
          : c.expiresAt <= m.now
          ? "Unknown"
          : (c.consumed = true, "Consumed");
        const got = await r.s.codes.exchange(codeHash(r, k));
        assert.equal(got.outcome, expected);
        if (got.outcome !== "Unknown") {
          assert.equal(got.code.codeHash, codeHash(r, k));
          assert.equal(got.code.consumed, true);
        }
      })
    ),
    fc.constant(command<CodeModel>("purge", async (m, r) => {
      let expected = 0;
      for (const [k, c] of m.codes) if (c.expiresAt <= m.now) (m.codes.delete(k), expected++);
      assert.equal(await r.s.codes.purge(), expected);
    })),
    advance<CodeModel>(),
  ];
}

// ---------------- Recovery codes ----------------
interface RecoveryModel {
  sets: Map<number, Set<string>>;
  users: string[];
}
const recoveryCodeArb = fc.constantFrom("alpha", "bravo", "charlie", "delta");
const userArb = fc.integer({ min: 0, max: 1 });

function recoveryCommands() {
  return [
    fc.tuple(userArb, fc.array(recoveryCodeArb, { maxLength: 5 })).map(([u, codes]) =>
      command<RecoveryModel>(`replace(${u}, [${codes}])`, async (m, r) => {
        m.sets.set(u, new Set(codes));
        await r.s.recovery.replace(
          m.users[u],
          codes.map((c) => ({ id: uuid(), codeHash: hashRecoveryCode(c) })),
        );
      })
    ),
    fc.tuple(userArb, recoveryCodeArb).map(([u, code]) =>
      command<RecoveryModel>(`consume(${u}, ${code})`, async (m, r) => {
        const expected = m.sets.get(u)?.delete(code) ?? false;
        assert.equal(await r.s.recovery.consume(m.users[u], code), expected);
      })
    ),
    userArb.map((u) =>
      command<RecoveryModel>(`count(${u})`, async (m, r) => {
        assert.equal(await r.s.recovery.countRemaining(m.users[u]), m.sets.get(u)?.size ?? 0);
      })
    ),
  ];
}

// ---------------- Impersonations ----------------
interface ImpModel extends Timed {
  records: { id: string; actor: number; status: "PendingConsent" | "Active" | "Ended"; expiresAt: number }[];
  actors: string[];
}
const isCurrent = (m: ImpModel, rec: ImpModel["records"][number]) =>
  rec.status !== "Ended" && rec.expiresAt > m.now;

function impersonationCommands() {
  const pick = fc.integer({ min: 0, max: 7 });
  const pickRecord = (m: ImpModel, i: number) =>
    m.records.length ? m.records[i % m.records.length] : undefined;
  return [
    fc.tuple(fc.integer({ min: 0, max: 1 }), fc.boolean(), ttlArb).map(([a, consent, ttl]) =>
      command<ImpModel>(`start(actor ${a}, consent ${consent}, ttl ${ttl})`, async (m, r) => {
        const id = uuid();
        const input = {
          id,
          realmId: uuid(),
          actorId: m.actors[a],
          targetId: uuid(),
          reason: "r",
          consentRequired: consent,
          expiresAt: new Date(r.clock.now() + ttl),
        };
        if (m.records.some((rec) => rec.actor === a && isCurrent(m, rec))) {
          await assert.rejects(() => r.s.impersonations.create(input), ConflictError);
        } else {
          const created = await r.s.impersonations.create(input);
          const status = consent ? "PendingConsent" : "Active";
          assert.equal(created.status, status);
          m.records.push({ id, actor: a, status, expiresAt: m.now + ttl });
        }
      })
    ),
    pick.map((i) =>
      command<ImpModel>(`approve(#${i})`, async (m, r) => {
        const rec = pickRecord(m, i);
        if (!rec) return;
        const ok = rec.status === "PendingConsent" && rec.expiresAt > m.now;
        if (ok) rec.status = "Active";
        assert.equal((await r.s.impersonations.approveConsent(rec.id))?.status ?? null, ok ? "Active" : null);
      })
    ),
    pick.map((i) =>
      command<ImpModel>(`end(#${i})`, async (m, r) => {
        const rec = pickRecord(m, i);
        if (!rec) return;
        const ok = rec.status !== "Ended";
        rec.status = "Ended";
        assert.equal((await r.s.impersonations.end(rec.id))?.status ?? null, ok ? "Ended" : null);
      })
    ),
    fc.integer({ min: 0, max: 1 }).map((a) =>
      command<ImpModel>(`current(actor ${a})`, async (m, r) => {
        const expected = m.records.find((rec) => rec.actor === a && isCurrent(m, rec));
        const got = await r.s.impersonations.current(m.actors[a]);
        assert.equal(got?.id ?? null, expected?.id ?? null);
        if (expected) assert.equal(got?.status, expected.status);
      })
    ),
    pick.map((i) =>
      command<ImpModel>(`get(#${i})`, async (m, r) => {
        const rec = pickRecord(m, i);
        if (!rec) return;
        const got = await r.s.impersonations.get(rec.id);
        assert.equal(got?.status, rec.status, "expiry never writes the status");
      })
    ),
    advance<ImpModel>(),
  ];
}

const modelDrivers = drivers;

for (const driver of modelDrivers) {
  Deno.test(`${driver.name}: single-use stores follow their models`, async (t) => {
    const database = await driver.open();
    const db = database.db;
    const params = { numRuns: NUM_RUNS };
    const cmds = <M extends object>(arbs: fc.Arbitrary<fc.AsyncCommand<M, Real>>[]) =>
      fc.commands(arbs, { maxCommands: MAX_COMMANDS });
    /** Prunes every earlier run's rows (they are all expired at this run's clock). */
    const clean = async (r: Real) => {
      await r.s.otp.prune();
      await r.s.tokens.prune();
      await r.s.saml.prune();
      await r.s.codes.purge();
    };
    try {
      await t.step("email OTP", async () => {
        await fc.assert(
          fc.asyncProperty(cmds(otpCommands()), async (commands) => {
            const real = freshReal(db);
            await clean(real);
            await fc.asyncModelRun(
              () => ({ model: { now: real.clock.now(), challenges: new Map() }, real }),
              commands,
            );
          }),
          params,
        );
      });
      for (const [name, ops] of [["consumed jti", jtiOps], ["SAML assertion", samlOps]] as const) {
        await t.step(name, async () => {
          await fc.assert(
            fc.asyncProperty(cmds(denyCommands(ops)), async (commands) => {
              const real = freshReal(db);
              await clean(real);
              await fc.asyncModelRun(
                () => ({ model: { now: real.clock.now(), entries: new Map() }, real }),
                commands,
              );
            }),
            params,
          );
        });
      }
      await t.step("authorization code", async () => {
        await fc.assert(
          fc.asyncProperty(cmds(codeCommands()), async (commands) => {
            const real = freshReal(db);
            await clean(real);
            await fc.asyncModelRun(
              () => ({ model: { now: real.clock.now(), codes: new Map() }, real }),
              commands,
            );
          }),
          params,
        );
      });
      await t.step("recovery codes", async () => {
        await fc.assert(
          fc.asyncProperty(cmds(recoveryCommands()), async (commands) => {
            const real = freshReal(db);
            const users = [await insertUser(db), await insertUser(db)];
            await fc.asyncModelRun(() => ({ model: { sets: new Map(), users }, real }), commands);
          }),
          params,
        );
      });
      await t.step("impersonation", async () => {
        await fc.assert(
          fc.asyncProperty(cmds(impersonationCommands()), async (commands) => {
            const real = freshReal(db);
            const actors = [uuid(), uuid()];
            await fc.asyncModelRun(
              () => ({ model: { now: real.clock.now(), records: [], actors }, real }),
              commands,
            );
          }),
          params,
        );
      });
    } finally {
      await database.close();
    }
  });
}
