/**
 * One address, one account, through the HTTP app: the spellings found in review (NFC and NFD
 * `café`, fullwidth `ａｄｍｉｎ`, a trailing-dot domain) cannot create separate accounts through
 * admin create or admin update, an import finds the existing account, and a login with any
 * spelling signs in to the one account.
 */
import assert from "node:assert/strict";
import { adminBed } from "../../support/admin.ts";

Deno.test("emails over HTTP: NFC/NFD, fullwidth and trailing-dot spellings are one account", async () => {
  const admin = await adminBed();
  const { bed } = admin;
  const create = async (email: string, password = "correct horse") => {
    const res = await admin.request("POST", "/svc-admin/users", { body: { email, password } });
    const body = await res.json();
    return { status: res.status, body };
  };
  try {
    const cafe = await create("café@example.test");
    assert.equal(cafe.status, 201, JSON.stringify(cafe.body));
    assert.equal(cafe.body.email, "café@example.test");
    const nfd = await create("cafe\u0301@example.test");
    assert.equal(nfd.status, 409);
    assert.equal(nfd.body.error.code, "user_email_taken");

    const plain = await create("admin.one@example.test");
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
    for (
      const variant of [
        "ａｄｍｉｎ．ｏｎｅ@example.test",
        "admin.one@example.test.",
        "Admin.One@EXAMPLE.test．",
      ]
    ) {
      const again = await create(variant);
      assert.equal(again.status, 409, variant);
      assert.equal(again.body.error.code, "user_email_taken", variant);
    }

    // A fullwidth address is stored in its normal form; an update to another spelling of a taken one is refused.
    const wide = await create("ｗｉｄｅ@ＥＸＡＭＰＬＥ.test.");
    assert.equal(wide.status, 201, JSON.stringify(wide.body));
    assert.equal(wide.body.email, "wide@example.test");
    const patch = await admin.request("PATCH", `/svc-admin/users/${wide.body.id}`, {
      body: { email: "CAFE\u0301@example.test." },
    });
    assert.equal(patch.status, 409);
    assert.equal((await patch.json()).error.code, "user_email_taken");

    // An import of another spelling updates the one account.
    const imported = await admin.request("POST", "/svc-admin/imports/auth0", {
      body: JSON.stringify({
        email: "ＡＤＭＩＮ．ＯＮＥ@example.test.",
        email_verified: true,
        name: "Admin One",
      }),
      headers: { "Content-Type": "application/x-ndjson" },
    });
    assert.equal(imported.status, 200);
    const report = await imported.json();
    assert.equal(report.users.created, 0, JSON.stringify(report));

    // Login with any spelling reaches the one account.
    for (const email of ["cafe\u0301@example.test", "ｃａｆé@example.test.", "admin.one@example.test."]) {
      const res = await bed.post("/auth/login", { email, password: "correct horse" });
      assert.equal(res.status, 200, email);
    }
    const users = await bed.storage.users.search(admin.realmId, { q: "", offset: 0, limit: 1000 });
    const emails = users.items.map((u) => u.email);
    assert.deepEqual(emails.filter((e) => e.startsWith("caf")), ["café@example.test"]);
    assert.deepEqual(emails.filter((e) => e.startsWith("admin.one")), ["admin.one@example.test"]);
  } finally {
    await admin.close();
  }
});
