/**
 * The passkey ceremony service over the SQL stores (PGlite), replaying authenticator
 * responses recorded from Chromium's virtual authenticators: ceremonies (single attempt,
 * 5-minute TTL, only the challenge's SHA-256 stored), registration, the first-factor
 * eligibility rule, second factors and the sign-count rule.
 */
import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { sha256Hex } from "../../../core/digest.ts";
import { fromBase64Url, toBase64Url } from "../../../core/encoding.ts";
import { EVENT_KINDS } from "../../../core/events/catalog.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import {
  PasskeyLoginError,
  PasskeyNotEligibleError,
  PasskeyRegistrationError,
} from "../../../core/passkeys/rules.ts";
import { CeremonyKinds, PasskeyService, type RelyingParty } from "../../../core/passkeys/service.ts";
import { seededRandom } from "../../../core/random.ts";
import { challengeMatches } from "../../../core/storage/passkey-ceremonies.ts";
import type { User } from "../../../core/storage/users.ts";
import { createSqlStorage, type Storage } from "../../../storage/storage.ts";
import { freshEmbedded } from "../../support/db.ts";
import { T0 } from "../../support/auth.ts";
import { recorded } from "./fixtures.ts";

const FIVE_MINUTES = 5 * 60_000;
const RP: RelyingParty = { id: recorded.rpId, name: "svc test", origins: [recorded.origin] };

interface Bed {
  storage: Storage;
  clock: ManualClock;
  events: SvcEvent[];
  passkeys: PasskeyService;
  realmId: string;
  uvUser: User;
  plainUser: User;
  /** A ceremony started with a recorded challenge (what startLogin/startRegistration would store). */
  ceremony(
    kind: string,
    challenge: string,
    options?: { userId?: string | null; realmId?: string | null; data?: Record<string, unknown> },
  ): Promise<string>;
  /** Makes a user the realm's break-glass account. */
  markBreakGlass(userId: string): Promise<void>;
  close(): Promise<void>;
}

async function bed(rp: RelyingParty = RP): Promise<Bed> {
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const random = seededRandom(7);
  const storage = createSqlStorage(database, { clock, random });
  const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
  // The recorded user handles are these users' ids.
  const insertUser = async (id: string) => {
    await database.db.insertInto("users").values({
      id,
      realm_id: realm.id,
      email: `${id}@example.test`,
      email_verified: true,
      display_name: null,
      status: "Active",
      attributes: "{}",
      is_break_glass: false,
      anonymized_at: null,
      created_at: new Date(T0),
      updated_at: new Date(T0),
    }).execute();
    return (await storage.users.get(id))!;
  };
  const events: SvcEvent[] = [];
  const passkeys = new PasskeyService({
    credentials: storage.passkeyCredentials,
    ceremonies: storage.passkeyCeremonies,
    users: storage.users,
    events: { emit: (e) => void events.push(e) },
    clock,
    random,
    relyingParty: rp,
  });
  return {
    storage,
    clock,
    events,
    passkeys,
    realmId: realm.id,
    uvUser: await insertUser(recorded.userVerifying.userId),
    plainUser: await insertUser(recorded.withoutUserVerification.userId),
    async ceremony(kind, challenge, options = {}) {
      const c = await storage.passkeyCeremonies.create({
        kind,
        challenge,
        userId: options.userId ?? null,
        realmId: options.realmId ?? null,
        data: options.data ?? {},
      });
      return c.id;
    },
    async markBreakGlass(userId) {
      await database.db.updateTable("users").set({ is_break_glass: true }).where("id", "=", userId).execute();
    },
    close: () => database.close(),
  };
}

/** Registers the recorded credential of the UV authenticator (sign count 1). */
async function registerUv(b: Bed) {
  const { registration } = recorded.userVerifying;
  const id = await b.ceremony(CeremonyKinds.registration, registration.challenge, { userId: b.uvUser.id });
  return await b.passkeys.finishRegistration(b.uvUser, id, registration.response);
}

async function registerPlain(b: Bed) {
  const { registration } = recorded.withoutUserVerification;
  const id = await b.ceremony(CeremonyKinds.registration, registration.challenge, { userId: b.plainUser.id });
  return await b.passkeys.finishRegistration(b.plainUser, id, registration.response);
}

Deno.test("ceremonies: random id, only the challenge's SHA-256 stored, 5-minute TTL, one attempt", async (t) => {
  const b = await bed();
  try {
    await t.step("startRegistration and startLogin store a hash, never the challenge", async () => {
      const reg = await b.passkeys.startRegistration(b.uvUser);
      const login = await b.passkeys.startLogin({ realmId: b.realmId });
      assert.notEqual(reg.ceremonyId, login.ceremonyId);
      assert.ok(reg.ceremonyId.length >= 32);
      assert.equal(fromBase64Url(reg.options.challenge).length, 32);
      assert.equal(reg.options.rp.id, RP.id);
      assert.equal(reg.options.authenticatorSelection?.residentKey, "required");
      assert.equal(reg.options.timeout, FIVE_MINUTES);
      assert.equal(login.options.allowCredentials, undefined, "discoverable");
      const rows = await b.storage.passkeyCeremonies.consume(login.ceremonyId);
      assert.ok(rows !== null);
      assert.equal(rows.challengeHash, sha256Hex(login.options.challenge));
      assert.ok(!JSON.stringify(rows).includes(login.options.challenge));
      assert.equal(rows.expiresAt.getTime(), T0 + FIVE_MINUTES);
      assert.ok(challengeMatches(rows, login.options.challenge));
      assert.ok(!challengeMatches(rows, reg.options.challenge));
      assert.equal(await b.storage.passkeyCeremonies.consume(login.ceremonyId), null, "one attempt");
    });

    await t.step("a registration completed twice fails the second time", async () => {
      const { registration } = recorded.userVerifying;
      const id = await b.ceremony(CeremonyKinds.registration, registration.challenge, {
        userId: b.uvUser.id,
      });
      await b.passkeys.finishRegistration(b.uvUser, id, registration.response);
      await assert.rejects(
        b.passkeys.finishRegistration(b.uvUser, id, registration.response),
        (e) => e instanceof PasskeyRegistrationError && /ceremony unknown/.test(e.reason),
      );
    });

    await t.step("a failed completion kills the ceremony: the right answer afterwards fails", async () => {
      const [first] = recorded.userVerifying.assertions;
      const id = await b.ceremony(CeremonyKinds.login, first.challenge, { realmId: b.realmId });
      const wrong = {
        ...first.response,
        response: { ...first.response.response, signature: toBase64Url(new Uint8Array(64)) },
      };
      await assert.rejects(b.passkeys.finishLogin(id, wrong), PasskeyLoginError);
      await assert.rejects(
        b.passkeys.finishLogin(id, first.response),
        (e) => e instanceof PasskeyLoginError && /ceremony unknown/.test(e.reason),
      );
    });

    await t.step("after 5 minutes the ceremony is dead; just before, it completes", async () => {
      const [first, second] = recorded.userVerifying.assertions;
      const late = await b.ceremony(CeremonyKinds.login, first.challenge);
      b.clock.advance(FIVE_MINUTES);
      await assert.rejects(
        b.passkeys.finishLogin(late, first.response),
        (e) => e instanceof PasskeyLoginError && /expired/.test(e.reason),
      );
      const inTime = await b.ceremony(CeremonyKinds.login, second.challenge);
      b.clock.advance(FIVE_MINUTES - 1);
      const { user } = await b.passkeys.finishLogin(inTime, second.response);
      assert.equal(user.id, b.uvUser.id);
    });
  } finally {
    await b.close();
  }
});

Deno.test("registration of recorded responses: UV capability, counter, event, and what fails", async (t) => {
  const b = await bed();
  try {
    await t.step("a user-verifying authenticator: UV-capable, sign count 1, passkey.registered", async () => {
      const credential = await registerUv(b);
      assert.equal(credential.userId, b.uvUser.id);
      assert.equal(credential.userVerificationCapable, true);
      assert.equal(credential.signCount, 1);
      assert.deepEqual(credential.transports, ["internal"]);
      assert.equal(toBase64Url(credential.credentialId), recorded.userVerifying.registration.response.id);
      assert.deepEqual(b.events.map((e) => [e.kind, e.userId, e.realmId]), [
        [EVENT_KINDS.passkeyRegistered, b.uvUser.id, b.realmId],
      ]);
    });

    await t.step("an authenticator without user verification: registered, not UV-capable", async () => {
      const credential = await registerPlain(b);
      assert.equal(credential.userVerificationCapable, false);
    });

    await t.step("the same credential again is a conflict", async () => {
      await assert.rejects(registerUv(b), (e: Error & { code?: string }) => e.code === "conflict");
    });

    await t.step("a ceremony of another user, of another kind, or with another challenge fails", async () => {
      const { registration } = recorded.userVerifying;
      const other = await b.ceremony(CeremonyKinds.registration, registration.challenge, {
        userId: b.plainUser.id,
      });
      await assert.rejects(
        b.passkeys.finishRegistration(b.uvUser, other, registration.response),
        PasskeyRegistrationError,
      );
      const login = await b.ceremony(CeremonyKinds.login, registration.challenge, { userId: b.uvUser.id });
      await assert.rejects(
        b.passkeys.finishRegistration(b.uvUser, login, registration.response),
        PasskeyRegistrationError,
      );
      const wrongChallenge = await b.ceremony(CeremonyKinds.registration, "c29tZXRoaW5nIGVsc2U", {
        userId: b.uvUser.id,
      });
      await assert.rejects(
        b.passkeys.finishRegistration(b.uvUser, wrongChallenge, registration.response),
        (e) => e instanceof PasskeyRegistrationError && /challenge/.test(e.reason),
      );
    });
  } finally {
    await b.close();
  }

  await t.step("an origin that is not allowed fails", async () => {
    const elsewhere = await bed({ ...RP, origins: ["https://id.example.com"] });
    try {
      await assert.rejects(
        registerUv(elsewhere),
        (e) => e instanceof PasskeyRegistrationError && /origin/.test(e.reason),
      );
    } finally {
      await elsewhere.close();
    }
  });
});

Deno.test("login of recorded assertions: eligibility, second factor, and the sign-count rule", async (t) => {
  const b = await bed();
  try {
    const uvCredential = await registerUv(b);
    const plainCredential = await registerPlain(b);
    b.events.length = 0;

    await t.step(
      "a UV assertion of a UV-capable credential is a first factor; the counter moves to 2",
      async () => {
        const [first] = recorded.userVerifying.assertions;
        const id = await b.ceremony(CeremonyKinds.login, first.challenge, { realmId: b.realmId });
        const { user, credential, userVerified } = await b.passkeys.finishLogin(id, first.response);
        assert.equal(user.id, b.uvUser.id);
        assert.equal(userVerified, true);
        assert.equal(credential.signCount, 2);
        const stored = await b.storage.passkeyCredentials.get(uvCredential.id);
        assert.equal(stored?.signCount, 2);
        assert.equal(stored?.lastUsedAt?.getTime(), T0);
        assert.deepEqual(b.events.map((e) => [e.kind, e.data.factor]), [[EVENT_KINDS.passkeyLogin, "first"]]);
      },
    );

    await t.step(
      "an assertion without UV is refused as a first factor with passkey_not_eligible",
      async () => {
        const { assertion } = recorded.withoutUserVerification;
        const id = await b.ceremony(CeremonyKinds.login, assertion.challenge, { realmId: b.realmId });
        await assert.rejects(b.passkeys.finishLogin(id, assertion.response), PasskeyNotEligibleError);
        assert.equal(b.events.length, 1, "no login event");
        // A verified assertion still moved the counter forward.
        assert.equal((await b.storage.passkeyCredentials.get(plainCredential.id))?.signCount, 2);
      },
    );

    await t.step("a UV assertion of a credential registered without UV is refused too", async () => {
      const [, second] = recorded.userVerifying.assertions;
      await b.storage.passkeyCredentials.delete(b.uvUser.id, uvCredential.id);
      const { registration } = recorded.userVerifying;
      const copy = await b.storage.passkeyCredentials.create({
        userId: b.uvUser.id,
        credentialId: fromBase64Url(registration.response.id),
        publicKey: uvCredential.publicKey,
        signCount: 2,
        userVerificationCapable: false,
      });
      const id = await b.ceremony(CeremonyKinds.login, second.challenge);
      await assert.rejects(b.passkeys.finishLogin(id, second.response), PasskeyNotEligibleError);
      await b.storage.passkeyCredentials.delete(b.uvUser.id, copy.id);
      await b.storage.passkeyCredentials.create({
        userId: b.uvUser.id,
        credentialId: fromBase64Url(registration.response.id),
        publicKey: uvCredential.publicKey,
        signCount: 2,
        userVerificationCapable: true,
      });
    });

    await t.step(
      "the same assertion is a second factor of the pending login it was started for",
      async () => {
        const { assertion } = recorded.withoutUserVerification;
        await b.storage.passkeyCredentials.delete(b.plainUser.id, plainCredential.id);
        const fresh = await registerPlain(b); // back at sign count 1
        b.events.length = 0;
        const pending = { userId: b.plainUser.id, pendingId: "jti-1" };
        const data = { pending: "jti-1" };
        const otherLogin = await b.ceremony(CeremonyKinds.secondFactor, assertion.challenge, {
          userId: b.plainUser.id,
          data: { pending: "jti-2" },
        });
        await assert.rejects(
          b.passkeys.finishSecondFactor(pending, otherLogin, assertion.response),
          PasskeyLoginError,
        );
        const firstFactorCeremony = await b.ceremony(CeremonyKinds.login, assertion.challenge, {
          userId: b.plainUser.id,
        });
        await assert.rejects(
          b.passkeys.finishSecondFactor(pending, firstFactorCeremony, assertion.response),
          PasskeyLoginError,
        );
        const id = await b.ceremony(CeremonyKinds.secondFactor, assertion.challenge, {
          userId: b.plainUser.id,
          data,
        });
        const verified = await b.passkeys.finishSecondFactor(pending, id, assertion.response);
        assert.equal(verified.credential.id, fresh.id);
        assert.equal(verified.userVerified, false);
        assert.deepEqual(b.events.map((e) => [e.kind, e.data.factor]), [[
          EVENT_KINDS.passkeyLogin,
          "second",
        ]]);
      },
    );

    await t.step("a credential of another user than the ceremony's fails", async () => {
      const [, second] = recorded.userVerifying.assertions;
      const id = await b.ceremony(CeremonyKinds.login, second.challenge, { userId: b.plainUser.id });
      await assert.rejects(
        b.passkeys.finishLogin(id, second.response),
        (e) => e instanceof PasskeyLoginError && /another user/.test(e.reason),
      );
    });

    await t.step("the cloned credential's lower count: generic failure, event, counter kept", async () => {
      const [, second] = recorded.userVerifying.assertions;
      const ok = await b.ceremony(CeremonyKinds.login, second.challenge);
      assert.equal((await b.passkeys.finishLogin(ok, second.response)).credential.signCount, 3);
      b.events.length = 0;

      const { cloneAssertion } = recorded.userVerifying;
      const id = await b.ceremony(CeremonyKinds.login, cloneAssertion.challenge);
      const error = await b.passkeys.finishLogin(id, cloneAssertion.response).catch((e) => e);
      assert.ok(error instanceof PasskeyLoginError);
      assert.equal(error.reason, "sign count regression");
      assert.deepEqual([error.code, error.status, error.message], [
        "invalid_credentials",
        401,
        "The credentials are invalid.",
      ]);
      assert.equal(b.events.length, 1);
      assert.equal(b.events[0].kind, "passkey.signcount_regression");
      assert.equal(b.events[0].userId, b.uvUser.id);
      assert.deepEqual(
        { stored: b.events[0].data.storedSignCount, presented: b.events[0].data.presentedSignCount },
        { stored: 3, presented: 1 },
      );
      const [stored] = await b.storage.passkeyCredentials.listByUser(b.uvUser.id);
      assert.equal(stored.signCount, 3);
    });

    await t.step(
      "the same count again (a replayed assertion under a new challenge hash) is a regression",
      async () => {
        const [, second] = recorded.userVerifying.assertions;
        const id = await b.ceremony(CeremonyKinds.login, second.challenge);
        await assert.rejects(
          b.passkeys.finishLogin(id, second.response),
          (e) => e instanceof PasskeyLoginError && e.reason === "sign count regression",
        );
      },
    );

    await t.step("a suspended user cannot sign in", async () => {
      await b.storage.users.update(b.plainUser.id, { status: "Suspended" });
      const { assertion } = recorded.withoutUserVerification;
      const id = await b.ceremony(CeremonyKinds.secondFactor, assertion.challenge, {
        userId: b.plainUser.id,
        data: { pending: "jti-3" },
      });
      await assert.rejects(
        b.passkeys.finishSecondFactor({ userId: b.plainUser.id, pendingId: "jti-3" }, id, assertion.response),
        (e) => e instanceof PasskeyLoginError && /not active/.test(e.reason),
      );
    });
  } finally {
    await b.close();
  }
});

Deno.test("username-first options: the user's credentials, or a stable decoy list for unknown emails", async () => {
  const b = await bed();
  try {
    const credential = await registerUv(b);
    const known = await b.passkeys.startLogin({ realmId: b.realmId, email: b.uvUser.email.toUpperCase() });
    assert.deepEqual(known.options.allowCredentials?.map((c) => c.id), [
      toBase64Url(credential.credentialId),
    ]);
    const ceremony = await b.storage.passkeyCeremonies.consume(known.ceremonyId);
    assert.equal(ceremony?.userId, b.uvUser.id);

    const unknown1 = await b.passkeys.startLogin({ realmId: b.realmId, email: "nobody@example.test" });
    const unknown2 = await b.passkeys.startLogin({ realmId: b.realmId, email: "nobody@example.test" });
    const noPasskeys = await b.passkeys.startLogin({ realmId: b.realmId, email: b.plainUser.email });
    assert.ok((unknown1.options.allowCredentials?.length ?? 0) >= 1);
    assert.deepEqual(unknown1.options.allowCredentials, unknown2.options.allowCredentials);
    assert.ok((noPasskeys.options.allowCredentials?.length ?? 0) >= 1);
    assert.notDeepEqual(noPasskeys.options.allowCredentials, unknown1.options.allowCredentials);
    assert.equal((await b.storage.passkeyCeremonies.consume(unknown1.ceremonyId))?.userId, null);
  } finally {
    await b.close();
  }
});

Deno.test("removal: by svc id or credential id, only the owner's, with passkey.removed", async () => {
  const b = await bed();
  try {
    const credential = await registerUv(b);
    b.events.length = 0;
    await assert.rejects(
      b.passkeys.remove(b.plainUser, credential.id),
      (e: Error & { code?: string }) => e.code === "not_found",
    );
    await assert.rejects(
      b.passkeys.remove(b.uvUser, "not-a-credential"),
      (e: Error & { code?: string }) => e.code === "not_found",
    );
    const removed = await b.passkeys.remove(b.uvUser, toBase64Url(credential.credentialId));
    assert.equal(removed.id, credential.id);
    assert.deepEqual(await b.passkeys.list(b.uvUser.id), []);
    assert.deepEqual(b.events.map((e) => [e.kind, e.data.passkeyId]), [[
      EVENT_KINDS.passkeyRemoved,
      credential.id,
    ]]);
  } finally {
    await b.close();
  }
});

Deno.test("a break-glass account never signs in with a passkey (one left from before the refusal)", async () => {
  const b = await bed();
  try {
    await registerUv(b);
    await b.markBreakGlass(b.uvUser.id);
    b.events.length = 0;
    const [first] = recorded.userVerifying.assertions;
    const id = await b.ceremony(CeremonyKinds.login, first.challenge, { realmId: b.realmId });
    await assert.rejects(
      b.passkeys.finishLogin(id, first.response),
      (e) => e instanceof PasskeyLoginError && e.reason === "break-glass account",
    );
    assert.deepEqual(b.events.map((e) => e.kind), [], "no login event");
  } finally {
    await b.close();
  }
});
