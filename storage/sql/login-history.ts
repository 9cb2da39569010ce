/**
 * The risk gate's login history over the `login_history` table: one row per user with the latest
 * sign-in (time, client address) and the times of the latest 500 sign-ins, written by the same
 * statement that appends the `login.succeeded` event (`security-events.ts`), so a question costs
 * one primary-key read instead of paging through the ledger. It counts among the user's latest 500
 * sign-ins, where the ledger reader counted sign-ins among the latest 500 events of any kind: never
 * fewer.
 *
 * @module
 */
import { sql } from "kysely";
import type { LoginHistory } from "../../core/risk/providers.ts";
import { isUuid } from "../../core/ids.ts";
import type { Executor } from "../database.ts";

/** The ledger kind that is a sign-in. */
export const LOGIN_SUCCEEDED_KIND = "login.succeeded";
/** How many sign-in times a row keeps. */
export const LOGIN_HISTORY_KEEP = 500;

/**
 * The upsert of a sign-in into `login_history`, from the row a CTE named `ev` inserted into
 * `security_events` (the caller's statement).
 */
export const recordLoginFromEvent =
  sql`INSERT INTO login_history (user_id, realm_id, last_at, last_ip, recent_ms)
  SELECT user_id, realm_id, occurred_at, ip_address,
    ARRAY[(extract(epoch FROM occurred_at) * 1000)::bigint] FROM ev
  ON CONFLICT (user_id) DO UPDATE SET
    realm_id = CASE WHEN EXCLUDED.last_at >= login_history.last_at
      THEN EXCLUDED.realm_id ELSE login_history.realm_id END,
    last_ip = CASE WHEN EXCLUDED.last_at >= login_history.last_at
      THEN EXCLUDED.last_ip ELSE login_history.last_ip END,
    last_at = GREATEST(EXCLUDED.last_at, login_history.last_at),
    recent_ms = (SELECT (array_agg(t ORDER BY t DESC))[1:${sql.lit(LOGIN_HISTORY_KEEP)}]
      FROM unnest(EXCLUDED.recent_ms || login_history.recent_ms) AS t)`;

/** A {@link LoginHistory} over `login_history`: one indexed read per question. */
export function createSqlLoginHistory(db: Executor): LoginHistory {
  const row = async (userId: string) =>
    isUuid(userId)
      ? await db.selectFrom("login_history").select(["last_at", "last_ip", "recent_ms"])
        .where("user_id", "=", userId).executeTakeFirst()
      : undefined;
  return {
    async lastLogin(userId) {
      const found = await row(userId);
      return found ? { at: found.last_at.getTime(), ip: found.last_ip } : null;
    },
    async countSince(userId, since) {
      const found = await row(userId);
      return found ? found.recent_ms.filter((t) => Number(t) >= since).length : 0;
    },
  };
}
