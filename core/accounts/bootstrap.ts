/**
 * The bootstrap administrator (issue 5 item 6): with `SVC_BOOTSTRAP_ADMIN_EMAIL` and
 * `SVC_BOOTSTRAP_ADMIN_PASSWORD` set, boot makes sure the default realm has
 *
 * - the realm-level role `svc-admin` with the grant `svc:*:*` (every `svc:` permission),
 * - a user with that email (address verified), holding the role realm-wide,
 * - a password for that user, set only when the user has none: a password changed later
 *   (reset, rotation) is never overwritten by a restart.
 *
 * Every step is "create unless present", and a lost creation race (another instance booting at
 * the same time) re-reads the winner, so any number of restarts and concurrent instances end
 * with one user, one role, one grant, one assignment and one password.
 *
 * Each step that changes something is an admin mutation: it appends its entry to the realm's
 * audit chain in the same transaction, with actor kind `System` and actor id
 * {@link BOOTSTRAP_ACTOR_ID} (`role.create`, `role.grant.add`, `user.create`, `role.assign`,
 * `user.password.set`; never the password). A step that finds its work done appends nothing.
 *
 * @module
 */
import { type AuditActor, runAdminMutation } from "../audit/mutation.ts";
import { ConflictError } from "../errors.ts";
import { assertChoosablePassword } from "./password-policy.ts";
import type { PasswordService } from "../passwords/service.ts";
import type { Role } from "../storage/roles.ts";
import type { User } from "../storage/users.ts";
import type { Storage } from "../storage/storage.ts";

/** The key of the bootstrap administrators' role. */
export const SVC_ADMIN_ROLE_KEY = "svc-admin";
/** The grant of that role: every `svc:` permission, in every scope. */
export const SVC_ADMIN_PATTERN = "svc:*:*";
/** The actor id of the bootstrap's audit entries (actor kind `System`). */
export const BOOTSTRAP_ACTOR_ID = "svc:bootstrap";

const ACTOR: AuditActor = { id: BOOTSTRAP_ACTOR_ID, kind: "System" };

/** What the bootstrap did. */
export interface BootstrapReport {
  /** The bootstrap administrator's user id (found or created). */
  readonly userId: string;
  /** The id of the realm-level `svc-admin` role (found or created). */
  readonly roleId: string;
  /** Whether this run created the user (false when one with the email existed). */
  readonly userCreated: boolean;
  /** Whether this run created the `svc-admin` role. */
  readonly roleCreated: boolean;
  /** Whether this run added the `svc:*:*` grant to the role. */
  readonly grantAdded: boolean;
  /** Whether this run assigned the role to the user realm-wide. */
  readonly assignmentCreated: boolean;
  /** Whether this run set the user's password (false when the user already had one). */
  readonly passwordSet: boolean;
}

/**
 * Ensures the bootstrap administrator of `realmId`. Throws `ValidationError` (field
 * `password`), before changing anything, when the password does not follow the password policy.
 */
export async function bootstrapAdmin(
  deps: { storage: Storage; passwords: PasswordService },
  input: { realmId: string; email: string; password: string },
): Promise<BootstrapReport> {
  const { storage, passwords } = deps;
  assertChoosablePassword(input.password);
  const { role, created: roleCreated } = await ensureSvcAdminRole(storage, input.realmId);
  let grantAdded = false;
  if (await storage.roles.findGrantByLogicalIdentity(role.id, SVC_ADMIN_PATTERN, "Allow", null) === null) {
    grantAdded = await created(() =>
      audited(storage, input.realmId, async (tx) => {
        await tx.roles.addGrant(role.id, { pattern: SVC_ADMIN_PATTERN, effect: "Allow" });
        return {
          action: "role.grant.add",
          target: role.id,
          after: { roleKey: SVC_ADMIN_ROLE_KEY, pattern: SVC_ADMIN_PATTERN, effect: "Allow" },
        };
      })
    );
  }
  const { user, created: userCreated } = await ensureUser(storage, input.realmId, input.email);
  const assignments = await storage.roles.listAssignmentsForPrincipal("User", user.id, { orgId: null });
  let assignmentCreated = false;
  if (!assignments.some((a) => a.roleId === role.id && a.orgId === null)) {
    assignmentCreated = await created(() =>
      audited(storage, input.realmId, async (tx) => {
        await tx.roles.assign({ roleId: role.id, principalKind: "User", principalId: user.id, orgId: null });
        return {
          action: "role.assign",
          target: user.id,
          after: { roleId: role.id, roleKey: SVC_ADMIN_ROLE_KEY, principalKind: "User", orgId: null },
        };
      })
    );
  }
  let passwordSet = false;
  if (await storage.passwordCredentials.get(user.id) === null) {
    const hash = await passwords.hash(input.password);
    // Conditional on still having none: a concurrent instance (same password) or a reset wins.
    passwordSet = await runAdminMutation({ storage }, input.realmId, ACTOR, async ({ tx }) => {
      if (await tx.passwordCredentials.get(user.id) !== null) return { value: false, audit: null };
      const { created } = await tx.passwordCredentials.upsert(user.id, hash);
      return {
        value: created,
        audit: created
          ? { action: "user.password.set", target: user.id, after: { source: "bootstrap" } }
          : null,
      };
    }).then(({ value }) => value, (error) => {
      if (error instanceof ConflictError) return false;
      throw error;
    });
  }
  return {
    userId: user.id,
    roleId: role.id,
    userCreated,
    roleCreated,
    grantAdded,
    assignmentCreated,
    passwordSet,
  };
}

/**
 * Ensures the realm-level `svc-admin` role (grant `svc:*:*`) of `realmId`, creating it (audited as
 * `actor`, the bootstrap by default) unless present; a lost creation race re-reads the winner.
 */
export async function ensureSvcAdminRole(
  storage: Storage,
  realmId: string,
  actor: AuditActor = ACTOR,
): Promise<{ role: Role; created: boolean }> {
  const existing = await storage.roles.getByKey(realmId, SVC_ADMIN_ROLE_KEY, null);
  if (existing !== null) return { role: existing, created: false };
  try {
    const { value: role } = await runAdminMutation({ storage }, realmId, actor, async ({ tx }) => {
      const { role } = await tx.roles.createWithGrants(
        { realmId, orgId: null, key: SVC_ADMIN_ROLE_KEY, displayName: "svc administrator" },
        [{ pattern: SVC_ADMIN_PATTERN, effect: "Allow" }],
      );
      return {
        value: role,
        audit: {
          action: "role.create",
          target: role.id,
          after: {
            key: role.key,
            displayName: role.displayName,
            orgId: null,
            grants: [{ pattern: SVC_ADMIN_PATTERN, effect: "Allow" }],
          },
        },
      };
    });
    return { role, created: true };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const winner = await storage.roles.getByKey(realmId, SVC_ADMIN_ROLE_KEY, null);
    if (winner === null) throw error;
    return { role: winner, created: false };
  }
}

async function ensureUser(
  storage: Storage,
  realmId: string,
  email: string,
): Promise<{ user: User; created: boolean }> {
  const existing = await storage.users.findByEmail(realmId, email);
  if (existing !== null) return { user: existing, created: false };
  try {
    const { value: user } = await runAdminMutation({ storage }, realmId, ACTOR, async ({ tx }) => {
      const user = await tx.users.create({
        realmId,
        email,
        displayName: "Administrator",
        emailVerified: true,
      });
      return {
        value: user,
        audit: {
          action: "user.create",
          target: user.id,
          after: { email: user.email, displayName: user.displayName, emailVerified: user.emailVerified },
        },
      };
    });
    return { user, created: true };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const winner = await storage.users.findByEmail(realmId, email);
    if (winner === null) throw error;
    return { user: winner, created: false };
  }
}

/** Runs one audited change of the bootstrap in its own transaction. */
async function audited(
  storage: Storage,
  realmId: string,
  change: (tx: Storage) => Promise<{ action: string; target: string; after: unknown }>,
): Promise<void> {
  await runAdminMutation({ storage }, realmId, ACTOR, async ({ tx }) => ({
    value: null,
    audit: await change(tx),
  }));
}

/** Runs a create; false when it lost to a concurrent one (ConflictError). */
async function created(create: () => Promise<unknown>): Promise<boolean> {
  try {
    await create();
    return true;
  } catch (error) {
    if (error instanceof ConflictError) return false;
    throw error;
  }
}
