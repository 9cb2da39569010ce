/**
 * `POST /auth/invitation/describe` (issue 27): the accept page names the invited address and the
 * organization for a live invitation token; every token that is not one (garbage, tampered, used,
 * its user suspended) gets the same answer, which names nothing; the answer is not cached.
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";

Deno.test("POST /auth/invitation/describe: names the address and organization of a live invitation only", async () => {
  const admin = await adminBed();
  try {
    const org = await admin.request("POST", "/svc-admin/organizations", {
      body: { name: "acme", displayName: "Acme Corp" },
    });
    assert.equal(org.status, 201);
    const orgId = (await org.json()).id;
    const invited = await admin.request("POST", "/svc-admin/users/invite", {
      body: { email: "joiner@example.test", orgId },
    });
    assert.equal(invited.status, 201, await invited.clone().text());
    const userId = (await invited.json()).userId;
    const realmWide = await admin.request("POST", "/svc-admin/users/invite", {
      body: { email: "solo@example.test" },
    });
    assert.equal(realmWide.status, 201);
    await realmWide.body?.cancel();

    const token = await admin.bed.mailedToken("joiner@example.test", "invitation");
    const describe = (t: unknown) => admin.bed.post("/auth/invitation/describe", { token: t });
    let res = await describe(token);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Cache-Control"), "no-store");
    assert.deepEqual(await res.json(), {
      email: "joiner@example.test",
      organization: { name: "acme", displayName: "Acme Corp" },
    });
    // Describing does not use the token up.
    res = await describe(token);
    assert.equal(res.status, 200);
    await res.body?.cancel();

    const solo = await admin.bed.mailedToken("solo@example.test", "invitation");
    res = await describe(solo);
    assert.deepEqual(await res.json(), { email: "solo@example.test", organization: null });

    // Not a live invitation: one answer for every cause, naming no address or organization.
    const refusals: { status: number; body: string }[] = [];
    const refused = async (t: unknown) => {
      const r = await describe(t);
      const body = await r.text();
      assert.doesNotMatch(body, /joiner|solo|acme/i);
      refusals.push({ status: r.status, body });
    };
    await refused("not-a-token");
    await refused(`${token.slice(0, -4)}AAAA`);
    // Its user suspended.
    const suspended = await admin.request("POST", `/svc-admin/users/${userId}/suspend`, {
      body: { reason: "test" },
    });
    assert.equal(suspended.status, 200, await suspended.clone().text());
    await suspended.body?.cancel();
    await refused(token);
    // Used: accepted once, then described.
    const accepted = await admin.bed.post("/auth/invitation/accept", {
      token: solo,
      password: "a long enough password",
    });
    assert.equal(accepted.status, 200, await accepted.clone().text());
    await accepted.body?.cancel();
    await refused(solo);
    assert.ok(refusals.every((r) => r.status === 400 || r.status === 401), JSON.stringify(refusals));
    const codes = refusals.map((r) => JSON.parse(r.body).error.code);
    assert.deepEqual(new Set(codes).size, 1, JSON.stringify(codes));
    // Validated: U+0000 and a missing token are refused before any lookup.
    assert.equal((await describe("a\u0000b")).status, 400);
    assert.equal((await admin.bed.post("/auth/invitation/describe", {})).status, 400);
  } finally {
    await admin.close();
  }
});
