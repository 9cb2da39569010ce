/**
 * The storage half of `svc start`, before anything serves: the schema, the plugins' tables, the
 * declared permissions and roles, a primary signing key for every realm, and the bootstrap
 * administrator. Idempotent, and safe when several instances boot at once on one empty database
 * (each step either serializes on an advisory lock or tolerates another instance's insert).
 *
 * @module
 */
import { bootstrapAdmin, type BootstrapReport } from "../core/accounts/bootstrap.ts";
import type { Clock } from "../core/clock.ts";
import type { DefinitionPlan } from "../core/definitions/declarations.ts";
import { type DefinitionSyncReport, syncDefinitions } from "../core/definitions/sync.ts";
import type { JwsSigner } from "../core/keys/jws.ts";
import { KeyRing } from "../core/keys/ring.ts";
import type { PasswordService } from "../core/passwords/service.ts";
import type { RandomSource } from "../core/random.ts";
import { ensurePluginTables } from "../plugins/host.ts";
import type { SvcPlugin } from "../plugins/plugin.ts";
import { type SvcDatabase, withAdvisoryLock } from "../storage/open.ts";
import { LockClass } from "../storage/sql/advisory-locks.ts";
import { createSqlSigningKeyStore } from "../storage/sql/signing-keys.ts";
import { createSqlStorage, type Storage } from "../storage/storage.ts";

/** What {@link prepareStorage} needs besides the database. */
export interface PrepareStorageOptions {
  /** The declared permissions and roles. */
  readonly plan: DefinitionPlan;
  /** The enabled plugins (their tables). */
  readonly plugins: readonly SvcPlugin[];
  /** How long a retired signing key stays accepted, in milliseconds. */
  readonly signingKeyOverlapMs: number;
  /** The bootstrap administrator, or null. */
  readonly bootstrap: { readonly email: string; readonly password: string } | null;
  /** Hashes the bootstrap administrator's password; awaited only when there is one. */
  readonly passwords: () => Promise<PasswordService>;
  /** The key ring's faster RS256 signer (the runtime adapter's), if any. */
  readonly jwsSigner?: JwsSigner;
  /** The source of the current time. */
  readonly clock: Clock;
  /** The source of random bytes. */
  readonly random: RandomSource;
}

/** What {@link prepareStorage} made ready. */
export interface PreparedStorage {
  /** Every store over the database. */
  readonly storage: Storage;
  /** The realms' signing keys, each realm with a primary. */
  readonly keyRing: KeyRing;
  /** What the definitions' sync changed. */
  readonly definitions: DefinitionSyncReport;
  /** What the bootstrap administrator needed, or null without one. */
  readonly bootstrap: BootstrapReport | null;
}

/** A boot step that failed; `message` is the line `svc start` prints (it names the step). */
export class BootStepError extends Error {
  /** The failure of one step. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BootStepError";
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}

/** Runs the boot's storage steps in order; the first failure throws a {@link BootStepError}. */
export async function prepareStorage(
  database: SvcDatabase,
  options: PrepareStorageOptions,
): Promise<PreparedStorage> {
  const { clock, random } = options;
  try {
    await database.ensureSchema();
  } catch (err) {
    throw new BootStepError(`storage: cannot create the schema: ${firstLine(err)}`, { cause: err });
  }
  try {
    await ensurePluginTables(database.db, options.plugins);
  } catch (err) {
    throw new BootStepError(firstLine(err), { cause: err });
  }
  const storage = createSqlStorage(database, { clock, random });
  let definitions: DefinitionSyncReport;
  try {
    definitions = await syncDefinitions(options.plan, {
      catalog: storage.permissionCatalog,
      realms: storage.realms,
      roles: storage.roles,
      storage,
    });
  } catch (err) {
    throw new BootStepError(`definitions: sync failed: ${firstLine(err)}`, { cause: err });
  }
  const keyRing = new KeyRing({
    store: storage.signingKeys,
    clock,
    random,
    overlapMs: options.signingKeyOverlapMs,
    signer: options.jwsSigner,
  });
  try {
    const missing: string[] = [];
    for (const realm of await storage.realms.list()) {
      if (await storage.signingKeys.getPrimary(realm.id) === null) missing.push(realm.id);
    }
    if (missing.length > 0) {
      // One instance generates a realm's first key while the others wait, then find it.
      await withAdvisoryLock(database.db, LockClass.signingKeys, async (trx) => {
        const ring = new KeyRing({
          store: createSqlSigningKeyStore(trx, { clock, random }),
          clock,
          random,
          overlapMs: options.signingKeyOverlapMs,
        });
        for (const realmId of missing) await ring.ensurePrimary(realmId);
      });
    }
  } catch (err) {
    throw new BootStepError(
      `signing keys: cannot create or load the realms' primary keys: ${firstLine(err)}`,
      { cause: err },
    );
  }
  let bootstrap: BootstrapReport | null = null;
  if (options.bootstrap !== null) {
    try {
      const passwords = await options.passwords();
      const realm = await storage.realms.getDefault();
      if (realm === null) throw new Error("the default realm does not exist");
      bootstrap = await bootstrapAdmin({ storage, passwords }, {
        realmId: realm.id,
        email: options.bootstrap.email,
        password: options.bootstrap.password,
      });
    } catch (err) {
      throw new BootStepError(`login: cannot prepare password login: ${firstLine(err)}`, { cause: err });
    }
  }
  return { storage, keyRing, definitions, bootstrap };
}
