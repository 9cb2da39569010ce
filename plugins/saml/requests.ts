/**
 * SAML sign-ins in flight: `GET /saml/{id}/start` stores the AuthnRequest's id with the
 * connection, the `returnTo` and an expiry from the clock under the SHA-256 of a random
 * `RelayState` (`saml_requests`); the RelayState also goes to a cookie of the browser. The ACS
 * consumes it once (one `DELETE … RETURNING`: of two concurrent posts with one RelayState, one
 * gets it), so the response's `InResponseTo` is bound to the request this browser started.
 *
 * @module
 */
import { type PluginContext, randomToken, sha256Hex } from "../../mod.ts";

/** A consumed request: what the ACS needs. */
export interface ConsumedRequest {
  readonly connectionId: string;
  readonly requestId: string;
  readonly returnTo: string;
  /** The signed-in user who asked to link the IdP's identity to their account, or null. */
  readonly linkUserId: string | null;
}

/** A new request. */
export interface StartedRequest {
  readonly relayState: string;
  readonly requestId: string;
}

const RELAY = /^[A-Za-z0-9_-]{43}$/;

/** Requests in flight. */
export class RequestStore {
  readonly #ctx: PluginContext<unknown>;
  readonly #ttlMs: number;

  constructor(ctx: PluginContext<unknown>, ttlMs: number) {
    this.#ctx = ctx;
    this.#ttlMs = ttlMs;
  }

  /** Starts a sign-in through `connectionId` that ends at `returnTo` (linking `linkUserId` when set). */
  async start(connectionId: string, returnTo: string, linkUserId: string | null): Promise<StartedRequest> {
    const relayState = randomToken(this.#ctx.random, 32);
    // An NCName: a letter or underscore first.
    const requestId = `_${randomToken(this.#ctx.random, 20).replaceAll("-", "a")}`;
    const now = this.#ctx.clock.now();
    await this.#ctx.sql.query(
      "INSERT INTO saml_requests (relay_hash, connection_id, request_id, return_to, link_user_id, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
      [sha256Hex(relayState), connectionId, requestId, returnTo, linkUserId, new Date(now + this.#ttlMs)],
    );
    // Expired requests of earlier sign-ins are removed on the way.
    await this.#ctx.sql.query("DELETE FROM saml_requests WHERE expires_at <= $1", [new Date(now)]);
    return { relayState, requestId };
  }

  /** Consumes a request once, if it is live; null otherwise (unknown, expired or already used). */
  async consume(relayState: string): Promise<ConsumedRequest | null> {
    if (!RELAY.test(relayState)) return null;
    const [row] = await this.#ctx.sql.query<
      { connection_id: string; request_id: string; return_to: string; link_user_id: string | null }
    >(
      "DELETE FROM saml_requests WHERE relay_hash = $1 AND expires_at > $2 RETURNING connection_id, request_id, return_to, link_user_id",
      [sha256Hex(relayState), new Date(this.#ctx.clock.now())],
    );
    if (row === undefined) return null;
    return {
      connectionId: row.connection_id,
      requestId: row.request_id,
      returnTo: row.return_to,
      linkUserId: row.link_user_id,
    };
  }
}
