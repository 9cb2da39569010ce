/**
 * The SQL counter store of the abuse gate: every svc instance sharing the database shares the
 * counters. Each hit is one `INSERT … ON CONFLICT DO UPDATE … RETURNING`, so concurrent hits
 * on one key never lose an update; windows are computed from the injected clock (passed in as
 * parameters, never `now()` in SQL). A reservation is the same upsert with a condition on the
 * update (`WHERE the window has ended OR count < limit`): Postgres applies it to the row locked
 * by the conflict, so concurrent reservations never grant more than the limit.
 *
 * @module
 */
import { sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import type { CounterReservation, CounterStore, CounterValue } from "../../core/abuse/counter-store.ts";
import { ValidationError } from "../../core/errors.ts";
import type { Executor } from "../database.ts";

/** A {@link CounterStore} over the `abuse_counters` table. */
export function createSqlCounterStore(db: Executor, deps: { clock: Clock }): CounterStore {
  const now = () => new Date(deps.clock.now());
  return {
    inStorage: true,

    async increment(key, windowMs): Promise<CounterValue> {
      const at = now();
      const row = await db.insertInto("abuse_counters").values({
        key,
        member: "",
        count: 1,
        window_started_at: at,
        expires_at: new Date(at.getTime() + windowMs),
      }).onConflict((oc) =>
        oc.columns(["key", "member"]).doUpdateSet(() => {
          // Every SET expression sees the row as it was before this update.
          const ended = sql`abuse_counters.expires_at <= excluded.window_started_at`;
          return {
            count: sql<number>`CASE WHEN ${ended} THEN 1 ELSE abuse_counters.count + 1 END`,
            window_started_at: sql<
              Date
            >`CASE WHEN ${ended} THEN excluded.window_started_at ELSE abuse_counters.window_started_at END`,
            expires_at: sql<
              Date
            >`CASE WHEN ${ended} THEN excluded.expires_at ELSE abuse_counters.expires_at END`,
          };
        })
      ).returning(["count", "expires_at"]).executeTakeFirstOrThrow();
      return { count: Number(row.count), resetAt: row.expires_at.getTime() };
    },

    async reserve(key, limit, windowMs): Promise<CounterReservation> {
      if (limit < 1) return { granted: false, count: 0, resetAt: null };
      const at = now();
      const row = await db.insertInto("abuse_counters").values({
        key,
        member: "",
        count: 1,
        window_started_at: at,
        expires_at: new Date(at.getTime() + windowMs),
      }).onConflict((oc) => {
        const ended = sql<boolean>`abuse_counters.expires_at <= excluded.window_started_at`;
        return oc.columns(["key", "member"]).doUpdateSet(() => ({
          count: sql<number>`CASE WHEN ${ended} THEN 1 ELSE abuse_counters.count + 1 END`,
          window_started_at: sql<
            Date
          >`CASE WHEN ${ended} THEN excluded.window_started_at ELSE abuse_counters.window_started_at END`,
          expires_at: sql<
            Date
          >`CASE WHEN ${ended} THEN excluded.expires_at ELSE abuse_counters.expires_at END`,
        })).where(sql<boolean>`${ended} OR abuse_counters.count < ${limit}`);
      }).returning(["count", "expires_at"]).executeTakeFirst();
      if (row) return { granted: true, count: Number(row.count), resetAt: row.expires_at.getTime() };
      // Refused: the full window, read for the answer only (the decision was the statement above).
      const full = await db.selectFrom("abuse_counters").select(["count", "expires_at"])
        .where("key", "=", key).where("member", "=", "").executeTakeFirst();
      return full
        ? { granted: false, count: Number(full.count), resetAt: full.expires_at.getTime() }
        : { granted: false, count: limit, resetAt: null };
    },

    async release(key, resetAt) {
      const result = await db.updateTable("abuse_counters")
        .set({ count: sql<number>`abuse_counters.count - 1` })
        .where("key", "=", key).where("member", "=", "")
        .where("expires_at", "=", new Date(resetAt)).where("expires_at", ">", now())
        .where("count", ">", 0)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async peek(key) {
      const row = await db.selectFrom("abuse_counters").select(["count", "expires_at"])
        .where("key", "=", key).where("member", "=", "").where("expires_at", ">", now())
        .executeTakeFirst();
      return row
        ? { count: Number(row.count), resetAt: row.expires_at.getTime() }
        : { count: 0, resetAt: null };
    },

    async reset(key) {
      await db.deleteFrom("abuse_counters").where("key", "=", key).execute();
    },

    async addDistinct(key, member, windowMs) {
      if (member === "") throw new ValidationError("A distinct-set member must not be empty.");
      const at = now();
      await db.insertInto("abuse_counters").values({
        key,
        member,
        count: 1,
        window_started_at: at,
        expires_at: new Date(at.getTime() + windowMs),
      }).onConflict((oc) =>
        oc.columns(["key", "member"]).doUpdateSet(() => ({
          count: sql<number>`abuse_counters.count + 1`,
          expires_at: sql<Date>`greatest(abuse_counters.expires_at, excluded.expires_at)`,
        }))
      ).execute();
      const row = await db.selectFrom("abuse_counters").select((eb) => eb.fn.countAll<number>().as("n"))
        .where("key", "=", key).where("member", "<>", "").where("expires_at", ">", at)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async reserveAll(reserves, distinct) {
      if (distinct.member === "") throw new ValidationError("A distinct-set member must not be empty.");
      const at = now();
      const live = reserves.map((r, i) => ({ ...r, i })).filter((r) => r.limit >= 1);
      // One statement: each reservation is the upsert of `reserve` in its own CTE (distinct keys,
      // so no row is touched twice), the distinct member the upsert of `addDistinct`. The outer
      // SELECT reads the statement's snapshot: a refused window as it stood, and the set's other
      // live members (this one, just written, is counted as the one more).
      const ended = sql`abuse_counters.expires_at <= excluded.window_started_at`;
      const ctes = live.map((r) =>
        sql`${sql.ref(`r${r.i}`)} AS (
          INSERT INTO abuse_counters (key, member, count, window_started_at, expires_at)
          VALUES (${r.key}, '', 1, ${at}, ${new Date(at.getTime() + r.windowMs)})
          ON CONFLICT (key, member) DO UPDATE SET
            count = CASE WHEN ${ended} THEN 1 ELSE abuse_counters.count + 1 END,
            window_started_at = CASE WHEN ${ended}
              THEN excluded.window_started_at ELSE abuse_counters.window_started_at END,
            expires_at = CASE WHEN ${ended} THEN excluded.expires_at ELSE abuse_counters.expires_at END
          WHERE ${ended} OR abuse_counters.count < ${r.limit}
          RETURNING count, expires_at)`
      );
      ctes.push(sql`d AS (
        INSERT INTO abuse_counters (key, member, count, window_started_at, expires_at)
        VALUES (${distinct.key}, ${distinct.member}, 1, ${at}, ${new Date(at.getTime() + distinct.windowMs)})
        ON CONFLICT (key, member) DO UPDATE SET
          count = abuse_counters.count + 1,
          expires_at = greatest(abuse_counters.expires_at, excluded.expires_at)
        RETURNING 1)`);
      const columns = live.flatMap((r) => {
        const cte = sql.ref(`r${r.i}`);
        const full = sql`FROM abuse_counters WHERE key = ${r.key} AND member = ''`;
        return [
          sql`(SELECT count FROM ${cte}) AS ${sql.ref(`c${r.i}`)}`,
          sql`(SELECT expires_at FROM ${cte}) AS ${sql.ref(`e${r.i}`)}`,
          sql`(SELECT count ${full}) AS ${sql.ref(`fc${r.i}`)}`,
          sql`(SELECT expires_at ${full}) AS ${sql.ref(`fe${r.i}`)}`,
        ];
      });
      columns.push(sql`(SELECT count(*) FROM abuse_counters WHERE key = ${distinct.key} AND member <> ''
        AND member <> ${distinct.member} AND expires_at > ${at}) + (SELECT count(*) FROM d) AS n`);
      const { rows } = await sql<Record<string, number | Date | null>>`WITH ${sql.join(ctes, sql`, `)}
        SELECT ${sql.join(columns, sql`, `)}`.execute(db);
      const row = rows[0];
      const reservations = reserves.map((r, i): CounterReservation => {
        if (r.limit < 1) return { granted: false, count: 0, resetAt: null };
        const count = row[`c${i}`];
        if (count !== null && count !== undefined) {
          return { granted: true, count: Number(count), resetAt: (row[`e${i}`] as Date).getTime() };
        }
        const full = row[`fc${i}`];
        return full !== null && full !== undefined
          ? { granted: false, count: Number(full), resetAt: (row[`fe${i}`] as Date).getTime() }
          : { granted: false, count: r.limit, resetAt: null };
      });
      return { reservations, distinct: Number(row.n) };
    },

    async purgeExpired() {
      const result = await db.deleteFrom("abuse_counters").where("expires_at", "<=", now())
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
