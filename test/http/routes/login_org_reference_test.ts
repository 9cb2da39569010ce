/**
 * `POST /auth/login` takes `org` as an organization's id, name (any case) or verified email
 * domain. A name or domain is resolved only among the signed-in user's own organizations, after
 * the password: an organization that exists but is not the user's, and one that does not exist,
 * get the same 403; a wrong password answers 401 whatever the reference.
 */
import { strict as assert } from "node:assert";
import { EMAIL_DOMAIN } from "../../../core/storage/organizations.ts";
import { loginBed } from "../../support/login.ts";

const claimsOf = (token: string) =>
  JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
const withoutRequestId = (body: { error: Record<string, unknown> }) => {
  const { requestId: _, ...rest } = body.error;
  return rest;
};

Deno.test("password login: org by id, name or verified domain of the user's organizations; others one 403", async () => {
  const bed = await loginBed();
  try {
    const userId = await bed.user("ida@example.test", "ida's password");
    const acme = await bed.storage.organizations.create({
      realmId: bed.realmId,
      name: "acme",
      displayName: "Acme",
    });
    const other = await bed.storage.organizations.create({
      realmId: bed.realmId,
      name: "other",
      displayName: "Other",
    });
    await bed.storage.organizations.addMember(acme.id, userId);
    await bed.storage.organizations.addDomain({
      orgId: acme.id,
      kind: EMAIL_DOMAIN,
      value: "acme.test",
      verified: true,
    });
    await bed.storage.organizations.addDomain({ orgId: acme.id, kind: EMAIL_DOMAIN, value: "unproven.test" });
    await bed.storage.organizations.addDomain({
      orgId: other.id,
      kind: EMAIL_DOMAIN,
      value: "other.test",
      verified: true,
    });
    const login = { email: "ida@example.test", password: "ida's password" };

    for (const org of [acme.id, "acme", "ACME", " Acme ", "acme.test", "Acme.Test"]) {
      const res = await bed.post("/auth/login", { ...login, org });
      assert.equal(res.status, 200, `${org}: ${await res.clone().text()}`);
      const body = await res.json();
      assert.equal(claimsOf(body.accessToken).org, acme.id, org);
    }

    // A refusal keeps the attempt's lockout slot (five lock the account): one member per reference.
    const refusals = [];
    for (
      const [i, org] of [other.id, "other", "other.test", "unproven.test", "no-such-org", "nowhere.test"]
        .entries()
    ) {
      const member = await bed.user(`member${i}@example.test`, "a member's password");
      await bed.storage.organizations.addMember(acme.id, member);
      const res = await bed.post("/auth/login", {
        email: `member${i}@example.test`,
        password: "a member's password",
        org,
      });
      refusals.push([org, res.status, withoutRequestId(await res.json())] as const);
    }
    for (const [org, status, body] of refusals) {
      assert.equal(status, 403, org);
      assert.deepEqual(body, refusals[0][2], org);
    }

    const wrong = await bed.post("/auth/login", { ...login, password: "not it", org: "acme" });
    assert.equal(wrong.status, 401);
    assert.equal((await wrong.json()).error.code, "invalid_credentials");

    const tooLong = await bed.post("/auth/login", { ...login, org: "a".repeat(254) });
    assert.equal(tooLong.status, 400);
    await tooLong.body?.cancel();
  } finally {
    await bed.close();
  }
});
