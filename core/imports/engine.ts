/**
 * The one import engine every importer shares (spec appendix "Migration importer behaviour").
 * It applies a stream of {@link ImportItem}s to a realm by natural key: users by (realm, email),
 * roles and groups by (realm, key), clients by (realm, client id), credentials by (user,
 * algorithm tag). A re-run updates and never duplicates. Items are written in batches, each in
 * one transaction, so a long stream runs in flat memory. A dry run runs the very same code in one
 * transaction that is rolled back at the end: the same matching and counts, nothing persisted.
 *
 * Suspended is sticky: an import never reactivates a suspended user (spec 3). A user whose
 * attributes nest deeper or hold a wider object or array than the JSON limits allow is an Error
 * issue and is not imported; the import goes on (Postgres would refuse a deep enough jsonb and
 * fail the whole batch).
 *
 * Privileged subjects are left alone: with an {@link ImportGuard}, an existing user the importer's
 * authority does not cover (one holding an admin permission the importer lacks) is reported as an
 * `Error` issue and nothing of it changes (credentials, status, attributes, roles, groups), and an
 * existing role or group whose grants the importer could not hand out is not assigned. With a
 * `suspend` hook, an existing user the export marks suspended is suspended through it after the
 * run (sessions, refresh tokens and API keys end at once), not by a bare status change.
 *
 * @module
 */
import { canonicalJson } from "../canonical-json.ts";
import { NotFoundError } from "../errors.ts";
import { DEFAULT_JSON_LIMITS, type JsonLimits, jsonValueBreach } from "../json-limits.ts";
import {
  costCeilingExceeded,
  DEFAULT_PASSWORD_COST_CEILINGS,
  type PasswordCostCeilings,
} from "../passwords/cost.ts";
import { type RandomSource, randomToken } from "../random.ts";
import type { ClientFields, ClientRecord } from "../storage/clients.ts";
import type { PasswordCredentialRecord } from "../storage/password-credentials.ts";
import type { UpdateUserInput, User } from "../storage/users.ts";
import { normalizeEmail } from "../accounts/email.ts";
import type { Storage } from "../storage/storage.ts";
import {
  emptyReport,
  type ImportedClient,
  type ImportedRole,
  importedRoleKey,
  type ImportedUser,
  type ImportIssue,
  type ImportItem,
  type ImportOptions,
  type ImportReport,
  normalizeImportKey,
  plausibleEmail,
} from "./model.ts";

/** The target realm of an import does not exist (imports never create realms). */
export class ImportRealmNotFoundError extends NotFoundError {
  constructor() {
    super("No such realm to import into.");
  }
}

/** A hashed client secret. */
export interface HashedSecret {
  /** The algorithm tag of the hash (argon2id for secrets hashed here). */
  readonly algorithm: string;
  /** The encoded hash, stored as is. */
  readonly hash: string;
}

/**
 * What the importer may touch, as the authority rule of the caller decides (the admin API's
 * adapter builds it). Reads go through `tx`, the batch's transaction.
 */
export interface ImportGuard {
  /** Whether the import may change this existing user (the user's whole reach is within the importer's). */
  mayChangeUser(tx: Storage, user: User): Promise<boolean>;
  /** Whether the import may make users members of this existing role or group (its grants are the importer's to hand out). */
  mayHandOut(tx: Storage, target: { readonly kind: "Role" | "Group"; readonly id: string }): Promise<boolean>;
}

/** What the engine needs. */
export interface ImportEngineDeps {
  /** Where items are written (realms, users, credentials, roles, groups, clients), batch by batch. */
  readonly storage: Storage;
  /** Random source of generated client secrets. */
  readonly random: RandomSource;
  /** Hashes a client secret with the current hasher (argon2id). */
  hashSecret(plaintext: string): Promise<HashedSecret>;
  /** Whether a plaintext secret matches a stored hash (a re-import of the same secret changes nothing). */
  verifySecret(plaintext: string, stored: HashedSecret): Promise<boolean>;
  /**
   * The cost ceilings imported password hashes are held to (the password service's); the
   * defaults when absent. A hash beyond them is refused with an `Error` issue.
   */
  readonly hashCeilings?: PasswordCostCeilings;
  /** Items per transaction (default 1000). */
  readonly batchSize?: number;
  /** Called after each batch with the number of items applied so far. */
  readonly onProgress?: (applied: number) => void;
  /** The shape limits of a user's attributes (default {@link DEFAULT_JSON_LIMITS}). */
  readonly jsonLimits?: JsonLimits;
  /** What the importer may touch; absent: everything but break-glass and erased accounts (the CLI). */
  readonly guard?: ImportGuard;
  /**
   * Suspends an existing user (one audited suspension: sessions, refresh tokens and API keys end
   * at once), called after a real run for each user the export newly marks suspended; absent: the
   * status alone changes, in the batch.
   */
  readonly suspend?: (userId: string) => Promise<void>;
}

/** Length of a generated client secret in random bytes. */
const CLIENT_SECRET_BYTES = 32;

class DryRunRollback extends Error {}

/**
 * Applies `items` to `options.targetRealmId` and reports what happened. Throws
 * {@link ImportRealmNotFoundError} (before anything is read) for an unknown realm.
 */
export async function runImport(
  deps: ImportEngineDeps,
  options: ImportOptions,
  items: AsyncIterable<ImportItem> | Iterable<ImportItem>,
): Promise<ImportReport> {
  const realm = await deps.storage.realms.get(options.targetRealmId);
  if (realm === null) throw new ImportRealmNotFoundError();
  const report = emptyReport(options.dryRun);
  const suspensions: string[] = [];
  const run = async (storage: Storage) => {
    const applier = new BatchApplier(deps, realm.id, report, suspensions);
    const batchSize = Math.max(1, deps.batchSize ?? 1000);
    let batch: ImportItem[] = [];
    let applied = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const current = batch;
      batch = [];
      await storage.transaction((tx) => applier.applyBatch(tx, current));
      applied += current.length;
      deps.onProgress?.(applied);
    };
    for await (const item of items) {
      batch.push(item);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
  };
  if (!options.dryRun) {
    await run(deps.storage);
    for (const userId of suspensions) await deps.suspend!(userId);
    return report;
  }
  try {
    await deps.storage.transaction(async (tx) => {
      await run(tx);
      throw new DryRunRollback();
    });
  } catch (error) {
    if (!(error instanceof DryRunRollback)) throw error;
  }
  // Nothing was persisted: secrets generated under a dry run exist nowhere.
  report.generatedClientSecrets = {};
  return report;
}

/** A new user of a batch waiting for the batch's bulk insert. */
interface PendingUser {
  readonly email: string;
  readonly user: ImportedUser;
}

/** Applies items, remembering role and group ids of the run. */
class BatchApplier {
  readonly #roles = new Map<string, string>();
  readonly #groups = new Map<string, string>();
  /** Users of the batch read in one query before it runs (an entry is dropped once used: never stale). */
  #users = new Map<string, User>();
  /** Credentials of those users, by user id (dropped once used). */
  #credentials = new Map<string, PasswordCredentialRecord[]>();

  constructor(
    private readonly deps: ImportEngineDeps,
    private readonly realmId: string,
    private readonly report: ImportReport,
    /** Existing users to suspend through `deps.suspend` after the run. */
    private readonly suspensions: string[],
  ) {}

  /**
   * Applies one batch: existing users and their credentials are read in two queries; new users
   * without roles or groups (the bulk of a hosted-provider export) are inserted with their
   * credentials in two statements at the end; everything else goes item by item. Counts are the
   * same as item by item.
   */
  async applyBatch(tx: Storage, items: readonly ImportItem[]): Promise<void> {
    const emails = new Set<string>();
    for (const item of items) {
      if (item.kind === "user") {
        const email = normalizeEmail(item.user.email);
        if (plausibleEmail(email)) emails.add(email);
      }
    }
    this.#users = new Map(
      (await tx.users.findManyByEmail(this.realmId, [...emails])).map((u) => [u.email, u]),
    );
    this.#credentials = new Map([...this.#users.values()].map((u) => [u.id, []]));
    for (const row of await tx.passwordCredentials.listForUsers([...this.#users.values()].map((u) => u.id))) {
      const list = this.#credentials.get(row.userId) ?? [];
      list.push(row);
      this.#credentials.set(row.userId, list);
    }
    const known = new Set(this.#users.keys());
    let pending: PendingUser[] = [];
    const flush = async () => {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      const created = await tx.users.createMany(batch.map(({ email, user }) => ({
        realmId: this.realmId,
        email,
        displayName: user.displayName ?? null,
        emailVerified: user.emailVerified,
        status: user.suspended ? "Suspended" as const : "Active" as const,
        attributes: { ...user.attributes },
      })));
      await tx.passwordCredentials.insertMany(
        batch.flatMap(({ user }, i) =>
          user.credential ? [{ userId: created[i].id, value: user.credential }] : []
        ),
        { freshUsers: true },
      );
    };
    for (const item of items) {
      if (item.kind === "user" && this.#refuseShape(item.user)) continue;
      if (item.kind === "user" && !JSON.stringify(item).includes("\\u0000")) {
        const email = normalizeEmail(item.user.email);
        const simple = item.user.roleKeys.length === 0 && item.user.groupKeys.length === 0;
        if (plausibleEmail(email) && !known.has(email) && simple) {
          known.add(email);
          this.report.users.total++;
          this.report.users.created++;
          let user = item.user;
          if (user.credential && this.#refusedAsTooCostly(email, user.credential)) {
            user = { ...user, credential: null };
          } else if (user.credential) {
            this.report.credentials.total++;
            this.report.credentials.created++;
          }
          pending.push({ email, user });
          continue;
        }
        // A second occurrence of a pending user must see it written.
        if (pending.some((p) => p.email === email)) await flush();
        known.add(email);
      }
      await this.apply(tx, item);
    }
    await flush();
  }

  async apply(tx: Storage, item: ImportItem): Promise<void> {
    if (item.kind !== "issue" && JSON.stringify(item).includes("\\u0000")) return this.#refuseNul(item);
    switch (item.kind) {
      case "issue":
        this.report.issues.push(item.issue);
        return;
      case "role":
        return await this.#role(tx, item.role);
      case "group":
        return await this.#group(tx, item.group);
      case "user":
        return await this.#user(tx, item.user);
      case "client":
        return await this.#client(tx, item.client);
    }
  }

  /** A user whose attributes break the JSON limits is an Error issue, counted skipped; true when refused. */
  #refuseShape(user: ImportedUser): boolean {
    const breach = jsonValueBreach(user.attributes, this.deps.jsonLimits ?? DEFAULT_JSON_LIMITS);
    if (breach === null) return false;
    this.report.users.total++;
    this.report.users.skipped++;
    this.#issue({
      severity: "Error",
      entity: "User",
      key: user.email.replaceAll("\u0000", ""),
      message: `The user's attributes are refused: ${breach.message}`,
    });
    return true;
  }

  /** U+0000 is refused everywhere: the item is not imported. */
  #refuseNul(item: Exclude<ImportItem, { kind: "issue" }>): void {
    const [counts, entity, key] = item.kind === "user"
      ? [this.report.users, "User", item.user.email]
      : item.kind === "client"
      ? [this.report.clients, "Client", item.client.clientId]
      : item.kind === "role"
      ? [this.report.roles, "Role", item.role.key]
      : [this.report.groups, "Group", item.group.key];
    counts.total++;
    counts.skipped++;
    this.#issue({
      severity: "Error",
      entity,
      key: key.replaceAll("\u0000", ""),
      message: "The item contains U+0000.",
    });
  }

  #issue(issue: ImportIssue): void {
    this.report.issues.push(issue);
  }

  async #role(tx: Storage, role: ImportedRole): Promise<void> {
    const counts = this.report.roles;
    counts.total++;
    const key = importedRoleKey(role.key);
    if (key === "") {
      counts.skipped++;
      this.#issue({ severity: "Error", entity: "Role", key: role.key, message: "The role key is empty." });
      return;
    }
    const displayName = role.displayName.trim() || role.key;
    const existing = await tx.roles.getByKey(this.realmId, key, null);
    if (existing === null) {
      const created = await tx.roles.create({ realmId: this.realmId, key, displayName });
      this.#roles.set(key, created.id);
      counts.created++;
    } else {
      this.#roles.set(key, existing.id);
      if (existing.displayName === displayName) counts.skipped++;
      else {
        await tx.roles.update(existing.id, { displayName });
        counts.updated++;
      }
    }
  }

  async #group(tx: Storage, group: ImportedRole): Promise<void> {
    const counts = this.report.groups;
    counts.total++;
    const key = normalizeImportKey(group.key);
    if (key === "") {
      counts.skipped++;
      this.#issue({ severity: "Error", entity: "Group", key: group.key, message: "The group key is empty." });
      return;
    }
    const displayName = group.displayName.trim() || group.key;
    const existing = await tx.groups.getByKey(this.realmId, key, null);
    if (existing === null) {
      const created = await tx.groups.create({ realmId: this.realmId, key, displayName });
      this.#groups.set(key, created.id);
      counts.created++;
    } else {
      this.#groups.set(key, existing.id);
      if (existing.displayName === displayName) counts.skipped++;
      else {
        await tx.groups.update(existing.id, { displayName });
        counts.updated++;
      }
    }
  }

  /** The id of a realm role by svc key, created (and counted) when the export referenced it without listing it. */
  async #roleId(tx: Storage, key: string, sourceKey: string): Promise<string> {
    const known = this.#roles.get(key);
    if (known !== undefined) return known;
    const existing = await tx.roles.getByKey(this.realmId, key, null);
    if (existing !== null) {
      this.#roles.set(key, existing.id);
      return existing.id;
    }
    await this.#role(tx, { key: sourceKey, displayName: sourceKey });
    return this.#roles.get(key)!;
  }

  async #groupId(tx: Storage, key: string, sourceKey: string): Promise<string> {
    const known = this.#groups.get(key);
    if (known !== undefined) return known;
    const existing = await tx.groups.getByKey(this.realmId, key, null);
    if (existing !== null) {
      this.#groups.set(key, existing.id);
      return existing.id;
    }
    await this.#group(tx, { key: sourceKey, displayName: sourceKey });
    return this.#groups.get(key)!;
  }

  async #user(tx: Storage, user: ImportedUser): Promise<void> {
    const counts = this.report.users;
    counts.total++;
    const email = normalizeEmail(user.email);
    if (!plausibleEmail(email)) {
      counts.skipped++;
      this.#issue({
        severity: "Error",
        entity: "User",
        key: user.email,
        message: "The user has no usable email address (the natural key).",
      });
      return;
    }
    const prefetched = this.#users.get(email);
    this.#users.delete(email);
    const existing = prefetched ?? await tx.users.findByEmail(this.realmId, email);
    let userId: string;
    if (existing === null) {
      const created = await tx.users.create({
        realmId: this.realmId,
        email,
        displayName: user.displayName ?? null,
        emailVerified: user.emailVerified,
        status: user.suspended ? "Suspended" : "Active",
        attributes: { ...user.attributes },
      });
      userId = created.id;
      counts.created++;
    } else {
      if (existing.isBreakGlass || existing.anonymizedAt !== null) {
        counts.skipped++;
        this.#issue({
          severity: "Error",
          entity: "User",
          key: email,
          message: "The user is a break-glass or erased account; imports do not change it.",
        });
        return;
      }
      if (this.deps.guard !== undefined && !(await this.deps.guard.mayChangeUser(tx, existing))) {
        counts.skipped++;
        this.#issue({
          severity: "Error",
          entity: "User",
          key: email,
          message: "The user holds permissions beyond the importer's; imports do not change it.",
        });
        return;
      }
      userId = existing.id;
      const changes: { -readonly [K in keyof UpdateUserInput]: UpdateUserInput[K] } = {};
      if (user.displayName != null && user.displayName !== existing.displayName) {
        changes.displayName = user.displayName;
      }
      if (user.emailVerified !== existing.emailVerified) changes.emailVerified = user.emailVerified;
      // Suspended is sticky: only ever Active → Suspended.
      const suspend = user.suspended && existing.status !== "Suspended";
      if (suspend && this.deps.suspend === undefined) changes.status = "Suspended";
      else if (suspend) this.suspensions.push(existing.id);
      const merged = { ...existing.attributes, ...user.attributes };
      if (canonicalJson(merged) !== canonicalJson(existing.attributes)) changes.attributes = merged;
      if (Object.keys(changes).length === 0 && !suspend) counts.skipped++;
      else if (Object.keys(changes).length === 0) counts.updated++;
      else {
        await tx.users.update(existing.id, changes);
        counts.updated++;
      }
    }
    if (user.credential) await this.#credential(tx, userId, email, user.credential);
    if (user.roleKeys.length > 0) await this.#assignRoles(tx, userId, email, user.roleKeys);
    if (user.groupKeys.length > 0) await this.#joinGroups(tx, userId, email, user.groupKeys);
  }

  /**
   * Whether an imported hash asks for more work than the cost ceilings allow: then it is
   * counted (total, skipped) and reported as an `Error` issue, and must not be written.
   */
  #refusedAsTooCostly(email: string, credential: HashedSecret): boolean {
    const tooCostly = costCeilingExceeded(
      credential.algorithm,
      credential.hash,
      this.deps.hashCeilings ?? DEFAULT_PASSWORD_COST_CEILINGS,
    );
    if (tooCostly === null) return false;
    this.report.credentials.total++;
    this.report.credentials.skipped++;
    this.#issue({
      severity: "Error",
      entity: "Credential",
      key: email,
      message: `The password hash was not imported: its ${tooCostly}.`,
    });
    return true;
  }

  async #credential(tx: Storage, userId: string, email: string, credential: HashedSecret): Promise<void> {
    if (this.#refusedAsTooCostly(email, credential)) {
      this.#credentials.delete(userId);
      return;
    }
    const counts = this.report.credentials;
    counts.total++;
    const prefetched = this.#credentials.get(userId);
    this.#credentials.delete(userId);
    const stored = prefetched ?? await tx.passwordCredentials.list(userId);
    const same = stored.find((row) => row.algorithm === credential.algorithm);
    if (same === undefined && stored.length > 0) {
      // The user already signs in with another password (for example one rehashed to argon2id
      // after an earlier import): an old hash must not come back as the newest credential.
      counts.skipped++;
      this.#issue({
        severity: "Info",
        entity: "Credential",
        key: email,
        message: `The user already has a password under ${
          stored[0].algorithm
        }; the imported hash was not applied.`,
      });
      return;
    }
    if (same !== undefined && same.hash === credential.hash) {
      counts.skipped++;
      return;
    }
    const { created } = await tx.passwordCredentials.upsert(userId, credential);
    if (created) counts.created++;
    else counts.updated++;
  }

  async #assignRoles(
    tx: Storage,
    userId: string,
    email: string,
    sourceKeys: readonly string[],
  ): Promise<void> {
    const counts = this.report.roleAssignments;
    const assigned = new Set(
      (await tx.roles.listAssignmentsForPrincipal("User", userId, { orgId: null }))
        .filter((a) => a.orgId === null).map((a) => a.roleId),
    );
    for (const sourceKey of new Set(sourceKeys)) {
      counts.total++;
      const key = importedRoleKey(sourceKey);
      if (key === "") {
        counts.skipped++;
        this.#issue({
          severity: "Warning",
          entity: "RoleAssignment",
          key: email,
          message: "A role key is empty.",
        });
        continue;
      }
      const roleId = await this.#roleId(tx, key, sourceKey);
      if (assigned.has(roleId)) counts.skipped++;
      else if (!(await this.#mayHandOut(tx, "Role", roleId, email, sourceKey))) counts.skipped++;
      else {
        await tx.roles.assign({ roleId, principalKind: "User", principalId: userId, orgId: null });
        assigned.add(roleId);
        counts.created++;
      }
    }
  }

  async #joinGroups(
    tx: Storage,
    userId: string,
    email: string,
    sourceKeys: readonly string[],
  ): Promise<void> {
    const counts = this.report.groupMemberships;
    const member = new Set((await tx.groups.listGroupsOfUser(userId, { orgId: null })).map((g) => g.id));
    for (const sourceKey of new Set(sourceKeys)) {
      counts.total++;
      const key = normalizeImportKey(sourceKey);
      if (key === "") {
        counts.skipped++;
        this.#issue({
          severity: "Warning",
          entity: "GroupMembership",
          key: email,
          message: "A group key is empty.",
        });
        continue;
      }
      const groupId = await this.#groupId(tx, key, sourceKey);
      if (member.has(groupId)) counts.skipped++;
      else if (!(await this.#mayHandOut(tx, "Group", groupId, email, sourceKey))) counts.skipped++;
      else {
        await tx.groups.addMember(groupId, userId);
        member.add(groupId);
        counts.created++;
      }
    }
  }

  /** Whether the guard lets the import hand out a role or group; an `Error` issue when not. */
  async #mayHandOut(
    tx: Storage,
    kind: "Role" | "Group",
    id: string,
    email: string,
    sourceKey: string,
  ): Promise<boolean> {
    if (this.deps.guard === undefined || await this.deps.guard.mayHandOut(tx, { kind, id })) return true;
    this.#issue({
      severity: "Error",
      entity: kind === "Role" ? "RoleAssignment" : "GroupMembership",
      key: email,
      message: `The ${kind.toLowerCase()} ${
        JSON.stringify(sourceKey)
      } grants permissions beyond the importer's; it was not assigned.`,
    });
    return false;
  }

  async #client(tx: Storage, client: ImportedClient): Promise<void> {
    const counts = this.report.clients;
    counts.total++;
    const clientId = client.clientId.trim();
    if (clientId === "" || clientId.length > 200) {
      counts.skipped++;
      this.#issue({
        severity: "Error",
        entity: "Client",
        key: client.clientId,
        message: "The client id is empty or longer than 200 characters.",
      });
      return;
    }
    const existing = await tx.clients.getByClientId(this.realmId, clientId);
    const confidential = client.clientType === "confidential";
    let secret: Pick<ClientFields, "secretHash" | "secretAlgorithm" | "secretResetRequired">;
    let secretChanged = false;
    if (!confidential) {
      secret = { secretHash: null, secretAlgorithm: null, secretResetRequired: false };
    } else if (client.secret.kind === "generate") {
      const plaintext = randomToken(this.deps.random, CLIENT_SECRET_BYTES);
      const hashed = await this.deps.hashSecret(plaintext);
      secret = { secretHash: hashed.hash, secretAlgorithm: hashed.algorithm, secretResetRequired: true };
      this.report.generatedClientSecrets[clientId] = plaintext;
      secretChanged = true;
    } else if (client.secret.kind === "rehash") {
      const plaintext = client.secret.plaintext;
      if (existing?.secretHash && existing.secretAlgorithm && await this.#matches(plaintext, existing)) {
        secret = { secretHash: existing.secretHash, secretAlgorithm: existing.secretAlgorithm };
      } else {
        const hashed = await this.deps.hashSecret(plaintext);
        secret = { secretHash: hashed.hash, secretAlgorithm: hashed.algorithm, secretResetRequired: false };
        secretChanged = true;
      }
    } else {
      secret = {};
      if (!existing?.secretHash) {
        this.#issue({
          severity: "Warning",
          entity: "Client",
          key: clientId,
          message: "The confidential client has no secret in the export; set one before it can authenticate.",
        });
      }
    }
    const fields: ClientFields = {
      clientType: client.clientType,
      redirectUris: client.redirectUris,
      postLogoutRedirectUris: client.postLogoutRedirectUris,
      allowedScopes: client.allowedScopes,
      requireConsent: client.requireConsent,
      suspended: client.suspended,
      ...secret,
    };
    if (existing !== null && !secretChanged && sameClient(existing, fields)) {
      counts.skipped++;
      return;
    }
    const { created } = await tx.clients.upsert(this.realmId, clientId, fields);
    if (created) counts.created++;
    else counts.updated++;
  }

  async #matches(plaintext: string, existing: ClientRecord): Promise<boolean> {
    try {
      return await this.deps.verifySecret(plaintext, {
        algorithm: existing.secretAlgorithm!,
        hash: existing.secretHash!,
      });
    } catch {
      return false;
    }
  }
}

function sameClient(existing: ClientRecord, fields: ClientFields): boolean {
  const list = (a: readonly string[] | undefined, b: readonly string[]) =>
    a === undefined || canonicalJson(a) === canonicalJson(b);
  return existing.clientType === fields.clientType &&
    list(fields.redirectUris, existing.redirectUris) &&
    list(fields.postLogoutRedirectUris, existing.postLogoutRedirectUris) &&
    list(fields.allowedScopes, existing.allowedScopes) &&
    (fields.requireConsent === undefined || fields.requireConsent === existing.requireConsent) &&
    (fields.suspended === undefined || fields.suspended === existing.suspended) &&
    (fields.secretHash === undefined || fields.secretHash === existing.secretHash) &&
    (fields.secretResetRequired === undefined || fields.secretResetRequired === existing.secretResetRequired);
}

/** Client-secret hashing through the password service (argon2id with the configured parameters). */
export function secretsOf(passwords: {
  hash(plaintext: string): Promise<HashedSecret>;
  verify(stored: HashedSecret, plaintext: string): Promise<{ valid: boolean }>;
  readonly ceilings?: PasswordCostCeilings;
}): Pick<ImportEngineDeps, "hashSecret" | "verifySecret" | "hashCeilings"> {
  return {
    hashCeilings: passwords.ceilings,
    hashSecret: (plaintext) => passwords.hash(plaintext),
    verifySecret: async (plaintext, stored) => (await passwords.verify(stored, plaintext)).valid,
  };
}
