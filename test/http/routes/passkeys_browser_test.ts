/**
 * Passkeys end to end in headless Chromium (spec 4.2, 5.1, 5.3): svc serves a small test page
 * on http://localhost that calls navigator.credentials.create/get with a CDP virtual
 * authenticator (ctap2, internal transport, resident keys, with or without user verification)
 * and posts the responses to svc's passkey endpoints.
 */
import { strict as assert } from "node:assert";
import { fromBase64Url } from "../../../core/encoding.ts";
import { EVENT_KINDS } from "../../../core/events/catalog.ts";
import { DECOY_PROFILES } from "../../../core/passkeys/decoy.ts";
import { launchChromium } from "../../support/browser.ts";
import { svc } from "../../support/passkey-page.ts";
import {
  addVirtualAuthenticator,
  authenticatorPage,
  jwtClaims,
  type PageAnswer,
  startPasskeyServer,
} from "../../support/passkey-server.ts";

const FIVE_MINUTES = 5 * 60_000;

Deno.test({
  name:
    "passkeys in headless Chromium: register, passwordless login, eligibility, second factor, sign count, ceremonies",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const server = await startPasskeyServer();
    const { bed, origin, realmId } = server;
    const browser = await launchChromium();
    const newUser = async () => {
      const userId = await bed.seed.user(realmId);
      const { tokens } = await bed.signIn({ realmId, userId });
      const user = await bed.storage.users.get(userId);
      return { userId, email: user!.email, accessToken: tokens.accessToken };
    };
    const eventsOf = (kind: string, userId: string) =>
      bed.events.filter((e) => e.kind === kind && e.userId === userId);

    try {
      await t.step(
        "register, then passwordless login: the access token carries mfa PhishingResistant",
        async () => {
          const { userId, email, accessToken } = await newUser();
          const ap = await authenticatorPage(browser, origin, { userVerification: true });
          try {
            const registered: PageAnswer = await ap.page.evaluate(
              ([token]) => svc().register(token, "Laptop"),
              [accessToken],
            );
            assert.equal(registered.status, 201, JSON.stringify(registered.body));
            assert.equal(registered.body.passkey.userVerificationCapable, true);
            assert.equal(registered.body.passkey.name, "Laptop");
            assert.equal(eventsOf(EVENT_KINDS.passkeyRegistered, userId).length, 1);

            const listed: PageAnswer = await ap.page.evaluate(
              ([token]) => svc().api("GET", "auth/passkey/", undefined, token),
              [accessToken],
            );
            assert.equal(listed.status, 200);
            assert.deepEqual(listed.body.passkeys.map((p: { id: string }) => p.id), [
              registered.body.passkey.id,
            ]);
            assert.equal(listed.body.passkeys[0].publicKey, undefined);

            // Passwordless, discoverable: no user named.
            const login: PageAnswer = await ap.page.evaluate(() => svc().login());
            assert.equal(login.status, 200, JSON.stringify(login.body));
            assert.equal(login.body.tokenType, "Bearer");
            assert.ok(login.body.refreshToken.startsWith("srt_"));
            const claims = await bed.auth.tokens.verify("at+svc", login.body.accessToken);
            assert.equal(claims.sub, userId);
            assert.equal(claims.realm, realmId);
            assert.equal(claims.mfa, "PhishingResistant");
            const session = await bed.storage.sessions.get(claims.sid);
            assert.equal(session?.mfa, "PhishingResistant");

            // Username-first: the options list the user's credential.
            const started: PageAnswer = await ap.page.evaluate(
              ([e]) => svc().api("POST", "auth/passkey/login/options", { email: e }),
              [email],
            );
            assert.equal(started.status, 200);
            assert.deepEqual(
              started.body.options.allowCredentials.map((c: { id: string }) => c.id),
              [registered.body.passkey.credentialId],
            );
            const second: PageAnswer = await ap.page.evaluate(([e]) => svc().login({ email: e }), [email]);
            assert.equal(second.status, 200, JSON.stringify(second.body));
            assert.equal(jwtClaims(second.body.accessToken).mfa, "PhishingResistant");
            const logins = eventsOf(EVENT_KINDS.passkeyLogin, userId);
            assert.equal(logins.length, 2);
            assert.equal(logins[0].data.factor, "first");

            const stored = await bed.storage.passkeyCredentials.listByUser(userId);
            assert.ok(stored[0].signCount > 0 && stored[0].lastUsedAt !== null);

            // An unknown email gets options too (a decoy credential), and the same ones twice.
            const decoy = async () =>
              (await ap.page.evaluate(
                () => svc().api("POST", "auth/passkey/login/options", { email: "nobody@example.test" }),
              ) as PageAnswer).body.options.allowCredentials;
            const [d1, d2] = [await decoy(), await decoy()];
            assert.ok(d1.length >= 1);
            assert.deepEqual(d1, d2);
            // The passkey Chromium made has a shape decoys take too.
            const made = registered.body.passkey;
            assert.ok(DECOY_PROFILES.some((p) =>
              p.idBytes === fromBase64Url(made.credentialId).length &&
              JSON.stringify(p.transports) === JSON.stringify(made.transports)
            ));

            // Removal: 204, then the same 404 for it, for an unknown id and for another user.
            const removed: PageAnswer = await ap.page.evaluate(
              ([token, id]) => svc().api("DELETE", `auth/passkey/${id}`, undefined, token),
              [accessToken, registered.body.passkey.credentialId],
            );
            assert.equal(removed.status, 204);
            assert.equal(eventsOf(EVENT_KINDS.passkeyRemoved, userId).length, 1);
            const again: PageAnswer = await ap.page.evaluate(
              ([token, id]) => svc().api("DELETE", `auth/passkey/${id}`, undefined, token),
              [accessToken, registered.body.passkey.id],
            );
            assert.equal(again.status, 404);
            assert.equal(again.body.error.code, "not_found");
            const afterRemoval: PageAnswer = await ap.page.evaluate(() => svc().login());
            assert.equal(afterRemoval.status, 401);
            assert.equal(afterRemoval.body.error.code, "invalid_credentials");
          } finally {
            await ap.close();
          }
        },
      );

      await t.step(
        "an authenticator without user verification registers, is refused as a first factor, and is accepted as a second",
        async () => {
          const { userId, email, accessToken } = await newUser();
          const ap = await authenticatorPage(browser, origin, { userVerification: false });
          try {
            const registered: PageAnswer = await ap.page.evaluate(
              ([token]) => svc().register(token),
              [accessToken],
            );
            assert.equal(registered.status, 201, JSON.stringify(registered.body));
            assert.equal(registered.body.passkey.userVerificationCapable, false);

            // Username-first (Chrome offers no discoverable credential without user verification).
            const first: PageAnswer = await ap.page.evaluate(([e]) => svc().login({ email: e }), [email]);
            assert.equal(first.status, 401);
            assert.equal(first.body.error.code, "passkey_not_eligible");
            assert.equal(eventsOf(EVENT_KINDS.passkeyLogin, userId).length, 0);

            // A pending password login hands over an mfa+svc token.
            const { token: mfaToken } = await bed.auth.tokens.mint("mfa+svc", {
              realm: realmId,
              sub: userId,
              org: null,
              ip: "203.0.113.7",
              amr: "password",
              aud: "https://app.example.test",
            });
            const options: PageAnswer = await ap.page.evaluate(
              ([token]) => svc().api("POST", "auth/passkey/login/options", { mfaToken: token }),
              [mfaToken],
            );
            assert.deepEqual(
              options.body.options.allowCredentials.map((c: { id: string }) => c.id),
              [registered.body.passkey.credentialId],
            );
            const verified: PageAnswer = await ap.page.evaluate(([token]) => svc().mfa(token), [mfaToken]);
            assert.equal(verified.status, 200, JSON.stringify(verified.body));
            const claims = await bed.auth.tokens.verify("at+svc", verified.body.accessToken, {
              audience: "https://app.example.test",
            });
            assert.equal(claims.sub, userId);
            assert.equal(claims.mfa, "PhishingResistant");
            assert.equal((await bed.storage.sessions.get(claims.sid))?.ipAddress, "203.0.113.7");
            const logins = eventsOf(EVENT_KINDS.passkeyLogin, userId);
            assert.deepEqual(logins.map((e) => e.data.factor), ["second"]);

            // The hand-off is single use.
            const replay: PageAnswer = await ap.page.evaluate(
              ([token]) => svc().api("POST", "auth/passkey/login/options", { mfaToken: token }),
              [mfaToken],
            );
            assert.equal(replay.status, 401);
            assert.equal(replay.body.error.code, "invalid_token");
          } finally {
            await ap.close();
          }
        },
      );

      await t.step(
        "a credential copied into a second authenticator with a lower sign count is refused",
        async () => {
          const { userId, accessToken } = await newUser();
          const ap = await authenticatorPage(browser, origin, { userVerification: true });
          try {
            const registered: PageAnswer = await ap.page.evaluate(([token]) => svc().register(token), [
              accessToken,
            ]);
            assert.equal(registered.status, 201, JSON.stringify(registered.body));
            for (let i = 0; i < 2; i++) {
              const ok: PageAnswer = await ap.page.evaluate(() => svc().login());
              assert.equal(ok.status, 200, JSON.stringify(ok.body));
            }
            const [before] = await bed.storage.passkeyCredentials.listByUser(userId);
            assert.ok(before.signCount >= 2, `sign count ${before.signCount}`);

            // Copy the credential (private key included) into a second authenticator, at count 0.
            const { credentials } = await ap.cdp.send("WebAuthn.getCredentials", {
              authenticatorId: ap.authenticatorId,
            });
            assert.equal(credentials.length, 1);
            assert.equal(credentials[0].signCount, before.signCount);
            // Chrome allows one internal authenticator at a time: the original goes first.
            await ap.cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: ap.authenticatorId });
            const clone = await addVirtualAuthenticator(ap.cdp, { userVerification: true });
            await ap.cdp.send("WebAuthn.addCredential", {
              authenticatorId: clone,
              credential: { ...credentials[0], signCount: 0 },
            });

            const refused: PageAnswer = await ap.page.evaluate(() => svc().login());
            assert.equal(refused.status, 401);
            // The generic login failure, nothing about counters.
            assert.equal(refused.body.error.code, "invalid_credentials");
            assert.equal(refused.body.error.message, "The credentials are invalid.");
            const regressions = eventsOf(EVENT_KINDS.passkeySigncountRegression, userId);
            assert.equal(regressions.length, 1);
            assert.equal(regressions[0].data.passkeyId, before.id);
            assert.equal(regressions[0].data.storedSignCount, before.signCount);
            assert.equal(regressions[0].data.presentedSignCount, 1);
            const [after] = await bed.storage.passkeyCredentials.listByUser(userId);
            assert.equal(after.signCount, before.signCount);
          } finally {
            await ap.close();
          }
        },
      );

      await t.step("a ceremony completed twice, or after 5 minutes, fails", async () => {
        const { accessToken } = await newUser();
        const ap = await authenticatorPage(browser, origin, { userVerification: true });
        try {
          // Registration completed twice.
          const reg = await ap.page.evaluate(async ([token]) => {
            const started = await svc().api("POST", "auth/passkey/register/options", {}, token);
            const response = await svc().create(started.body.options);
            const body = { ceremonyId: started.body.ceremonyId, response };
            return [
              await svc().api("POST", "auth/passkey/register", body, token),
              await svc().api("POST", "auth/passkey/register", body, token),
            ];
          }, [accessToken]) as PageAnswer[];
          assert.equal(reg[0].status, 201, JSON.stringify(reg[0].body));
          assert.equal(reg[1].status, 400);
          assert.equal(reg[1].body.error.code, "passkey_registration_failed");

          // Login completed twice.
          const twice = await ap.page.evaluate(async () => {
            const { ceremonyId, response } = await svc().assertion();
            return [
              await svc().api("POST", "auth/passkey/login", { ceremonyId, response }),
              await svc().api("POST", "auth/passkey/login", { ceremonyId, response }),
            ];
          }) as PageAnswer[];
          assert.equal(twice[0].status, 200, JSON.stringify(twice[0].body));
          assert.equal(twice[1].status, 401);
          assert.equal(twice[1].body.error.code, "invalid_credentials");

          // A login ceremony completed after 5 minutes.
          const pending = await ap.page.evaluate(() => svc().assertion());
          bed.clock.advance(FIVE_MINUTES);
          const late: PageAnswer = await ap.page.evaluate(
            (body) => svc().api("POST", "auth/passkey/login", body),
            pending,
          );
          assert.equal(late.status, 401);
          assert.equal(late.body.error.code, "invalid_credentials");

          // Just inside 5 minutes still works.
          const early = await ap.page.evaluate(() => svc().assertion());
          bed.clock.advance(FIVE_MINUTES - 1000);
          const inTime: PageAnswer = await ap.page.evaluate(
            (body) => svc().api("POST", "auth/passkey/login", body),
            early,
          );
          assert.equal(inTime.status, 200, JSON.stringify(inTime.body));

          // A registration ceremony completed after 5 minutes (a second authenticator registers).
          const { accessToken: fresh } = await newUser();
          const regLate = await ap.page.evaluate(async ([token]) => {
            const started = await svc().api("POST", "auth/passkey/register/options", {}, token);
            const response = await svc().create(started.body.options);
            return { ceremonyId: started.body.ceremonyId, response };
          }, [fresh]);
          bed.clock.advance(FIVE_MINUTES);
          const expired: PageAnswer = await ap.page.evaluate(
            ([token, body]) => svc().api("POST", "auth/passkey/register", body, token),
            [fresh, regLate] as const,
          );
          assert.equal(expired.status, 400);
          assert.equal(expired.body.error.code, "passkey_registration_failed");
        } finally {
          await ap.close();
        }
      });
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
