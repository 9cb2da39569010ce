/**
 * The SAML plugin's maintenance job: every connection is checked on a schedule (hourly, by the
 * injected clock) by whichever instance claims it first.
 *
 * - **Certificate expiry.** A signing certificate that enters the 30-day window raises
 *   `saml.certificate_expiring` once per certificate and connection: the announcement is recorded
 *   in `saml_certificate_notices` (primary key `(connection_id, sha256)`) in the transaction that
 *   emits the event, so that neither a later scan, nor another instance scanning at the same
 *   moment, nor an administrator storing the same certificate again announces it twice. The
 *   admin routes record their announcements there too.
 * - **Metadata refresh.** A connection made from a metadata URL is fetched again through the
 *   outbound guard every `metadataRefreshSeconds` (`SVC_SAML_METADATA_REFRESH_SECONDS`, default
 *   one day; after a failure, again after at most an hour). The certificate set becomes the
 *   metadata's (during a rollover the IdP lists the old and the new certificate: both are
 *   accepted at once; a certificate the metadata no longer lists stops being accepted). A
 *   change of certificates or SSO URL is a state change: one audit entry (`saml.connection.
 *   metadata_refresh`, actor `System` `saml:metadata-refresh`), none when the metadata is
 *   unchanged. A failed fetch, unreadable metadata or metadata naming another entity id keeps
 *   everything as it was. Each fetch's time and outcome is recorded (`saml_connection_checks`)
 *   and shown by the admin API (`metadataRefresh`) and the console.
 *
 * **Many instances on one Postgres.** A scan claims due connections in one statement
 * (`INSERT … ON CONFLICT DO UPDATE … WHERE` the row is due and its lease free): of instances
 * racing for one connection, one gets it, for a lease of five minutes. Should a lease run out
 * while its holder is still working (a stalled fetch), the next holder's writes stay correct:
 * the announcement's primary key lets one event through, and the refresh re-reads the connection
 * under the realm's audit lock and writes only what differs.
 *
 * @module
 */
import { type PluginSql, PollingLoop, type SvcEvent } from "../../mod.ts";
import type { ConnectionChanges, SamlConnection } from "./connections.ts";
import { fetchIdpMetadata, type MetadataFetch } from "./fetch.ts";
import { certificateInfo } from "./metadata.ts";
import { CERTIFICATE_WARNING_MS, type Saml, SAML_EVENTS } from "./shared.ts";

/** How often each connection is checked (certificate expiry), by the injected clock. */
export const CHECK_INTERVAL_MS = 3600_000;
/** The longest wait before a failed metadata fetch is tried again. */
export const REFRESH_RETRY_MS = 3600_000;
/** How long a claimed connection is invisible to other instances. */
export const CHECK_LEASE_MS = 300_000;
/** The service actor of the refresh's audit entries (`saml:metadata-refresh`). */
export const REFRESH_ACTOR = "metadata-refresh";

/** What the job is built with (defaults for a server). */
export interface MaintenanceOptions {
  /** Connections per batch (default 20). */
  readonly batchSize?: number;
  /** Pause between polls when nothing is due, in real milliseconds (default 60 000). */
  readonly pollIntervalMs?: number;
}

/** What one check of a connection did. */
export interface CheckOutcome {
  readonly connectionId: string;
  /** Certificates whose expiry this check announced (SHA-256 hex). */
  readonly announced: readonly string[];
  /** The metadata fetch's outcome, or null when none was due. */
  readonly refresh: "updated" | "unchanged" | "failed" | null;
}

/** A certificate to announce as expiring. */
interface Expiring {
  readonly sha256: string;
  readonly notAfter: Date;
}

/** The stored certificates of `connection` expiring within 30 days of `now` (expired ones included). */
export function expiringCertificates(connection: SamlConnection, now: number): Expiring[] {
  return connection.idpCertificates.map(certificateInfo)
    .filter((info) => info.notAfter.getTime() - now < CERTIFICATE_WARNING_MS)
    .map((info) => ({ sha256: info.sha256, notAfter: info.notAfter }));
}

/**
 * Records and emits `saml.certificate_expiring` for each certificate of `connection` in the
 * 30-day window not announced before (on `sql`, the transaction `emit` belongs to). Answers the
 * certificates announced now.
 */
export async function announceExpiring(
  sql: PluginSql,
  emit: (event: SvcEvent) => Promise<void>,
  connection: SamlConnection,
  now: number,
): Promise<string[]> {
  const announced: string[] = [];
  for (const cert of expiringCertificates(connection, now)) {
    const inserted = await sql.query(
      `INSERT INTO saml_certificate_notices (connection_id, sha256, not_after, announced_at)
       VALUES ($1, $2, $3, $4) ON CONFLICT (connection_id, sha256) DO NOTHING RETURNING sha256`,
      [connection.id, cert.sha256, cert.notAfter, new Date(now)],
    );
    if (inserted.length === 0) continue;
    announced.push(cert.sha256);
    await emit({
      kind: SAML_EVENTS.certificateExpiring,
      occurredAt: now,
      realmId: connection.realmId,
      orgId: connection.orgId,
      data: { connectionId: connection.id, sha256: cert.sha256, notAfter: cert.notAfter.toISOString() },
    });
  }
  return announced;
}

/**
 * Records a fetch of a connection's metadata URL (on `sql`): its time and outcome, and, when it
 * succeeded, the time of the last success.
 */
export async function recordRefresh(
  sql: PluginSql,
  connectionId: string,
  now: number,
  outcome: "updated" | "unchanged" | "failed",
  error: string | null,
): Promise<void> {
  await sql.query(
    `INSERT INTO saml_connection_checks (connection_id, next_check_at, refresh_attempted_at, refresh_succeeded_at,
       refresh_outcome, refresh_error)
     VALUES ($1, $2, $2, CASE WHEN $3 = 'failed' THEN NULL ELSE $2::timestamptz END, $3, $4)
     ON CONFLICT (connection_id) DO UPDATE SET refresh_attempted_at = EXCLUDED.refresh_attempted_at,
       refresh_succeeded_at = COALESCE(EXCLUDED.refresh_succeeded_at, saml_connection_checks.refresh_succeeded_at),
       refresh_outcome = EXCLUDED.refresh_outcome, refresh_error = EXCLUDED.refresh_error`,
    [connectionId, new Date(now), outcome, error],
  );
}

/** Whether the metadata of `connection` is due to be fetched again at `now`. */
export function refreshDue(connection: SamlConnection, now: number, intervalMs: number): boolean {
  if (connection.idpMetadataUrl === null) return false;
  const last = connection.metadataRefresh;
  if (last !== null && last.outcome === "failed") {
    return last.attemptedAt.getTime() + Math.min(intervalMs, REFRESH_RETRY_MS) <= now;
  }
  const times = [last?.succeededAt, connection.metadataFetchedAt, connection.createdAt]
    .filter((d): d is Date => d !== null && d !== undefined)
    .map((d) => d.getTime());
  return Math.max(...times) + intervalMs <= now;
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** The job: `runOnce()` checks a batch of due connections; `start()` polls in the background. */
export class SamlMaintenance {
  readonly #s: Saml;
  readonly #batchSize: number;
  readonly #loop: PollingLoop<CheckOutcome>;

  /** A stopped job over the plugin's services. */
  constructor(s: Saml, options: MaintenanceOptions = {}) {
    this.#s = s;
    this.#batchSize = options.batchSize ?? 20;
    this.#loop = new PollingLoop({
      batchSize: this.#batchSize,
      pollIntervalMs: options.pollIntervalMs ?? 60_000,
      runOnce: () => this.runOnce(),
      onError: (error) => s.ctx.logError(`saml: maintenance: ${(error as Error).message.split("\n")[0]}`),
    });
  }

  /** Polls in the background. */
  start(): void {
    this.#loop.start();
  }

  /** Stops polling; resolves once the batch in progress has finished. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Checks due connections until none is left (tests, commands). */
  drain(): Promise<CheckOutcome[]> {
    return this.#loop.drain();
  }

  /** Claims a batch of due connections (a connection never checked is due) and checks each. */
  async runOnce(): Promise<CheckOutcome[]> {
    const { ctx } = this.#s;
    const now = ctx.clock.now();
    const claimed = await ctx.sql.query<{ connection_id: string }>(
      `INSERT INTO saml_connection_checks (connection_id, next_check_at, lease_until)
       SELECT c.id, $1, $2 FROM saml_connections c
         LEFT JOIN saml_connection_checks k ON k.connection_id = c.id
       WHERE k.connection_id IS NULL OR (k.next_check_at <= $1 AND (k.lease_until IS NULL OR k.lease_until <= $1))
       ORDER BY k.next_check_at NULLS FIRST, c.id
       LIMIT ${this.#batchSize}
       ON CONFLICT (connection_id) DO UPDATE SET lease_until = EXCLUDED.lease_until
       WHERE saml_connection_checks.next_check_at <= $1
         AND (saml_connection_checks.lease_until IS NULL OR saml_connection_checks.lease_until <= $1)
       RETURNING connection_id`,
      [new Date(now), new Date(now + CHECK_LEASE_MS)],
    );
    const outcomes: CheckOutcome[] = [];
    for (const { connection_id: id } of claimed) {
      try {
        outcomes.push(await this.#check(id, now));
      } catch (error) {
        ctx.logError(`saml: maintenance of a connection failed: ${(error as Error).message.split("\n")[0]}`);
      } finally {
        await ctx.sql.query(
          "UPDATE saml_connection_checks SET next_check_at = $2, lease_until = NULL WHERE connection_id = $1",
          [id, new Date(now + CHECK_INTERVAL_MS)],
        );
      }
    }
    return outcomes;
  }

  async #check(id: string, now: number): Promise<CheckOutcome> {
    const s = this.#s;
    const connection = await s.connections.get(id);
    if (connection === null) return { connectionId: id, announced: [], refresh: null };
    const intervalMs = s.ctx.config.metadataRefreshSeconds * 1000;
    const fetched: MetadataFetch | null = refreshDue(connection, now, intervalMs)
      ? await fetchIdpMetadata(s.ctx, connection.idpMetadataUrl!)
      : null;
    const unannounced = expiringCertificates(connection, now)
      .some((cert) => connection.expiryAnnounced[cert.sha256] === undefined);
    if (fetched === null && !unannounced) return { connectionId: id, announced: [], refresh: null };
    return await s.ctx.admin.mutateAsService(connection.realmId, REFRESH_ACTOR, async ({ tx, emit }) => {
      const connections = s.connections.in(tx);
      // Read again under the realm's audit lock: an administrator's change may have come first.
      const before = await connections.get(id);
      if (before === null) return { value: { connectionId: id, announced: [], refresh: null }, audit: null };
      let current = before;
      let refresh: CheckOutcome["refresh"] = null;
      let audit = null;
      if (fetched !== null && before.idpMetadataUrl === connection.idpMetadataUrl) {
        let error: string | null = null;
        if (!fetched.ok) error = `${fetched.code}: ${fetched.reason}`;
        else if (fetched.metadata.entityId !== before.idpEntityId) {
          error = "saml_metadata_invalid: the metadata names another entity id";
        }
        if (error !== null || !fetched.ok) {
          refresh = "failed";
          await recordRefresh(tx.pluginSql, id, now, "failed", error);
        } else {
          const changes: ConnectionChanges = {
            idpSsoUrl: fetched.metadata.ssoUrl,
            idpCertificates: fetched.metadata.certificates,
          };
          const unchanged = before.idpSsoUrl === fetched.metadata.ssoUrl &&
            sameList(before.idpCertificates, fetched.metadata.certificates);
          refresh = unchanged ? "unchanged" : "updated";
          if (!unchanged) {
            const fresh = await connections.update(id, { ...changes, metadataFetchedAt: new Date(now) });
            if (fresh !== null) current = fresh;
            audit = {
              action: "saml.connection.metadata_refresh",
              target: id,
              orgId: before.orgId,
              before: auditView(before),
              after: auditView(current),
            };
          }
          await recordRefresh(tx.pluginSql, id, now, refresh, null);
        }
      }
      const announced = await announceExpiring(tx.pluginSql, emit, current, now);
      return { value: { connectionId: id, announced, refresh }, audit };
    });
  }
}

/** What the refresh's audit entry shows of a connection (no secret: certificates are public). */
function auditView(c: SamlConnection) {
  return {
    idpEntityId: c.idpEntityId,
    idpSsoUrl: c.idpSsoUrl,
    idpMetadataUrl: c.idpMetadataUrl,
    certificates: c.idpCertificates.map((der) => {
      const info = certificateInfo(der);
      return { sha256: info.sha256, subject: info.subject, notAfter: info.notAfter.toISOString() };
    }),
  };
}
