/**
 * Passkey ceremonies over the credential and ceremony stores (spec 2.3, 3, 5.1, 5.3), with
 * `@simplewebauthn/server` doing the WebAuthn verification.
 *
 * Every ceremony has a random id, lives `ceremonyTtlMs` (5 minutes by default) and allows one
 * attempt: completing it deletes it whatever the outcome, so a failed or repeated completion
 * finds nothing. Only the SHA-256 of its challenge is stored; the presented challenge is
 * compared in constant time.
 *
 * - Registration (an authenticated user): the credential is stored with whether the
 *   authenticator verified the user (its user-verification capability).
 * - Login (first factor): discoverable (no user named, the credential names the user) or
 *   username-first (`allowCredentials` of the named user; an unknown user, or one without
 *   passkeys, gets a decoy list of the same shape, stable across instances and restarts: see
 *   `decoy.ts`).
 *   A credential that is not user-verification capable, or an assertion without UV, is
 *   refused with `passkey_not_eligible`.
 * - Second factor: any registered passkey of the pending login's subject.
 *
 * After a verified signature the counter is advanced in one conditional write; a regression
 * fails with the generic login error and emits `passkey.signcount_regression`.
 *
 * @module
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import * as v from "valibot";
import { normalizeEmail } from "../accounts/email.ts";
import type { Clock } from "../clock.ts";
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../encoding.ts";
import { decoyCredentials } from "./decoy.ts";
import { NotFoundError } from "../errors.ts";
import { EVENT_KINDS } from "../events/catalog.ts";
import type { EventSink } from "../events/sink.ts";
import type { RandomSource } from "../random.ts";
import {
  challengeMatches,
  PASSKEY_CEREMONY_TTL_MS,
  type PasskeyCeremonyRecord,
  type PasskeyCeremonyStore,
} from "../storage/passkey-ceremonies.ts";
import type { PasskeyCredentialRecord, PasskeyCredentialStore } from "../storage/passkey-credentials.ts";
import type { User, UserStore } from "../storage/users.ts";
import {
  isFirstFactorEligible,
  PasskeyLoginError,
  PasskeyNotEligibleError,
  PasskeyRegistrationError,
} from "./rules.ts";

/**
 * `@simplewebauthn/server`, loaded on the first ceremony: its module graph (CBOR, ASN.1, the
 * attestation formats) is about 10 MiB of resident memory that a server whose users never touch a
 * passkey would otherwise carry from its start (docs/operations/memory.md).
 */
let simpleWebAuthn: Promise<typeof import("@simplewebauthn/server")> | undefined;
const webAuthn = () =>
  simpleWebAuthn ??= import("@simplewebauthn/server").catch((error) => {
    simpleWebAuthn = undefined; // a failed load is tried again by the next ceremony
    throw error;
  });

/** The relying party (spec 5.3): its id (a domain), its name and the origins allowed in ceremonies. */
export interface RelyingParty {
  /** The relying-party id (a domain). */
  readonly id: string;
  /** The name passkey prompts show. */
  readonly name: string;
  /** Origins allowed in ceremonies. */
  readonly origins: readonly string[];
}

/** The ceremony kinds. */
export const CeremonyKinds = {
  registration: "registration",
  login: "authentication",
  secondFactor: "mfa",
} as const;

/** COSE algorithms offered at registration: EdDSA, ES256, RS256. */
export const SUPPORTED_ALGORITHMS: readonly number[] = [-8, -7, -257];

const b64url = v.pipe(v.string(), v.maxLength(16_384), v.regex(/^[A-Za-z0-9_-]*={0,2}$/));
const clientExtensionResults = v.optional(v.record(v.string(), v.unknown()), {});

const registrationResponseSchema = v.object({
  id: b64url,
  rawId: b64url,
  type: v.literal("public-key"),
  response: v.object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    authenticatorData: v.optional(b64url),
    transports: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(32))), v.maxLength(10))),
    publicKeyAlgorithm: v.optional(v.number()),
    publicKey: v.optional(b64url),
  }),
  authenticatorAttachment: v.optional(v.nullable(v.picklist(["platform", "cross-platform"]))),
  clientExtensionResults,
});

const authenticationResponseSchema = v.object({
  id: b64url,
  rawId: b64url,
  type: v.literal("public-key"),
  response: v.object({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: v.optional(v.nullable(b64url)),
  }),
  authenticatorAttachment: v.optional(v.nullable(v.picklist(["platform", "cross-platform"]))),
  clientExtensionResults,
});

/** A validated registration response (the JSON of `PublicKeyCredential.toJSON()` after `create()`). */
export interface RegistrationResponse {
  /** The credential id, base64url. */
  id: string;
  /** The credential id, base64url. */
  rawId: string;
  /** Always `public-key`. */
  type: "public-key";
  /** The authenticator's answer. */
  response: {
    clientDataJSON: string;
    attestationObject: string;
    authenticatorData?: string;
    transports?: string[];
    publicKeyAlgorithm?: number;
    publicKey?: string;
  };
  /** Platform or roaming authenticator, when the browser tells. */
  authenticatorAttachment?: "platform" | "cross-platform" | null;
  /** Extension outputs. */
  clientExtensionResults: { [extension: string]: unknown };
}

/** A validated authentication response (the JSON of `PublicKeyCredential.toJSON()` after `get()`). */
export interface AuthenticationResponse {
  /** The credential id, base64url. */
  id: string;
  /** The credential id, base64url. */
  rawId: string;
  /** Always `public-key`. */
  type: "public-key";
  /** The authenticator's answer. */
  response: {
    clientDataJSON: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string | null;
  };
  /** Platform or roaming authenticator, when the browser tells. */
  authenticatorAttachment?: "platform" | "cross-platform" | null;
  /** Extension outputs. */
  clientExtensionResults: { [extension: string]: unknown };
}

/** The JSON of a `navigator.credentials.create()` result (`PublicKeyCredential.toJSON()`). */
export const RegistrationResponseSchema: v.GenericSchema<unknown, RegistrationResponse> =
  registrationResponseSchema;
/** The JSON of a `navigator.credentials.get()` result (`PublicKeyCredential.toJSON()`). */
export const AuthenticationResponseSchema: v.GenericSchema<unknown, AuthenticationResponse> =
  authenticationResponseSchema;

// The written-out types are exactly what the schemas infer: `deno check` fails otherwise.
type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const _registration: Exactly<v.InferOutput<typeof registrationResponseSchema>, RegistrationResponse> = true;
const _authentication: Exactly<v.InferOutput<typeof authenticationResponseSchema>, AuthenticationResponse> =
  true;

/** A started ceremony: its id and the options for `navigator.credentials`. */
export interface CeremonyStart<O> {
  /** The ceremony's id, to send back with the browser's answer. */
  readonly ceremonyId: string;
  /** The options for `navigator.credentials`. */
  readonly options: O;
}

/** A verified assertion. */
export interface VerifiedAssertion {
  /** The user the passkey belongs to. */
  readonly user: User;
  /** The passkey used. */
  readonly credential: PasskeyCredentialRecord;
  /** Whether the authenticator verified the user in this assertion. */
  readonly userVerified: boolean;
}

/** What a {@link PasskeyService} is built from. */
export interface PasskeyServiceOptions {
  /** Registered passkeys. */
  readonly credentials: PasskeyCredentialStore;
  /** Ceremonies in progress. */
  readonly ceremonies: PasskeyCeremonyStore;
  /** User lookups. */
  readonly users: Pick<UserStore, "get" | "findByEmail">;
  /** Where passkey events go. */
  readonly events: EventSink;
  /** The source of the current time. */
  readonly clock: Clock;
  /** The source of random bytes (ceremony ids, challenges). */
  readonly random: RandomSource;
  /** The relying party (id, name, allowed origins). */
  readonly relyingParty: RelyingParty;
  /** Ceremony lifetime (default 5 minutes); also the browser's timeout. */
  readonly ceremonyTtlMs?: number;
  /**
   * The secret username-first decoys derive from (32 bytes or more), shared by every instance:
   * `createPasskeyRoutes` reads it from the database (`serverSecrets`). Default: a random key
   * of this instance, so decoys change on restart and differ between instances (tests only).
   */
  readonly decoySecret?: () => Promise<Uint8Array>;
}

/**
 * Passkey registration, login and second-factor ceremonies.
 *
 * @example
 * ```ts
 * import {
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   EventHub,
 *   loadConfig,
 *   openDatabase,
 *   PasskeyService,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 *
 * const { config } = loadConfig({ env: {} });
 * const passkeys = new PasskeyService({
 *   credentials: storage.passkeyCredentials,
 *   ceremonies: storage.passkeyCeremonies,
 *   users: storage.users,
 *   events: new EventHub(),
 *   clock,
 *   random,
 *   relyingParty: config.relyingParty, // { id: "localhost", … } by default
 * });
 * const { ceremonyId, options } = await passkeys.startLogin({ realmId: realm.id });
 * options.rpId; // → "localhost"
 * // The browser answers with the JSON of `navigator.credentials.get({ publicKey: options })`;
 * // validate it with `AuthenticationResponseSchema`, then (once, within five minutes):
 * // const { user } = await passkeys.finishLogin(ceremonyId, response);
 * await database.close();
 * ```
 */
export class PasskeyService {
  readonly #o: PasskeyServiceOptions;
  readonly #ttlMs: number;
  readonly #decoySecret: () => Promise<Uint8Array>;
  #decoyKey: Promise<Uint8Array> | null = null;

  /** The service over its stores and relying party. */
  constructor(options: PasskeyServiceOptions) {
    this.#o = options;
    this.#ttlMs = options.ceremonyTtlMs ?? PASSKEY_CEREMONY_TTL_MS;
    const ownKey = options.random.bytes(32);
    this.#decoySecret = options.decoySecret ?? (() => Promise.resolve(ownKey));
  }

  /** The relying party. */
  get relyingParty(): RelyingParty {
    return this.#o.relyingParty;
  }

  /** Starts registering a passkey for `user`; `name` labels the credential. */
  async startRegistration(
    user: Pick<User, "id" | "realmId" | "email" | "displayName">,
    input: { name?: string | null } = {},
  ): Promise<CeremonyStart<PublicKeyCredentialCreationOptionsJSON>> {
    const { relyingParty: rp, random } = this.#o;
    const existing = await this.#o.credentials.listByUser(user.id);
    const { generateRegistrationOptions } = await webAuthn();
    const options = await generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: user.email,
      userID: userHandle(user.id),
      userDisplayName: user.displayName ?? user.email,
      challenge: random.bytes(32) as Uint8Array<ArrayBuffer>,
      timeout: this.#ttlMs,
      attestationType: "none",
      excludeCredentials: existing.map((c) => ({
        id: toBase64Url(c.credentialId),
        transports: [...c.transports],
      })),
      authenticatorSelection: {
        residentKey: "required",
        requireResidentKey: true,
        userVerification: "preferred",
      },
      supportedAlgorithmIDs: [...SUPPORTED_ALGORITHMS],
    });
    const ceremony = await this.#o.ceremonies.create({
      kind: CeremonyKinds.registration,
      challenge: options.challenge,
      realmId: user.realmId,
      userId: user.id,
      data: input.name ? { name: input.name } : {},
      ttlMs: this.#ttlMs,
    });
    return { ceremonyId: ceremony.id, options };
  }

  /**
   * Completes a registration of `user` (the one who started it). Throws
   * `PasskeyRegistrationError` for anything that does not verify, `ConflictError` when the
   * credential is already registered.
   */
  async finishRegistration(
    user: Pick<User, "id" | "realmId">,
    ceremonyId: string,
    response: RegistrationResponse,
    input: { name?: string | null } = {},
  ): Promise<PasskeyCredentialRecord> {
    const { relyingParty: rp } = this.#o;
    const ceremony = await this.#o.ceremonies.consume(ceremonyId);
    if (ceremony === null) throw new PasskeyRegistrationError("ceremony unknown, used or expired");
    if (ceremony.kind !== CeremonyKinds.registration || ceremony.userId !== user.id) {
      throw new PasskeyRegistrationError("ceremony of another kind or user");
    }
    const { verifyRegistrationResponse } = await webAuthn();
    let info;
    try {
      const result = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: (challenge) => challengeMatches(ceremony, challenge),
        expectedOrigin: [...rp.origins],
        expectedRPID: rp.id,
        requireUserPresence: true,
        requireUserVerification: false,
        supportedAlgorithmIDs: [...SUPPORTED_ALGORITHMS],
      });
      if (!result.verified) throw new Error("not verified");
      info = result.registrationInfo;
    } catch (error) {
      throw new PasskeyRegistrationError(`response does not verify: ${(error as Error).message}`);
    }
    const name = input.name ?? (typeof ceremony.data.name === "string" ? ceremony.data.name : null);
    const credential = await this.#o.credentials.create({
      userId: user.id,
      credentialId: fromBase64Url(info.credential.id),
      publicKey: info.credential.publicKey,
      signCount: info.credential.counter,
      userVerificationCapable: info.userVerified,
      transports: response.response.transports ?? [],
      name,
    });
    this.#emit(EVENT_KINDS.passkeyRegistered, user, {
      passkeyId: credential.id,
      userVerificationCapable: credential.userVerificationCapable,
      backupEligible: info.credentialDeviceType === "multiDevice",
    });
    return credential;
  }

  /**
   * Starts a first-factor login in `realmId` (null: any realm). Without `email` it is
   * passwordless with a discoverable credential; with `email` it is username-first and the
   * options list the user's credentials (an unknown email, or a user without passkeys, gets
   * a decoy list of the same shape, so the answer does not tell who has passkeys).
   */
  async startLogin(
    input: { realmId: string | null; email?: string | null },
  ): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
    let userId: string | null = null;
    let allow: { id: string; transports?: string[] }[] | undefined;
    if (input.email) {
      const email = normalizeEmail(input.email);
      const user = input.realmId === null ? null : await this.#o.users.findByEmail(input.realmId, email);
      const credentials = user && user.status === "Active"
        ? await this.#o.credentials.listByUser(user.id)
        : [];
      if (user && credentials.length > 0) {
        userId = user.id;
        allow = credentials.map((c) => ({ id: toBase64Url(c.credentialId), transports: [...c.transports] }));
      } else {
        allow = decoyCredentials(await this.#decoyKeyBytes(), input.realmId, email);
      }
    }
    return await this.#startAssertion(CeremonyKinds.login, {
      realmId: input.realmId,
      userId,
      allow,
      data: { mode: input.email ? "username" : "discoverable" },
    });
  }

  /**
   * Completes a first-factor login: the user and credential, or `PasskeyLoginError` (generic
   * 401), or `PasskeyNotEligibleError` (401 `passkey_not_eligible`) when the credential or the
   * assertion lacks user verification. The counter has moved forward in either case.
   */
  async finishLogin(ceremonyId: string, response: AuthenticationResponse): Promise<VerifiedAssertion> {
    const ceremony = await this.#o.ceremonies.consume(ceremonyId);
    if (ceremony === null) throw new PasskeyLoginError("ceremony unknown, used or expired");
    if (ceremony.kind !== CeremonyKinds.login) throw new PasskeyLoginError("ceremony of another kind");
    const verified = await this.#verifyAssertion(ceremony, response);
    if (!isFirstFactorEligible({ ...verified.credential, userVerified: verified.userVerified })) {
      throw new PasskeyNotEligibleError();
    }
    this.#emit(EVENT_KINDS.passkeyLogin, verified.user, {
      passkeyId: verified.credential.id,
      factor: "first",
      userVerified: verified.userVerified,
    });
    return verified;
  }

  /**
   * Starts a second-factor ceremony for the pending login `pendingId` (the `mfa+svc` jti) of
   * `userId`: the options list the user's passkeys.
   */
  async startSecondFactor(
    input: { realmId: string; userId: string; pendingId: string },
  ): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
    const credentials = await this.#o.credentials.listByUser(input.userId);
    return await this.#startAssertion(CeremonyKinds.secondFactor, {
      realmId: input.realmId,
      userId: input.userId,
      allow: credentials.map((c) => ({ id: toBase64Url(c.credentialId), transports: [...c.transports] })),
      data: { pending: input.pendingId },
    });
  }

  /**
   * Completes a second-factor ceremony of the pending login `pendingId` of `userId`. Any
   * registered passkey of the user is accepted, with or without user verification.
   */
  async finishSecondFactor(
    input: { userId: string; pendingId: string },
    ceremonyId: string,
    response: AuthenticationResponse,
  ): Promise<VerifiedAssertion> {
    const ceremony = await this.#o.ceremonies.consume(ceremonyId);
    if (ceremony === null) throw new PasskeyLoginError("ceremony unknown, used or expired");
    if (
      ceremony.kind !== CeremonyKinds.secondFactor || ceremony.userId !== input.userId ||
      ceremony.data.pending !== input.pendingId
    ) {
      throw new PasskeyLoginError("ceremony of another kind or login");
    }
    const verified = await this.#verifyAssertion(ceremony, response);
    this.#emit(EVENT_KINDS.passkeyLogin, verified.user, {
      passkeyId: verified.credential.id,
      factor: "second",
      userVerified: verified.userVerified,
    });
    return verified;
  }

  /** The user's passkeys, oldest first. */
  list(userId: string): Promise<PasskeyCredentialRecord[]> {
    return this.#o.credentials.listByUser(userId);
  }

  /**
   * Removes one of the user's passkeys, named by its svc id or its authenticator credential
   * id (base64url). `NotFoundError` when it is not theirs or does not exist (the same answer).
   */
  async remove(user: Pick<User, "id" | "realmId">, id: string): Promise<PasskeyCredentialRecord> {
    const credential = await this.#own(user, id);
    if (credential === null || !await this.#o.credentials.delete(user.id, credential.id)) {
      throw new NotFoundError("The passkey was not found.");
    }
    this.#emit(EVENT_KINDS.passkeyRemoved, user, { passkeyId: credential.id });
    return credential;
  }

  /**
   * Renames one of `user`'s passkeys (`id`: svc's id or the base64url credential id; `name`
   * null clears it). Another user's passkey is not found, exactly like an unknown one.
   */
  async rename(
    user: Pick<User, "id" | "realmId">,
    id: string,
    name: string | null,
  ): Promise<PasskeyCredentialRecord> {
    const credential = await this.#own(user, id);
    if (credential === null || !await this.#o.credentials.rename(user.id, credential.id, name)) {
      throw new NotFoundError("The passkey was not found.");
    }
    this.#emit(EVENT_KINDS.passkeyRenamed, user, { passkeyId: credential.id });
    return { ...credential, name };
  }

  /** `user`'s credential by svc id or base64url credential id, or null (unknown or another user's). */
  async #own(user: Pick<User, "id">, id: string): Promise<PasskeyCredentialRecord | null> {
    let credential = await this.#o.credentials.get(id);
    if (credential === null && /^[A-Za-z0-9_-]{1,1400}$/.test(id)) {
      credential = await this.#o.credentials.getByCredentialId(fromBase64Url(id));
    }
    return credential !== null && credential.userId === user.id ? credential : null;
  }

  async #startAssertion(
    kind: string,
    input: {
      realmId: string | null;
      userId: string | null;
      allow: { id: string; transports?: string[] }[] | undefined;
      data: Record<string, unknown>;
    },
  ): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
    const { generateAuthenticationOptions } = await webAuthn();
    const options = await generateAuthenticationOptions({
      rpID: this.#o.relyingParty.id,
      challenge: this.#o.random.bytes(32) as Uint8Array<ArrayBuffer>,
      timeout: this.#ttlMs,
      userVerification: "preferred",
      ...(input.allow ? { allowCredentials: input.allow } : {}),
    });
    const ceremony = await this.#o.ceremonies.create({
      kind,
      challenge: options.challenge,
      realmId: input.realmId,
      userId: input.userId,
      data: input.data,
      ttlMs: this.#ttlMs,
    });
    return { ceremonyId: ceremony.id, options };
  }

  /** Verifies an assertion against a consumed ceremony, then advances the counter. */
  async #verifyAssertion(
    ceremony: PasskeyCeremonyRecord,
    response: AuthenticationResponse,
  ): Promise<VerifiedAssertion> {
    const { relyingParty: rp, credentials } = this.#o;
    let rawId: Uint8Array;
    try {
      rawId = fromBase64Url(response.rawId);
    } catch {
      throw new PasskeyLoginError("malformed credential id");
    }
    const credential = await credentials.getByCredentialId(rawId);
    if (credential === null) throw new PasskeyLoginError("unknown credential");
    if (ceremony.userId !== null && credential.userId !== ceremony.userId) {
      throw new PasskeyLoginError("credential of another user");
    }
    const handle = response.response.userHandle;
    if (handle && !sameUserHandle(handle, credential.userId)) {
      throw new PasskeyLoginError("user handle mismatch");
    }
    const user = await this.#o.users.get(credential.userId);
    if (user === null || user.status !== "Active" || user.anonymizedAt !== null) {
      throw new PasskeyLoginError("user missing or not active");
    }
    // A break-glass account signs in with its rotated password only (a passkey left from before
    // enrollment was refused to it is not a way in).
    if (user.isBreakGlass) throw new PasskeyLoginError("break-glass account");
    if (ceremony.realmId !== null && user.realmId !== ceremony.realmId) {
      throw new PasskeyLoginError("user of another realm");
    }
    const { verifyAuthenticationResponse } = await webAuthn();
    let newCounter: number;
    let userVerified: boolean;
    try {
      const result = await verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        expectedChallenge: (challenge) => challengeMatches(ceremony, challenge),
        expectedOrigin: [...rp.origins],
        expectedRPID: rp.id,
        credential: {
          id: response.id,
          publicKey: credential.publicKey as Uint8Array<ArrayBuffer>,
          // The counter is checked below, atomically with its update.
          counter: 0,
          transports: credential.transports as AuthenticatorTransportName[],
        },
        requireUserVerification: false,
      });
      if (!result.verified) throw new Error("signature does not verify");
      newCounter = result.authenticationInfo.newCounter;
      userVerified = result.authenticationInfo.userVerified;
    } catch (error) {
      throw new PasskeyLoginError(`assertion does not verify: ${(error as Error).message}`);
    }
    const lastUsedAt = new Date(this.#o.clock.now());
    if (!await credentials.updateCounter(credential.id, newCounter, lastUsedAt)) {
      const current = await credentials.get(credential.id);
      if (current === null) throw new PasskeyLoginError("credential removed");
      this.#emit(EVENT_KINDS.passkeySigncountRegression, user, {
        passkeyId: credential.id,
        storedSignCount: current.signCount,
        presentedSignCount: newCounter,
      });
      throw new PasskeyLoginError("sign count regression");
    }
    return {
      user,
      credential: { ...credential, signCount: newCounter, lastUsedAt },
      userVerified,
    };
  }

  /** The decoy secret, read once (a failed read is tried again on the next call). */
  #decoyKeyBytes(): Promise<Uint8Array> {
    this.#decoyKey ??= this.#decoySecret().catch((error) => {
      this.#decoyKey = null;
      throw error;
    });
    return this.#decoyKey;
  }

  #emit(kind: string, user: Pick<User, "id" | "realmId">, data: Record<string, unknown>): void {
    this.#o.events.emit({
      kind,
      occurredAt: this.#o.clock.now(),
      realmId: user.realmId,
      userId: user.id,
      data,
    });
  }
}

type AuthenticatorTransportName = "ble" | "cable" | "hybrid" | "internal" | "nfc" | "smart-card" | "usb";

/** The WebAuthn user handle of a user: the UTF-8 of its id (no personal data). */
export function userHandle(userId: string): Uint8Array<ArrayBuffer> {
  return utf8(userId) as Uint8Array<ArrayBuffer>;
}

function sameUserHandle(handle: string, userId: string): boolean {
  try {
    return fromUtf8(fromBase64Url(handle)) === userId;
  } catch {
    return false;
  }
}
