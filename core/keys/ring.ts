/**
 * The signing key ring of one svc instance: per realm, the primary key that signs and the
 * published keys that verify (primary, staged, and retired keys inside the overlap window),
 * loaded from the signing-key store and cached.
 *
 * - Signing uses the cached primary; the realm's key set is reloaded after `cacheTtlMs`, so a
 *   rotation made by another instance is picked up within that time (tokens its old primary
 *   signed meanwhile stay valid through the overlap window).
 * - Verification of an unknown `kid` reloads the realm's key set, at most once per
 *   `refreshIntervalMs` per realm, so a flood of forged kids cannot hammer the store.
 * - A retired key is accepted only while `retiredAt + overlap` is in the future, checked at
 *   use time, not only when the set was loaded.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { ConflictError, SvcError } from "../errors.ts";
import type { RandomSource } from "../random.ts";
import type { SigningKeyStore } from "../storage/signing-keys.ts";
import { generateSigningKey, RS256_PARAMS, SIGNING_ALGORITHM } from "./generate.ts";
import { type JwsSigner, signCompactJwt } from "./jws.ts";
import { type LoadedSigningKey, loadSigningKey, type PublicSigningJwk } from "./load.ts";

/** What a key ring is built from. */
export interface KeyRingOptions {
  /** Where the realms' signing keys are stored. */
  store: SigningKeyStore;
  /** Decides when cached key sets expire and when retired keys leave the overlap window. */
  clock: Clock;
  /** Draws the `kid` of each key the ring generates (a realm's first primary, rotations). */
  random: RandomSource;
  /** How long a retired key stays published and accepted, in milliseconds. */
  overlapMs: number;
  /** How long a loaded key set is used before it is reloaded (default 60 s). */
  cacheTtlMs?: number;
  /** Least time between two reloads caused by an unknown kid, per realm (default 10 s). */
  refreshIntervalMs?: number;
  /** Realms whose key sets are kept at most (default 10 000; the oldest is dropped). */
  maxRealms?: number;
  /**
   * Computes RS256 signatures faster than WebCrypto where the runtime has a way (the CLI's Deno
   * adapter: OpenSSL's libcrypto); absent, or when it declines a key, jose signs. Same tokens.
   */
  signer?: JwsSigner;
}

/** A JSON Web Key Set as published. */
export interface JwksDocument {
  /** The public JWKs of the realm's verifying keys, primary first. */
  keys: PublicSigningJwk[];
}

interface RealmKeys {
  loadedAt: number;
  primary: LoadedSigningKey | null;
  keys: Map<string, LoadedSigningKey>;
  jwks: JwksDocument;
}

/** The key ring is not usable (no primary, or the primary cannot sign). Code `key_ring_unavailable`. */
export class KeyRingError extends SvcError {
  /** A message saying why the ring cannot sign; the status is 503. */
  constructor(message: string) {
    super("key_ring_unavailable", message, 503);
  }
}

/**
 * Per-realm signing keys.
 *
 * @example
 * ```ts
 * import {
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   KeyRing,
 *   openDatabase,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 *
 * const ring = new KeyRing({ store: storage.signingKeys, clock, random, overlapMs: 86_400_000 });
 * await ring.ensurePrimary(realm.id);
 * const key = await ring.signingKey(realm.id); // { kid, privateKey, … }
 * const { retiredKid } = await ring.rotate(realm.id); // a new primary; the old key verifies for one more day
 * await ring.verificationKey(realm.id, retiredKid!); // → key (still inside the overlap window)
 * await database.close();
 * ```
 */
export class KeyRing {
  readonly #options: Required<Omit<KeyRingOptions, "signer">>;
  readonly #signer: JwsSigner | undefined;
  readonly #realms = new Map<string, RealmKeys>();
  readonly #loading = new Map<string, Promise<RealmKeys>>();
  /** Imported keys by realm and kid: importing is costly, and a stored key never changes. */
  readonly #imported = new Map<string, LoadedSigningKey>();

  /** A ring over `options.store`; the optional bounds default to 60 s, 10 s and 10 000 realms. */
  constructor(options: KeyRingOptions) {
    const { signer, ...rest } = options;
    this.#options = { cacheTtlMs: 60_000, refreshIntervalMs: 10_000, maxRealms: 10_000, ...rest };
    this.#signer = signer;
  }

  /**
   * Signs `claims` as a JWT of type `typ` with `key` (header `{ alg, typ, kid }`): with the
   * ring's signer where it handles the key, else with jose. The same compact JWT either way.
   */
  async signJwt(key: LoadedSigningKey, typ: string, claims: Record<string, unknown>): Promise<string> {
    return await signCompactJwt(
      { alg: SIGNING_ALGORITHM, typ, kid: key.kid },
      claims,
      key.privateKey,
      this.#signer,
    );
  }

  /** How long a retired key stays accepted, in milliseconds. */
  get overlapMs(): number {
    return this.#options.overlapMs;
  }

  /**
   * The realm's primary key, generating and storing one when the realm has none. Safe
   * under concurrency: when another instance stores one first, that one is used.
   */
  async ensurePrimary(realmId: string): Promise<LoadedSigningKey> {
    const existing = await this.#options.store.getPrimary(realmId);
    if (existing !== null) return await this.#import(existing);
    const generated = await generateSigningKey(this.#options.random);
    try {
      const stored = await this.#options.store.insert(realmId, { ...generated, isPrimary: true });
      this.invalidate(realmId);
      return await this.#import(stored);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      const winner = await this.#options.store.getPrimary(realmId);
      if (winner === null) throw err;
      this.invalidate(realmId);
      return await this.#import(winner);
    }
  }

  /**
   * Makes a new primary and retires the old one (it stays published and accepted for the
   * overlap window). Returns the new primary's kid and the retired kid. `store` is the ring's
   * own by default; pass a store bound to a transaction to rotate inside it (then call
   * {@link invalidate} again after the commit).
   */
  async rotate(
    realmId: string,
    store: SigningKeyStore = this.#options.store,
  ): Promise<{ primaryKid: string; retiredKid: string | null }> {
    const generated = await generateSigningKey(this.#options.random);
    const rotation = await store.rotate(realmId, generated);
    this.invalidate(realmId);
    return { primaryKid: rotation.primary.kid, retiredKid: rotation.retired?.kid ?? null };
  }

  /** The key that signs new tokens of the realm (created when the realm has none). */
  async signingKey(realmId: string): Promise<LoadedSigningKey> {
    const realm = await this.#realm(realmId);
    if (realm.primary !== null) return realm.primary;
    const primary = await this.ensurePrimary(realmId);
    return primary;
  }

  /**
   * The key that verifies a token of the realm signed with `kid`, or null when the realm
   * publishes no such key (or it left its overlap window).
   */
  async verificationKey(realmId: string, kid: string): Promise<LoadedSigningKey | null> {
    let realm = await this.#realm(realmId);
    let key = realm.keys.get(kid);
    if (key === undefined) {
      // Reload only a set older than the refresh interval: a flood of unknown kids costs at
      // most one store read per realm per interval.
      const now = this.#options.clock.now();
      if (now - realm.loadedAt < this.#options.refreshIntervalMs) return null;
      realm = await this.#reload(realmId, now);
      key = realm.keys.get(kid);
      if (key === undefined) return null;
    }
    return this.#accepted(key) ? key : null;
  }

  /**
   * Synchronously, from the cached key set only: true when the key is published and
   * accepted now, false when it is known but no longer accepted (or the realm's cached set
   * lacks it), undefined when the realm's set is not cached. The verified-token cache asks
   * this on every hit, so a key's retirement reaches tokens verified before it.
   */
  isAccepted(realmId: string, kid: string): boolean | undefined {
    const realm = this.#realms.get(realmId);
    if (realm === undefined || this.#options.clock.now() - realm.loadedAt >= this.#options.cacheTtlMs) {
      return undefined;
    }
    const key = realm.keys.get(kid);
    return key !== undefined && this.#accepted(key);
  }

  /** The realm's published key set (JWKS): primary first, then newest. */
  async jwks(realmId: string): Promise<JwksDocument> {
    const realm = await this.#realm(realmId);
    const keys = realm.jwks.keys.filter((jwk) => {
      const key = realm.keys.get(jwk.kid);
      return key !== undefined && this.#accepted(key);
    });
    return keys.length === realm.jwks.keys.length ? realm.jwks : { keys };
  }

  /** Readiness: the realm has a primary key, and it signs something its public key verifies. */
  async check(realmId: string): Promise<void> {
    const record = await this.#options.store.getPrimary(realmId);
    if (record === null) throw new KeyRingError("no primary signing key");
    let key: LoadedSigningKey;
    try {
      key = await this.#import(record);
    } catch {
      throw new KeyRingError("the primary signing key cannot be loaded");
    }
    const probe = new Uint8Array([0x73, 0x76, 0x63]);
    const signature = await crypto.subtle.sign(RS256_PARAMS, key.privateKey, probe);
    if (!await crypto.subtle.verify(RS256_PARAMS, key.publicKey, signature, probe)) {
      throw new KeyRingError("the primary signing key does not verify its own signature");
    }
  }

  /** Forgets the realm's cached key set (after a rotation made here). */
  invalidate(realmId: string): void {
    this.#realms.delete(realmId);
  }

  #accepted(key: LoadedSigningKey): boolean {
    return key.retiredAt === null ||
      key.retiredAt.getTime() + this.#options.overlapMs > this.#options.clock.now();
  }

  async #realm(realmId: string): Promise<RealmKeys> {
    const now = this.#options.clock.now();
    const cached = this.#realms.get(realmId);
    if (cached !== undefined && now - cached.loadedAt < this.#options.cacheTtlMs) return cached;
    return await this.#reload(realmId, now);
  }

  #reload(realmId: string, now: number): Promise<RealmKeys> {
    const inFlight = this.#loading.get(realmId);
    if (inFlight !== undefined) return inFlight;
    const loading = (async () => {
      const records = await this.#options.store.listPublished(realmId, this.#options.overlapMs);
      const keys = new Map<string, LoadedSigningKey>();
      let primary: LoadedSigningKey | null = null;
      for (const record of records) {
        const key = await this.#import(record);
        keys.set(key.kid, key);
        if (key.isPrimary) primary = key;
      }
      const realm: RealmKeys = {
        loadedAt: now,
        primary,
        keys,
        jwks: { keys: [...keys.values()].map((k) => k.publicJwk) },
      };
      this.#realms.delete(realmId);
      this.#realms.set(realmId, realm);
      if (this.#realms.size > this.#options.maxRealms) {
        const oldest = this.#realms.keys().next().value;
        if (oldest !== undefined) this.#realms.delete(oldest);
      }
      return realm;
    })();
    this.#loading.set(realmId, loading);
    return loading.finally(() => this.#loading.delete(realmId));
  }

  async #import(record: Parameters<typeof loadSigningKey>[0]): Promise<LoadedSigningKey> {
    const id = `${record.realmId}|${record.kid}`;
    const cached = this.#imported.get(id);
    // Primary and retired state change over a key's life; the key material never does.
    if (
      cached !== undefined && cached.isPrimary === record.isPrimary &&
      cached.retiredAt?.getTime() === record.retiredAt?.getTime()
    ) return cached;
    const loaded = cached === undefined ? await loadSigningKey(record) : {
      ...cached,
      isPrimary: record.isPrimary,
      retiredAt: record.retiredAt,
    };
    this.#imported.set(id, loaded);
    if (this.#imported.size > this.#options.maxRealms * 4) {
      const oldest = this.#imported.keys().next().value;
      if (oldest !== undefined) this.#imported.delete(oldest);
    }
    return loaded;
  }
}
