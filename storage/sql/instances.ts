/**
 * The live instances on one database (table `svc_instances`, issue 27): each running svc records
 * its issuer (the base URL its tokens carry as `iss`) and beats; a starting instance reads the
 * others that beat recently. Two instances with different issuers on one database each refuse
 * the other's tokens, so a start warns about it.
 *
 * @module
 */
import type { RawSqlStore } from "../../core/storage/raw-sql.ts";

/** Another live instance. */
export interface LiveInstance {
  readonly id: string;
  readonly issuer: string;
  readonly hostname: string;
  readonly pid: number;
  readonly heartbeatAt: Date;
}

/** The instance registry. */
export interface InstanceStore {
  /** Records (or refreshes) this instance; drops rows that have not beaten since `staleBefore`. */
  register(
    instance: { id: string; issuer: string; hostname: string; pid: number },
    now: Date,
    staleBefore: Date,
  ): Promise<void>;
  /** Refreshes this instance's heartbeat (re-registers when its row was dropped). */
  beat(id: string, now: Date): Promise<boolean>;
  /** The other instances that beat at or after `since`. */
  others(id: string, since: Date): Promise<LiveInstance[]>;
  /** Removes this instance's row (at shutdown). */
  remove(id: string): Promise<void>;
}

/** The {@link InstanceStore} over raw SQL. */
export function createSqlInstanceStore(sql: RawSqlStore): InstanceStore {
  return {
    async register(instance, now, staleBefore) {
      await sql.query("DELETE FROM svc_instances WHERE heartbeat_at < $1", [staleBefore.toISOString()]);
      await sql.query(
        `INSERT INTO svc_instances (id, issuer, hostname, pid, started_at, heartbeat_at)
         VALUES ($1, $2, $3, $4, $5, $5)
         ON CONFLICT (id) DO UPDATE SET issuer = EXCLUDED.issuer, heartbeat_at = EXCLUDED.heartbeat_at`,
        [instance.id, instance.issuer, instance.hostname, instance.pid, now.toISOString()],
      );
    },
    async beat(id, now) {
      const rows = await sql.query("UPDATE svc_instances SET heartbeat_at = $2 WHERE id = $1 RETURNING id", [
        id,
        now.toISOString(),
      ]);
      return rows.length > 0;
    },
    async others(id, since) {
      const rows = await sql.query<
        { id: string; issuer: string; hostname: string; pid: number; heartbeat_at: Date | string }
      >(
        "SELECT id, issuer, hostname, pid, heartbeat_at FROM svc_instances WHERE id <> $1 AND heartbeat_at >= $2 ORDER BY heartbeat_at DESC",
        [id, since.toISOString()],
      );
      return rows.map((r) => ({
        id: r.id,
        issuer: r.issuer,
        hostname: r.hostname,
        pid: Number(r.pid),
        heartbeatAt: new Date(r.heartbeat_at),
      }));
    },
    async remove(id) {
      await sql.query("DELETE FROM svc_instances WHERE id = $1", [id]);
    },
  };
}
