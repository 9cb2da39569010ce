/**
 * Every table that holds realm data names its realm (issue 24): after `ensureSchema()` on
 * Postgres, each table of the schema (read from `information_schema`) either has a `realm_id`
 * column, or is in one of two explicit lists below:
 *
 * - global tables, which hold nothing of any realm (server secrets, the schema state, catalogs
 *   shared by all realms, single-use marks keyed by hashes);
 * - child tables, whose rows belong to exactly one parent row of a realm table: the test checks
 *   that the named column is a foreign key to a table that itself names its realm (directly or
 *   through its own parent), so the realm of every row is one join away and cannot be forged.
 *
 * A new table fails the test until it gets a `realm_id` column or a commented entry here.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { freshPostgres } from "../support/db.ts";

/** Tables that hold no realm's data. */
const GLOBAL_TABLES: Readonly<Record<string, string>> = {
  server_secrets: "secrets of svc itself (HMAC keys shared by every instance), not of a realm",
  svc_schema_state: "the fingerprint of the DDL that last ran",
  permission_catalog: "the permission ids apps declare, shared by all realms",
  app_catalog: "the apps that declared permissions, shared by all realms",
  consumed_tokens: "jtis of spent single-use tokens (the token itself names its realm)",
  consumed_saml_assertions: "ids of spent SAML assertions",
  svc_instances: "the svc processes sharing this database (issuer, host, heartbeat), not a realm's data",
  dpop_proofs: "hashes of used DPoP proofs (key thumbprint and jti); a proof names no realm, its token does",
  abuse_counters: "windowed counters keyed by hashes; never a plaintext identifier",
  email_otp_challenges: "a code hash under a challenge id bound to a login or enrollment, nothing else",
  subject_keys:
    "one key per subject id (a user or service account, whose own row names the realm); destroyed on erasure",
};

/**
 * Tables whose rows each belong to one parent row: column(s) → the parent. With several columns,
 * each row sets exactly one of them (a CHECK of the table).
 */
const CHILD_TABLES: Readonly<Record<string, readonly string[]>> = {
  organization_domains: ["org_id"],
  org_memberships: ["org_id"],
  team_members: ["team_id"],
  group_members: ["group_id"],
  grants: ["role_id", "policy_id"],
  password_credentials: ["user_id"],
  recovery_codes: ["user_id"],
  totp_enrollments: ["user_id"],
  passkey_credentials: ["user_id"],
  known_devices: ["user_id"],
  federated_identities: ["user_id"],
  email_otp_enrollments: ["user_id"],
  webhook_deliveries: ["endpoint_id"],
};

/**
 * Tables with a nullable `realm_id`, and why a row may lack one. Such a row is never shown to a
 * realm administrator (every admin query matches the caller's realm id, and null matches none).
 */
const NULLABLE_REALM: Readonly<Record<string, string>> = {
  passkey_ceremonies: "a discoverable-credential sign-in ceremony starts before any realm is known",
  security_events: "events of the server itself (no realm)",
  mail_outbox: "mail stored before messages carried their realm, to an address no single realm's user had",
};

Deno.test("schema: every table that holds realm data has a realm column (or a commented exemption)", async () => {
  const database = await freshPostgres({ maxConnections: 1 });
  try {
    const tables = (await sql<{ name: string }>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
      .execute(database.db)).rows.map((r) => r.name);
    const columns = (await sql<{ table: string; column: string; nullable: string }>`
      SELECT table_name AS "table", column_name AS "column", is_nullable AS nullable
      FROM information_schema.columns WHERE table_schema = current_schema()`.execute(database.db)).rows;
    const foreignKeys = (await sql<{ table: string; column: string; parent: string }>`
      SELECT kcu.table_name AS "table", kcu.column_name AS "column", ccu.table_name AS parent
      FROM information_schema.table_constraints AS tc
      JOIN information_schema.key_column_usage AS kcu
        ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
      JOIN information_schema.constraint_column_usage AS ccu
        ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
      WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema()`.execute(database.db))
      .rows;
    assert.ok(tables.length > 30, `the schema has its tables (${tables.length})`);
    assert.ok(tables.includes("mail_outbox"));

    const column = (table: string, name: string) =>
      columns.find((c) => c.table === table && c.column === name);
    const realmScoped = (table: string, seen: Set<string> = new Set()): boolean => {
      if (table === "realms" || column(table, "realm_id") !== undefined) return true;
      if (seen.has(table) || CHILD_TABLES[table] === undefined) return false;
      seen.add(table);
      return CHILD_TABLES[table].every((name) =>
        foreignKeys.some((fk) => fk.table === table && fk.column === name && realmScoped(fk.parent, seen))
      );
    };

    const problems: string[] = [];
    for (const table of tables) {
      if (table === "realms") continue;
      const realm = column(table, "realm_id");
      if (realm !== undefined) {
        if (realm.nullable === "YES" && NULLABLE_REALM[table] === undefined) {
          problems.push(`${table}.realm_id is nullable without a reason in NULLABLE_REALM`);
        }
        if (GLOBAL_TABLES[table] !== undefined || CHILD_TABLES[table] !== undefined) {
          problems.push(`${table} has realm_id: drop its exemption`);
        }
        continue;
      }
      if (GLOBAL_TABLES[table] !== undefined) continue;
      const parents = CHILD_TABLES[table];
      if (parents === undefined) {
        problems.push(`${table} has no realm_id column and no exemption`);
        continue;
      }
      if (parents.length === 1 && column(table, parents[0])?.nullable !== "NO") {
        problems.push(`${table}.${parents[0]} must be NOT NULL to tie each row to its parent`);
      }
      if (!realmScoped(table)) {
        problems.push(`${table}: ${parents.join("/")} is no foreign key to a realm table`);
      }
    }
    for (const listed of [...Object.keys(GLOBAL_TABLES), ...Object.keys(CHILD_TABLES)]) {
      if (!tables.includes(listed)) problems.push(`${listed} is exempted but no longer exists`);
    }
    for (const listed of Object.keys(NULLABLE_REALM)) {
      if (column(listed, "realm_id")?.nullable !== "YES") {
        problems.push(`${listed}: drop its NULLABLE_REALM entry`);
      }
    }
    assert.deepEqual(problems, []);
  } finally {
    await database.close();
  }
});
