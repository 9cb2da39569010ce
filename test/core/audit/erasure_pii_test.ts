/**
 * Erasure leaves no personal data behind (issue 19 item 19): after a user signs in from two
 * addresses (new-device alerts, risk decisions, webhooks subscribed to every event), fails a
 * login, asks for a reset link and is erased, no row of any table, in any text, text[] or jsonb
 * column, still holds their email address or any of their IP addresses. The walk reads the
 * schema from the catalog, so a table added later is covered without touching this test. A
 * bystander's data stays.
 *
 * Issue 25: every address and name the person ever had goes too. Between the mail and the
 * erasure the user invites someone (the invitation mail names them), an administrator changes
 * their address and display name, impersonates the bystander with a reason that names them and
 * issues an API key named after them: neither the old nor the new address, nor either display
 * name, is left anywhere, and the realm's audit chain still verifies.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { eraseUser } from "../../../core/audit/erasure.ts";
import type { SvcDatabase } from "../../../storage/open.ts";
import { drivers } from "../../support/db.ts";
import { adminBed } from "../../support/admin.ts";
import { freshServiceAccount } from "../../http/admin/cases/credentials.ts";

interface Hit {
  table: string;
  column: string;
  needle: string;
}

/** Every (table, column) of the current schema whose text holds one of `needles` (case-insensitive). */
async function findEverywhere(database: SvcDatabase, needles: readonly string[]): Promise<Hit[]> {
  const columns = await sql<{ table_name: string; column_name: string; data_type: string }>`
    SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      AND (c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY', 'bytea'))
    ORDER BY 1, 2`.execute(database.db);
  assert.ok(columns.rows.length > 50, "the walk sees the schema");
  const hits: Hit[] = [];
  for (const { table_name: table, column_name: column, data_type: type } of columns.rows) {
    const text = type === "bytea" ? sql`encode(${sql.ref(column)}, 'escape')` : sql`${sql.ref(column)}::text`;
    for (const needle of needles) {
      const found = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${sql.table(table)}
        WHERE position(lower(${needle}) in lower(${text})) > 0`.execute(database.db);
      if (found.rows[0].n > 0) hits.push({ table, column, needle });
    }
  }
  return hits;
}

for (const driver of drivers) {
  Deno.test(`erasure (${driver.name}): no row anywhere keeps the user's email or IP addresses`, async () => {
    const admin = await adminBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" }, {
      database: await driver.open(),
      sqlCounters: true,
    });
    const bed = admin.bed;
    try {
      await bed.storage.webhooks.createEndpoint({
        realmId: bed.realmId,
        url: "https://hooks.example.test/svc",
        secret: "whsec_test",
        eventPatterns: ["*"],
      });
      const email = "Ada.Lovelace@Example.test";
      const ips = ["198.51.100.77", "2001:db8:77::5"];
      const userId = await bed.user(email, "ada's password");
      const bystander = await bed.user("bob@example.test", "bob's password");

      for (const ip of ips) {
        const ok = await bed.post("/auth/login", { email, password: "ada's password" }, { ip });
        assert.equal(ok.status, 200, await ok.clone().text());
        bed.clock.advance(60_000);
      }
      await bed.post("/auth/login", { email, password: "wrong" }, { ip: ips[0] });
      await bed.post("/auth/password/forgot", { email }, { ip: ips[1] });
      await bed.post("/auth/login", { email: "bob@example.test", password: "bob's password" }, {
        ip: "192.0.2.200",
      });
      await bed.post("/auth/password/forgot", { email: "bob@example.test" }, { ip: "192.0.2.200" });
      await bed.login.idle();

      // Issue 25: a name, an invitation that carries it, then a new address and a new name.
      const oldName = "Ada Lovelace";
      const newName = "Augusta King";
      const newEmail = "countess@example.test";
      await bed.storage.users.update(userId, { displayName: oldName });
      await bed.login.accounts.invite({
        realmId: bed.realmId,
        actor: { id: userId, kind: "User" },
        inviterId: userId,
        email: "carol@example.test",
        realmWide: true,
      });
      const invitation = await bed.mail("carol@example.test", "invitation");
      assert.match(invitation!.text, /Ada Lovelace/, "the invitation names the inviter");
      const changed = await admin.request("PATCH", `/svc-admin/users/${userId}`, {
        body: { email: newEmail, displayName: newName },
      });
      assert.equal(changed.status, 200, await changed.clone().text());
      await bed.login.idle();
      // Free text typed by administrators that names her.
      const impersonation = await admin.request("POST", "/svc-admin/impersonation", {
        body: { targetUserId: bystander, reason: `asked by ${email} (${oldName})` },
      });
      assert.equal(impersonation.status, 201, await impersonation.clone().text());
      const key = await admin.request("POST", "/svc-admin/api-keys", {
        body: {
          ownerKind: "ServiceAccount",
          ownerId: await freshServiceAccount(admin),
          name: `for ${newEmail}`,
        },
      });
      assert.equal(key.status, 201, await key.clone().text());

      const needles = [email, ...ips, newEmail, oldName, newName];
      const before = await findEverywhere(bed.database, needles);
      for (
        const [where, needle] of [
          ["webhook_deliveries.payload", email],
          ["mail_outbox.recipient", email],
          ["mail_outbox.recipient", newEmail],
          ["mail_outbox.text_body", oldName],
          ["sessions.ip_address", ips[0]],
          ["impersonations.reason", email],
          ["api_keys.name", newEmail],
          ["admin_audit_entries.after_json", newEmail],
          ["admin_audit_entries.before_json", oldName],
        ]
      ) {
        assert.ok(
          before.some((h) => `${h.table}.${h.column}` === where && h.needle === needle),
          `${needle} reached ${where}`,
        );
      }

      const report = await eraseUser({ storage: bed.storage, clock: bed.clock }, bed.realmId, userId, {
        id: "dpo",
        kind: "System",
      });
      assert.ok(report.mailDeleted >= 3, "reset, alerts and verification mail, to either address");
      assert.ok(report.mailRedacted >= 1, "the invitation to another person");
      assert.ok(report.freeTextRedacted >= 2, "the impersonation reason and the API key name");
      assert.ok(report.auditMentionsRedacted >= 2, "the impersonation and API key entries");

      const after = await findEverywhere(bed.database, needles);
      assert.deepEqual(after, [], `left behind: ${JSON.stringify(after)}`);
      const verified = await bed.storage.adminAudit.verify(bed.realmId);
      assert.equal(verified.valid, true, JSON.stringify(verified.firstBad));
      const carol = await bed.storage.mailOutbox.get(invitation!.id);
      assert.match(carol!.text, /\[erased\]/, "the invitation stays, without her name");

      // Nothing of the bystander was touched.
      const bystanderHits = await findEverywhere(bed.database, ["bob@example.test", "192.0.2.200"]);
      for (
        const where of [
          "users.email",
          "mail_outbox.recipient",
          "sessions.ip_address",
          "webhook_deliveries.payload",
        ]
      ) {
        assert.ok(
          bystanderHits.some((h) => `${h.table}.${h.column}` === where),
          `bystander data kept in ${where}`,
        );
      }
      assert.equal((await bed.storage.users.get(bystander))?.email, "bob@example.test");
      // Every stored payload is still a webhook body.
      const payloads = await bed.database.db.selectFrom("webhook_deliveries").select("payload").execute();
      for (const { payload } of payloads) assert.equal(typeof JSON.parse(payload).kind, "string");
    } finally {
      await admin.close();
    }
  });
}
