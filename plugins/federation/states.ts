/**
 * The state of a sign-in in flight at an upstream: a random `state` whose SHA-256 is stored
 * server-side (`federation_states`) with the provider, the `returnTo` and an expiry from the
 * clock, and consumed once (one `DELETE … RETURNING`: of two concurrent callbacks with one state,
 * one gets it). The PKCE verifier and the nonce are not stored: they are derived from the state
 * with HMAC-SHA-256 under a server secret, so only the browser holding the state and svc can
 * know them.
 *
 * @module
 */
import { type PluginContext, randomToken, sha256Hex } from "../../mod.ts";

/** A consumed state: what the callback needs. */
export interface ConsumedState {
  readonly providerId: string;
  readonly returnTo: string;
  /** The signed-in user who asked to link this upstream identity to their account, or null. */
  readonly linkUserId: string | null;
  readonly codeVerifier: string;
  readonly nonce: string;
}

/** A new state and what the authorization request carries. */
export interface StartedState {
  readonly state: string;
  readonly nonce: string;
  readonly codeChallenge: string;
}

const SECRET_NAME = "federation-state-key";

function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** States of sign-ins in flight. */
export class StateStore {
  readonly #ctx: PluginContext<unknown>;
  readonly #ttlMs: number;
  #key: Promise<CryptoKey> | null = null;

  constructor(ctx: PluginContext<unknown>, ttlMs: number) {
    this.#ctx = ctx;
    this.#ttlMs = ttlMs;
  }

  #hmacKey(): Promise<CryptoKey> {
    return this.#key ??= this.#ctx.storage.serverSecrets.getOrCreate(
      SECRET_NAME,
      () => this.#ctx.random.bytes(32),
    )
      .then((raw) =>
        crypto.subtle.importKey(
          "raw",
          raw as Uint8Array<ArrayBuffer>,
          { name: "HMAC", hash: "SHA-256" },
          false,
          [
            "sign",
          ],
        )
      );
  }

  async #derive(label: string, state: string): Promise<string> {
    const mac = await crypto.subtle.sign(
      "HMAC",
      await this.#hmacKey(),
      new TextEncoder().encode(`${label}\n${state}`),
    );
    return base64Url(new Uint8Array(mac));
  }

  /** Starts a sign-in at `providerId` that ends at `returnTo` (linking to `linkUserId` when set). */
  async start(providerId: string, returnTo: string, linkUserId: string | null): Promise<StartedState> {
    const state = randomToken(this.#ctx.random, 32);
    const now = this.#ctx.clock.now();
    await this.#ctx.sql.query(
      "INSERT INTO federation_states (state_hash, provider_id, return_to, link_user_id, expires_at) VALUES ($1, $2, $3, $4, $5)",
      [sha256Hex(state), providerId, returnTo, linkUserId, new Date(now + this.#ttlMs)],
    );
    // Expired states of earlier sign-ins are removed on the way.
    await this.#ctx.sql.query("DELETE FROM federation_states WHERE expires_at <= $1", [new Date(now)]);
    const verifier = await this.#derive("pkce", state);
    const challenge = base64Url(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
    );
    return { state, nonce: await this.#derive("nonce", state), codeChallenge: challenge };
  }

  /** Consumes a state once, if it is live; null otherwise (unknown, expired or already used). */
  async consume(state: string): Promise<ConsumedState | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(state)) return null;
    const [row] = await this.#ctx.sql.query<
      { provider_id: string; return_to: string; link_user_id: string | null }
    >(
      "DELETE FROM federation_states WHERE state_hash = $1 AND expires_at > $2 RETURNING provider_id, return_to, link_user_id",
      [sha256Hex(state), new Date(this.#ctx.clock.now())],
    );
    if (row === undefined) return null;
    return {
      providerId: row.provider_id,
      returnTo: row.return_to,
      linkUserId: row.link_user_id,
      codeVerifier: await this.#derive("pkce", state),
      nonce: await this.#derive("nonce", state),
    };
  }
}
