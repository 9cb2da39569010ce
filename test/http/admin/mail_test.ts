/**
 * `GET /svc-admin/mail` and `/svc-admin/mail/{id}` (issue 14): the realm's mail, newest first,
 * filtered, with bodies only in the detail, no-store, and only messages to the realm's users.
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("admin mail: list, filter, read one; messages to strangers stay hidden", async () => {
  const admin = await adminBed();
  try {
    const outbox = admin.bed.storage.mailOutbox;
    const userId = await seeder(admin.bed.database.db).user(admin.realmId);
    const email = (await admin.bed.storage.users.get(userId))!.email;
    const base = { from: "no-reply@localhost", html: "<p>x</p>" };
    const reset = await outbox.add({
      ...base,
      kind: "password_reset",
      to: email,
      subject: "r",
      text: "link",
    });
    const otp = await outbox.add({
      ...base,
      kind: "email_otp",
      to: email.toUpperCase(),
      subject: "o",
      text: "code",
    });
    const stranger = await outbox.add({
      ...base,
      kind: "invitation",
      to: "nobody@elsewhere.test",
      subject: "s",
      text: "secret",
    });
    await outbox.markDelivered(otp.id);

    const list = await admin.request("GET", "/svc-admin/mail");
    assert.equal(list.status, 200);
    assert.match(list.headers.get("Cache-Control") ?? "", /no-store/);
    const body = await list.json();
    assert.deepEqual(
      body.items.map((m: { id: string }) => m.id),
      [otp.id, reset.id],
      "newest first, realm only",
    );
    assert.equal(body.total, 2);
    assert.equal(body.items[0].text, undefined, "no bodies in the list");
    assert.equal(body.items[0].deliveryStatus, "sent");

    const pending = await (await admin.request("GET", "/svc-admin/mail?status=pending")).json();
    assert.deepEqual(pending.items.map((m: { id: string }) => m.id), [reset.id]);
    const byKind = await (await admin.request("GET", "/svc-admin/mail?kind=email_otp")).json();
    assert.deepEqual(byKind.items.map((m: { id: string }) => m.id), [otp.id]);
    assert.equal((await admin.request("GET", "/svc-admin/mail?status=lost")).status, 400);

    const one = await admin.request("GET", `/svc-admin/mail/${reset.id}`);
    assert.equal(one.status, 200);
    assert.match(one.headers.get("Cache-Control") ?? "", /no-store/);
    const detail = await one.json();
    assert.deepEqual([detail.text, detail.html, detail.kind], ["link", "<p>x</p>", "password_reset"]);

    assert.equal((await admin.request("GET", `/svc-admin/mail/${stranger.id}`)).status, 404);
    assert.equal((await admin.request("GET", "/svc-admin/mail/not-a-uuid")).status, 404);
    assert.equal((await admin.request("GET", `/svc-admin/mail/${reset.id}`, { as: "orgA" })).status, 403);
  } finally {
    await admin.close();
  }
});
