/**
 * `GET /svc-admin/mail` and `/svc-admin/mail/{id}` (issue 14): the realm's mail, newest first,
 * filtered, with bodies only in the detail, no-store, and only the realm's messages (issue 24: by
 * the message's realm, never by matching its address to the realm's users).
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";
import { otherRealm } from "../../support/other-realm.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("admin mail: list, filter, read one; other realms' messages stay hidden", async () => {
  const admin = await adminBed();
  try {
    const outbox = admin.bed.storage.mailOutbox;
    const userId = await seeder(admin.bed.database.db).user(admin.realmId);
    const email = (await admin.bed.storage.users.get(userId))!.email;
    const base = { realmId: admin.realmId, userId, from: "no-reply@localhost", html: "<p>x</p>" };
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
    // Another realm's message to the same address as the realm's user: not the realm's.
    const stranger = await outbox.add({
      ...base,
      realmId: (await otherRealm(admin)).realmId,
      userId: null,
      kind: "invitation",
      to: email,
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
    const byAddress = await (await admin.request("GET", `/svc-admin/mail?to=${encodeURIComponent(email)}`))
      .json();
    assert.deepEqual(byAddress.items.map((m: { id: string }) => m.id), [otp.id, reset.id]);
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

Deno.test("admin mail: another realm's administrator cannot read a reset link by taking the address (issue 24)", async () => {
  const admin = await adminBed();
  try {
    const rival = await otherRealm(admin);
    const victim = "root@example.test"; // the default realm's bootstrap administrator
    // The rival realm's administrator gives one of its users the victim's address…
    const created = await rival.request("POST", "/svc-admin/users", {
      body: { email: victim, displayName: "Look-alike" },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const lookAlike = (await created.json()).id as string;
    // …and asks the default realm to mail the victim a reset link.
    const forgot = await admin.bed.post("/auth/password/forgot", { email: victim });
    assert.equal(forgot.status, 202);
    const reset = await admin.bed.mail(victim, "password_reset");
    assert.ok(reset, "the default realm mailed its administrator");
    assert.equal(reset.realmId, admin.realmId);
    assert.equal(reset.userId, admin.users.global);

    const list = await (await rival.request("GET", `/svc-admin/mail?to=${encodeURIComponent(victim)}`))
      .json();
    assert.deepEqual(list.items, [], "not in the rival realm's list");
    assert.equal(list.total, 0);
    const read = await rival.request("GET", `/svc-admin/mail/${reset.id}`);
    assert.equal(read.status, 404, "not readable by the rival realm");
    assert.doesNotMatch(await read.text(), /token=/);
    // The default realm's administrator still reads it.
    assert.equal((await admin.request("GET", `/svc-admin/mail/${reset.id}`)).status, 200);

    // Erasing the look-alike deletes only the rival realm's mail, not the default realm's.
    const erased = await rival.request("POST", `/svc-admin/users/${lookAlike}/erase`, { body: {} });
    assert.equal(erased.status, 200, await erased.clone().text());
    const kept = await admin.bed.storage.mailOutbox.get(reset.id);
    assert.ok(kept, "the default realm's mail to the same address stays");
    assert.match(kept.text, /token=/, "and is not redacted");
  } finally {
    await admin.close();
  }
});
