/**
 * OpenID Connect Back-Channel Logout 1.0: when a session ends, by whichever way (user logout,
 * RP-initiated logout, a client's revocation, an administrator's revocation, logout-all, refresh
 * token reuse, a replayed code, password reset, suspension, erasure, break-glass rotation), each
 * client that had tokens in that session and registered a `backchannelLogoutUri` is sent a signed
 * logout token.
 *
 * - **The one place sessions end.** Every end is announced after its commit through svc's
 *   session end announcer (the same one that stops the session's access tokens on every
 *   instance); the provider listens to it (`sessions.onSessionsEnded`). An ended id is matched
 *   against the provider's grants both as a client session (the session the token endpoint
 *   opened for the client) and as a browser session (the svc session the user signed in with,
 *   whose id is the `sid` of the ID tokens): ending a browser session notifies every client that
 *   got tokens from it; ending one client session notifies that client.
 * - **Durable outbox.** The listener inserts one delivery per (client, `sid`) into
 *   `oidc_provider_logout_deliveries` (unique: a client hears of a browser session's end once,
 *   however many of its sessions ended) and wakes the worker. Workers on any number of instances
 *   claim due deliveries with `FOR UPDATE SKIP LOCKED` and a lease, sign the token at send time,
 *   POST it (`application/x-www-form-urlencoded`, `logout_token=`) through svc's outbound guard,
 *   and record the outcome: a failure (no 2xx, refused, timed out) is retried after 1m, 5m, 30m,
 *   2h and 12h as webhooks are, then dead-lettered (`oidc.backchannel_logout_failed`).
 *   Delivery is at least once; the `jti` of a delivery stays the same across its attempts.
 * - **The token** (`typ: logout+jwt`, the realm's signing key): `iss`, `aud` (the client id),
 *   `iat`, `exp` (2 minutes), `jti`, `events` with the back-channel logout event, `sub` and `sid`
 *   (always both: every ID token carries `sid`, so `backchannelLogoutSessionRequired` is always
 *   met), and never `nonce`.
 *
 * - **Catch-up sweep.** The announcement comes after the commit, not in the ending transaction:
 *   a process that dies between the two, or a session ended while no instance with the provider
 *   runs (`svc break-glass` offline), would go unheard. So each delivering worker also walks the
 *   sessions table's ends (`revoked_at`, written in the ending transaction) since a watermark
 *   kept per realm in `oidc_provider_logout_sweeps`, every `sweepIntervalMs` (a minute), from
 *   {@link SWEEP_OVERLAP_MS} before the watermark (a transaction may commit after a later one),
 *   and queues what the listener did not. The outbox's uniqueness makes a second queueing, by the
 *   sweep, the listener or another instance, a no-op. The first sweep of a realm sets the
 *   watermark and looks back no further than {@link SWEEP_OVERLAP_MS}. Sessions that merely
 *   expire are not ends (no token stops early), as for the listener.
 *
 * @module
 */
import { PollingLoop, type RandomSource, randomUuid } from "../../mod.ts";
import { type Provider, signJwt } from "./shared.ts";

/** The event member of a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";
/** Lifetime of a logout token (seconds): it is signed again at every attempt. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;
/** Delays before the 1st, 2nd… retry (as webhooks); past the last, the delivery is dead. */
export const LOGOUT_RETRY_DELAYS_MS: readonly number[] = [
  60_000,
  300_000,
  1_800_000,
  7_200_000,
  43_200_000,
];

/** How far before its watermark a sweep looks again: ends that committed after a later one. */
export const SWEEP_OVERLAP_MS = 5 * 60_000;
/** Ended sessions read per page of a sweep. */
const SWEEP_PAGE = 500;

/** Kinds of the events of back-channel logout. */
export const BACKCHANNEL_EVENTS = {
  delivered: "oidc.backchannel_logout_delivered",
  failed: "oidc.backchannel_logout_failed",
} as const;

/** The outbox table. */
export const BACKCHANNEL_TABLES = [
  `CREATE TABLE IF NOT EXISTS oidc_provider_logout_deliveries (
    id uuid PRIMARY KEY,
    realm_id uuid NOT NULL,
    client_id text NOT NULL,
    user_id uuid NOT NULL,
    sid uuid NOT NULL,
    jti text NOT NULL,
    status text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    lease_until timestamptz,
    last_status integer,
    last_error text,
    created_at timestamptz NOT NULL,
    finished_at timestamptz,
    UNIQUE (realm_id, client_id, sid)
  )`,
  `CREATE INDEX IF NOT EXISTS oidc_provider_logout_deliveries_due
    ON oidc_provider_logout_deliveries (next_attempt_at) WHERE status = 'pending'`,
  // The catch-up sweep's watermark: ends up to here were looked at (see the module's doc).
  `CREATE TABLE IF NOT EXISTS oidc_provider_logout_sweeps (
    realm_id uuid PRIMARY KEY REFERENCES realms(id) ON DELETE CASCADE,
    swept_until timestamptz NOT NULL
  )`,
];

/** What the worker is built with (defaults for a server). */
export interface BackchannelOptions {
  /** Retry schedule (default {@link LOGOUT_RETRY_DELAYS_MS}). */
  readonly retryDelaysMs?: readonly number[];
  /** Time limit of one POST (default 5000 ms). */
  readonly timeoutMs?: number;
  /** How long a claimed delivery is invisible to other workers (default 60 s). */
  readonly leaseMs?: number;
  /** Deliveries per batch (default 20). */
  readonly batchSize?: number;
  /** Pause between polls when idle, in real milliseconds (default 1000). */
  readonly pollIntervalMs?: number;
  /** Clock milliseconds between two catch-up sweeps of a worker (default 60 000). */
  readonly sweepIntervalMs?: number;
}

/** The outcome of one attempt. */
export interface LogoutAttempt {
  readonly deliveryId: string;
  readonly clientId: string;
  readonly sid: string;
  /** `delivered`, `pending` (a retry is scheduled) or `dead`. */
  readonly status: "delivered" | "pending" | "dead";
  /** The receiver's status, or null without an answer. */
  readonly statusCode: number | null;
}

interface DeliveryRow {
  id: string;
  client_id: string;
  user_id: string;
  sid: string;
  jti: string;
  attempts: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids matched per query (a logout-all of a user with many sessions is split). */
const IDS_PER_QUERY = 500;

/** The back-channel logout outbox and its worker, for one provider. */
export class BackchannelLogout {
  readonly #p: Provider;
  readonly #delays: readonly number[];
  readonly #timeoutMs: number;
  readonly #leaseMs: number;
  readonly #batchSize: number;
  readonly #loop: PollingLoop<LogoutAttempt>;
  readonly #sweepIntervalMs: number;
  /** When this worker sweeps next (clock milliseconds; 0: at its first run). */
  #nextSweepAt = 0;
  #unlisten: (() => void) | null = null;

  /** The outbox over the provider's tables; `start` listens to session ends and polls. */
  constructor(p: Provider, options: BackchannelOptions = {}) {
    this.#p = p;
    this.#delays = options.retryDelaysMs ?? LOGOUT_RETRY_DELAYS_MS;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#leaseMs = Math.max(options.leaseMs ?? 60_000, 2 * this.#timeoutMs);
    this.#batchSize = options.batchSize ?? 20;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.#loop = new PollingLoop({
      batchSize: this.#batchSize,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      runOnce: () => this.runOnce(),
      onError: (error) =>
        p.ctx.logError(`oidc-provider: back-channel logout: ${(error as Error).message.split("\n")[0]}`),
    });
  }

  /** Listens to session ends; with `poll`, also delivers in the background. */
  start(poll: boolean): void {
    this.#unlisten ??= this.#p.ctx.sessions.onSessionsEnded(async (ended) => {
      try {
        const queued = await this.enqueue(ended.map((end) => end.id));
        if (queued > 0) this.#loop.wake();
      } catch (error) {
        this.#p.ctx.logError(
          `oidc-provider: back-channel logout enqueue: ${(error as Error).message.split("\n")[0]}`,
        );
      }
    });
    if (poll) this.#loop.start();
  }

  /** Stops listening and polling. */
  async stop(): Promise<void> {
    this.#unlisten?.();
    this.#unlisten = null;
    await this.#loop.stop();
  }

  /** Runs due deliveries until none is left (tests, commands). */
  drain(): Promise<LogoutAttempt[]> {
    return this.#loop.drain();
  }

  /**
   * Queues a logout token for each client with a back-channel URI that had tokens in one of these
   * sessions (as client sessions or browser sessions); returns the deliveries added.
   */
  async enqueue(sessionIds: readonly string[]): Promise<number> {
    const p = this.#p;
    const ids = [...new Set(sessionIds.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
    const pairs = new Map<string, { clientId: string; userId: string; sid: string }>();
    for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
      const rows = await p.ctx.sql.query<{ client_id: string; user_id: string; browser_session_id: string }>(
        `SELECT DISTINCT client_id, user_id, browser_session_id FROM oidc_provider_grants
         WHERE realm_id = $1 AND (session_id = ANY($2::uuid[]) OR browser_session_id = ANY($2::uuid[]))`,
        [p.realmId, ids.slice(i, i + IDS_PER_QUERY)],
      );
      for (const row of rows) {
        pairs.set(`${row.client_id}\n${row.browser_session_id}`, {
          clientId: row.client_id,
          userId: row.user_id,
          sid: row.browser_session_id,
        });
      }
    }
    const uris = new Map<string, boolean>();
    let added = 0;
    const now = new Date(p.ctx.clock.now());
    for (const { clientId, userId, sid } of pairs.values()) {
      if (!uris.has(clientId)) {
        const client = await p.ctx.storage.clients.getByClientId(p.realmId, clientId);
        uris.set(clientId, client !== null && client.backchannelLogoutUri !== null);
      }
      if (!uris.get(clientId)) continue;
      const inserted = await p.ctx.sql.query(
        `INSERT INTO oidc_provider_logout_deliveries
           (id, realm_id, client_id, user_id, sid, jti, status, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7)
         ON CONFLICT (realm_id, client_id, sid) DO NOTHING RETURNING id`,
        [randomUuid(p.ctx.random), p.realmId, clientId, userId, sid, jtiOf(p.ctx.random), now],
      );
      added += inserted.length;
    }
    return added;
  }

  /**
   * Queues the deliveries of sessions that ended since the realm's watermark (less
   * {@link SWEEP_OVERLAP_MS}) and moves the watermark to now; returns the deliveries added. The
   * first sweep of a realm only sets its watermark (and looks back the overlap).
   */
  async sweep(): Promise<number> {
    const p = this.#p;
    const now = p.ctx.clock.now();
    // The watermark, created at now by the realm's first sweep (no write when it exists).
    const marks = await p.ctx.sql.query<{ swept_until: string | Date }>(
      `WITH created AS (
         INSERT INTO oidc_provider_logout_sweeps (realm_id, swept_until) VALUES ($1, $2)
         ON CONFLICT (realm_id) DO NOTHING RETURNING swept_until)
       SELECT swept_until FROM created
       UNION ALL SELECT swept_until FROM oidc_provider_logout_sweeps WHERE realm_id = $1`,
      [p.realmId, new Date(now)],
    );
    // No row: another instance created it in this instant (its snapshot is not ours).
    const watermark = Math.min(marks.length > 0 ? new Date(marks[0].swept_until).getTime() : now, now);
    const until = new Date(now);
    let after: { endedAt: number; id?: string } = { endedAt: watermark - SWEEP_OVERLAP_MS };
    let added = 0;
    for (;;) {
      const page = await p.ctx.storage.sessions.listEndedInOrder(after, until, SWEEP_PAGE);
      if (page.length > 0) added += await this.enqueue(page.map((ended) => ended.id));
      if (page.length < SWEEP_PAGE) break;
      after = page.at(-1)!;
    }
    await p.ctx.sql.query(
      `UPDATE oidc_provider_logout_sweeps SET swept_until = greatest(swept_until, $2) WHERE realm_id = $1`,
      [p.realmId, until],
    );
    return added;
  }

  /** Claims a batch of due deliveries and attempts each (after a catch-up sweep when one is due). */
  async runOnce(): Promise<LogoutAttempt[]> {
    const p = this.#p;
    if (p.ctx.clock.now() >= this.#nextSweepAt) {
      this.#nextSweepAt = p.ctx.clock.now() + this.#sweepIntervalMs;
      await this.sweep();
    }
    const now = p.ctx.clock.now();
    const claimed = await p.ctx.sql.query<DeliveryRow>(
      `UPDATE oidc_provider_logout_deliveries SET lease_until = $3, attempts = attempts + 1
       WHERE id IN (
         SELECT id FROM oidc_provider_logout_deliveries
         WHERE realm_id = $1 AND status = 'pending' AND next_attempt_at <= $2
           AND (lease_until IS NULL OR lease_until <= $2)
         ORDER BY next_attempt_at LIMIT ${this.#batchSize} FOR UPDATE SKIP LOCKED)
       RETURNING id, client_id, user_id, sid, jti, attempts`,
      [p.realmId, new Date(now), new Date(now + this.#leaseMs)],
    );
    return await Promise.all(claimed.map((row) => this.#attempt(row)));
  }

  async #attempt(row: DeliveryRow): Promise<LogoutAttempt> {
    const p = this.#p;
    const client = await p.ctx.storage.clients.getByClientId(p.realmId, row.client_id);
    let statusCode: number | null = null;
    let error: string | null = null;
    if (client === null || client.backchannelLogoutUri === null) {
      error = "the client has no back-channel logout URI any more";
    } else {
      try {
        const iat = Math.floor(p.ctx.clock.now() / 1000);
        const token = await signJwt(p, "logout+jwt", {
          iss: p.issuer,
          aud: row.client_id,
          iat,
          exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
          jti: row.jti,
          sub: row.user_id,
          sid: row.sid,
          events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
        });
        const response = await p.ctx.outbound(client.backchannelLogoutUri, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "Cache-Control": "no-store" },
          body: new URLSearchParams({ logout_token: token }).toString(),
          timeoutMs: this.#timeoutMs,
        });
        statusCode = response.status;
        await response.body?.cancel();
        if (!response.ok) error = `HTTP ${response.status}`;
      } catch (caught) {
        error = ((caught as { code?: string }).code ?? (caught as Error).message ?? "error").slice(0, 200);
      }
    }
    const now = p.ctx.clock.now();
    let status: LogoutAttempt["status"];
    if (error === null) status = "delivered";
    else if (client === null || client.backchannelLogoutUri === null) status = "dead";
    else status = row.attempts > this.#delays.length ? "dead" : "pending";
    const retryAt = status === "pending" ? new Date(now + this.#delays[row.attempts - 1]) : null;
    await p.ctx.sql.query(
      `UPDATE oidc_provider_logout_deliveries
       SET status = $2, last_status = $3, last_error = $4, lease_until = NULL,
           next_attempt_at = COALESCE($5, next_attempt_at), finished_at = $6
       WHERE id = $1`,
      [row.id, status, statusCode, error, retryAt, status === "pending" ? null : new Date(now)],
    );
    if (status !== "pending") {
      p.ctx.events.emit({
        kind: status === "delivered" ? BACKCHANNEL_EVENTS.delivered : BACKCHANNEL_EVENTS.failed,
        occurredAt: now,
        realmId: p.realmId,
        userId: row.user_id,
        data: {
          clientId: row.client_id,
          sid: row.sid,
          attempts: row.attempts,
          statusCode,
          ...(error !== null ? { error } : {}),
        },
      });
    }
    return { deliveryId: row.id, clientId: row.client_id, sid: row.sid, status, statusCode };
  }
}

function jtiOf(random: RandomSource): string {
  return randomUuid(random);
}
