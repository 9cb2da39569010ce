/**
 * The sign-in reads in one statement (issue 29): the realm (by id, by name, or the default),
 * the account by its normalised login name, its latest password credential, whether the
 * request's device is known, its `login_history` row and its enrolled second factors. One row
 * always comes back, with nulls where nothing matched, so an unknown account costs the same
 * statement as a known one.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { SignInReadStore, SignInRecord } from "../../core/storage/sign-ins.ts";
import { normalizeEmail } from "../../core/storage/users.ts";
import type { Database, Executor } from "../database.ts";
import { passwordCredentialFromRow } from "./password-credentials.ts";
import { realmFromRow } from "./realms.ts";
import { userFromRow } from "./users.ts";

const REALM_COLUMNS = [
  "id",
  "name",
  "display_name",
  "is_default",
  "self_sign_up",
  "brand_product_name",
  "brand_color",
  "brand_logo_url",
  "created_at",
] as const;
const USER_COLUMNS = [
  "id",
  "realm_id",
  "email",
  "email_verified",
  "display_name",
  "status",
  "attributes",
  "is_break_glass",
  "anonymized_at",
  "created_at",
  "updated_at",
  "credential_stamp",
  "version",
] as const;
const CREDENTIAL_COLUMNS = ["id", "user_id", "algorithm", "hash", "created_at", "updated_at"] as const;

function columns(table: string, prefix: string, names: readonly string[]) {
  return names.map((name) => sql`${sql.ref(`${table}.${name}`)} AS ${sql.ref(`${prefix}${name}`)}`);
}

function unprefixed<T>(row: Record<string, unknown>, prefix: string, names: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = row[`${prefix}${name}`];
  return out as T;
}

/** A {@link SignInReadStore} over the svc schema. */
export function createSqlSignInReadStore(db: Executor): SignInReadStore {
  return {
    async read(lookup): Promise<SignInRecord> {
      const ref = lookup.realm === null || lookup.realm === "" ? null : lookup.realm;
      const email = typeof lookup.email === "string" ? normalizeEmail(lookup.email) : "";
      const { rows } = await sql<Record<string, unknown>>`WITH r AS (
          SELECT * FROM realms
          WHERE CASE WHEN ${ref}::text IS NULL THEN is_default ELSE (id::text = ${ref} OR name = ${ref}) END
          ORDER BY (id::text = coalesce(${ref}::text, '')) DESC LIMIT 1
        ), u AS (
          SELECT users.* FROM users JOIN r ON users.realm_id = r.id WHERE users.email = ${email}
        )
        SELECT ${sql.join([...columns("r", "r_", REALM_COLUMNS), ...columns("u", "u_", USER_COLUMNS)])},
          ${sql.join(columns("c", "c_", CREDENTIAL_COLUMNS))},
          EXISTS (SELECT 1 FROM known_devices d
            WHERE d.user_id = u.id AND d.fingerprint_hash = ${lookup.deviceHash}) AS device_known,
          h.last_at AS h_last_at, h.last_ip AS h_last_ip, h.recent_ms AS h_recent_ms,
          EXISTS (SELECT 1 FROM totp_enrollments t
            WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL) AS totp_confirmed,
          EXISTS (SELECT 1 FROM email_otp_enrollments e WHERE e.user_id = u.id) AS email_otp_enrolled
        FROM (SELECT 1) AS one
        LEFT JOIN r ON true
        LEFT JOIN u ON true
        LEFT JOIN LATERAL (
          SELECT * FROM password_credentials pc WHERE pc.user_id = u.id
          ORDER BY pc.updated_at DESC, pc.id LIMIT 1
        ) c ON true
        LEFT JOIN login_history h ON h.user_id = u.id`.execute(db);
      const row = rows[0];
      const realm = row.r_id === null
        ? null
        : realmFromRow(unprefixed<Selectable<Database["realms"]>>(row, "r_", REALM_COLUMNS));
      const user = row.u_id === null
        ? null
        : userFromRow(unprefixed<Selectable<Database["users"]>>(row, "u_", USER_COLUMNS));
      const credential = row.c_id === null ? null : passwordCredentialFromRow(
        unprefixed<Selectable<Database["password_credentials"]>>(row, "c_", CREDENTIAL_COLUMNS),
      );
      const lastAt = row.h_last_at as Date | null;
      return {
        realm,
        user,
        credential,
        credentialStamp: user === null ? null : String(row.u_credential_stamp),
        deviceKnown: user !== null && lookup.deviceHash !== null && row.device_known === true,
        history: lastAt === null ? null : {
          lastAt: lastAt.getTime(),
          lastIp: (row.h_last_ip as string | null) ?? null,
          recentMs: ((row.h_recent_ms as unknown[] | null) ?? []).map(Number),
        },
        totpConfirmed: row.totp_confirmed === true,
        emailOtpEnrolled: row.email_otp_enrolled === true,
      };
    },
  };
}
