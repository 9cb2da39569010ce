/**
 * The first administrator of a realm (issue 27): on a store whose default realm has no
 * administrator, `svc start` prints a single-use setup link, and the console page it opens (or
 * `svc admin create` in a terminal) creates the first administrator with a password that follows
 * the password policy.
 *
 * - A realm "has an administrator" when its realm-level `svc-admin` role (grant `svc:*:*`, the
 *   role the bootstrap variables use too) is assigned to someone.
 * - A setup token is 32 random bytes (base64url); only its SHA-256 is stored, for
 *   {@link SETUP_TOKEN_TTL_MS}. Redeeming it consumes it with one `DELETE … RETURNING` inside the
 *   admin mutation (which holds the realm's audit lock and re-checks that no administrator
 *   exists), so of any number of concurrent redemptions exactly one creates an administrator;
 *   the others get {@link SetupLinkInvalidError}. Creating the administrator clears every other
 *   setup token of the realm.
 * - The token is checked (without consuming it) before the password is hashed, so a request with
 *   a wrong token costs one indexed lookup, not an Argon2id hash.
 * - One audit entry (`user.create`, after: the email, display name, the role key and how it was
 *   created), with actor kind `System` and actor id {@link SETUP_ACTOR_ID} or the CLI's.
 *
 * @module
 */
import { type AuditActor, runAdminMutation } from "../audit/mutation.ts";
import type { Clock } from "../clock.ts";
import { nowDate } from "../clock.ts";
import { sha256Hex } from "../digest.ts";
import { ConflictError, SvcError } from "../errors.ts";
import type { PasswordService } from "../passwords/service.ts";
import { type RandomSource, randomToken } from "../random.ts";
import type { SetupTokenStore } from "../storage/setup-tokens.ts";
import type { Storage } from "../storage/storage.ts";
import { ensureSvcAdminRole, SVC_ADMIN_ROLE_KEY } from "./bootstrap.ts";
import { assertChoosablePassword } from "./password-policy.ts";

/** How long a setup link works: 30 minutes (a new `svc start` prints a new one). */
export const SETUP_TOKEN_TTL_MS = 30 * 60 * 1000;
/** The actor id of the setup link's audit entry (actor kind `System`). */
export const SETUP_ACTOR_ID = "svc:setup";

/** The setup link is unknown, used or expired. Code `setup_link_invalid`, 410. */
export class SetupLinkInvalidError extends SvcError {
  constructor() {
    super(
      "setup_link_invalid",
      "This setup link was used or has expired. Restart svc for a new one, or run `svc admin create`.",
      410,
    );
    this.name = "SetupLinkInvalidError";
  }
}

/** The realm has an administrator already. Code `administrator_exists`, 409. */
export class AdministratorExistsError extends SvcError {
  constructor() {
    super("administrator_exists", "This realm has an administrator already; sign in to the console.", 409);
    this.name = "AdministratorExistsError";
  }
}

/** What the first-administrator functions need. */
export interface FirstAdminDeps {
  readonly storage: Storage;
  /** The setup tokens over a storage (the transaction's inside a mutation). */
  readonly setupTokens: (storage: Storage) => SetupTokenStore;
  readonly clock: Clock;
  readonly random: RandomSource;
}

/** Whether the realm's `svc-admin` role is assigned to anyone. */
export async function hasAdministrator(storage: Storage, realmId: string): Promise<boolean> {
  const role = await storage.roles.getByKey(realmId, SVC_ADMIN_ROLE_KEY, null);
  if (role === null) return false;
  return (await storage.roles.listAssignmentsOfRole(role.id)).length > 0;
}

/** Creates a setup token of the realm; the token itself is returned once and never stored. */
export async function issueSetupToken(
  deps: FirstAdminDeps,
  realmId: string,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomToken(deps.random, 32);
  const now = nowDate(deps.clock);
  const expiresAt = new Date(now.getTime() + SETUP_TOKEN_TTL_MS);
  await deps.setupTokens(deps.storage).insert(realmId, sha256Hex(token), expiresAt, now);
  return { token, expiresAt };
}

/** What creating the first administrator needs. */
export interface FirstAdminInput {
  readonly realmId: string;
  /** The setup link's token; null from the terminal (`svc admin create`, which owns the store). */
  readonly token: string | null;
  /** The normalized address. */
  readonly email: string;
  readonly password: string;
  readonly displayName?: string | null;
  /** Who is audited (default: {@link SETUP_ACTOR_ID}). */
  readonly actor?: AuditActor;
}

/** The created administrator. */
export interface FirstAdmin {
  readonly userId: string;
  readonly email: string;
  readonly roleId: string;
}

/**
 * Creates the realm's first administrator. Throws `ValidationError` (password policy),
 * {@link SetupLinkInvalidError} (token unknown, used, expired or of another realm),
 * {@link AdministratorExistsError}, or `ConflictError` (a user with that email exists).
 */
export async function createFirstAdmin(
  deps: FirstAdminDeps & { readonly passwords: PasswordService },
  input: FirstAdminInput,
): Promise<FirstAdmin> {
  const { storage, clock } = deps;
  assertChoosablePassword(input.password);
  const tokenHash = input.token === null ? null : sha256Hex(input.token);
  // Cheap checks first: a wrong token never costs a password hash.
  if (tokenHash !== null) {
    const realmId = await deps.setupTokens(storage).find(tokenHash, nowDate(clock));
    if (realmId !== input.realmId) throw new SetupLinkInvalidError();
  }
  if (await hasAdministrator(storage, input.realmId)) throw new AdministratorExistsError();
  const hash = await deps.passwords.hash(input.password);
  const actor = input.actor ?? { id: SETUP_ACTOR_ID, kind: "System" as const };
  const { role } = await ensureSvcAdminRole(storage, input.realmId, actor);
  const { value } = await runAdminMutation({ storage }, input.realmId, actor, async ({ tx }) => {
    const tokens = deps.setupTokens(tx);
    if (tokenHash !== null && await tokens.consume(tokenHash, nowDate(clock)) !== input.realmId) {
      throw new SetupLinkInvalidError();
    }
    // Under the realm's audit lock: a concurrent creation committed before this one is seen here.
    if (await hasAdministrator(tx, input.realmId)) throw new AdministratorExistsError();
    if (await tx.users.findByEmail(input.realmId, input.email) !== null) {
      throw new ConflictError("A user with this email exists already.", { field: "email" });
    }
    const user = await tx.users.create({
      realmId: input.realmId,
      email: input.email,
      displayName: input.displayName ?? "Administrator",
      emailVerified: true,
    });
    await tx.roles.assign({ roleId: role.id, principalKind: "User", principalId: user.id, orgId: null });
    await tx.passwordCredentials.upsert(user.id, hash);
    await tokens.clear(input.realmId);
    return {
      value: { userId: user.id, email: user.email, roleId: role.id },
      audit: {
        action: "user.create",
        target: user.id,
        after: {
          email: user.email,
          displayName: user.displayName,
          emailVerified: true,
          roleKey: SVC_ADMIN_ROLE_KEY,
          source: input.token === null ? "cli" : "setup_link",
        },
      },
    };
  });
  return value;
}
