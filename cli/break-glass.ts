/**
 * `svc break-glass create --realm REALM [--email EMAIL]` and `svc break-glass rotate --realm REALM`:
 * the break-glass account of a realm (by id or name), on the configured storage, directly (no
 * server needed: break-glass is for when the server or its administrators are out of reach).
 * Each prints the generated password once. Every change is audited with actor kind `System`
 * (actor id {@link CLI_ACTOR_ID}). A rotation ends the account's sessions; on Postgres it tells
 * running instances (the cache bus), so their tokens stop at once.
 *
 * On the embedded store the command needs the data folder's lock: `runCli` refuses with one line
 * when a running server holds it (rotate over HTTP, or stop the server).
 *
 * Exit codes: 0 done, 1 failure (unknown realm, an account exists or is missing), 2 usage.
 *
 * @module
 */
import { createBreakGlassAccount, rotateBreakGlassPassword } from "../core/break-glass/account.ts";
import type { AuditActor } from "../core/audit/mutation.ts";
import { systemClock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { SvcError } from "../core/errors.ts";
import { EventPublisher } from "../core/events/publisher.ts";
import { isUuid } from "../core/ids.ts";
import { argon2idParamsFromConfig } from "../core/passwords/argon2-params.ts";
import { passwordCostCeilingsFromConfig } from "../core/passwords/cost.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import { PasswordService } from "../core/passwords/service.ts";
import { cryptoRandom } from "../core/random.ts";
import { endedSessionRetainMs, EndedSessions } from "../core/sessions/ended.ts";
import { NotificationCacheBus } from "../core/snapshots/bus.ts";
import { type EmbeddedStoreFilesSource, openDatabase } from "../storage/open.ts";
import { createSqlStorage } from "../storage/storage.ts";

/** The usage lines of the break-glass command. */
export const BREAK_GLASS_USAGE = [
  "  break-glass create --realm REALM [--email EMAIL]",
  "                   create a realm's break-glass account (realm id or name); prints its password once",
  "  break-glass rotate --realm REALM",
  "                   rotate the break-glass password; prints the new one once",
];

/** The actor id of the CLI's audit entries (actor kind `System`). */
export const CLI_ACTOR_ID = "svc:cli";

const ACTOR: AuditActor = { id: CLI_ACTOR_ID, kind: "System" };

const USAGE_LINE =
  "usage: svc break-glass create --realm REALM [--email EMAIL] | svc break-glass rotate --realm REALM";

/** The line printed when a running server holds the embedded store's data folder. */
export function breakGlassLockedLine(subcommand: string, dataDir: string): string {
  return subcommand === "rotate"
    ? `break-glass: a running svc holds ${dataDir}; rotate over HTTP with POST /svc-admin/break-glass/rotate, or stop the server and run this again`
    : `break-glass: a running svc holds ${dataDir}; stop the server and run this again (POST /svc-admin/break-glass/rotate rotates an existing account)`;
}

/** Parsed arguments, or null for a usage error. */
export function parseBreakGlassArgs(
  args: readonly string[],
): { sub: "create" | "rotate"; realm: string; email?: string } | null {
  const [sub, ...rest] = args;
  if (sub !== "create" && sub !== "rotate") return null;
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const eq = arg.indexOf("=");
    const [name, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, rest[++i]];
    const allowed = sub === "create" ? ["--realm", "--email"] : ["--realm"];
    if (!allowed.includes(name) || value === undefined || value === "" || name.slice(2) in options) {
      return null;
    }
    options[name.slice(2)] = value;
  }
  if (options.realm === undefined) return null;
  return { sub, realm: options.realm, ...(options.email !== undefined ? { email: options.email } : {}) };
}

/** Runs `svc break-glass …` against the configured storage. */
export async function breakGlassCommand(
  args: string[],
  config: SvcConfig,
  io: {
    print(line: string): void;
    printError(line: string): void;
    embeddedStoreFiles?: EmbeddedStoreFilesSource;
  },
): Promise<number> {
  const parsed = parseBreakGlassArgs(args);
  if (parsed === null) {
    io.printError(USAGE_LINE);
    return 2;
  }
  const database = await openDatabase(config.storage, io.embeddedStoreFiles);
  // In this thread: one hash, no worker pool to start and stop.
  const passwords = new PasswordService({
    hasher: createPasswordHasher({ workers: 0 }),
    params: argon2idParamsFromConfig(config.password),
    ceilings: passwordCostCeilingsFromConfig(config.password),
  });
  try {
    await database.ensureSchema();
    const deps = { clock: systemClock, random: cryptoRandom };
    const storage = createSqlStorage(database, deps);
    const realm = isUuid(parsed.realm)
      ? await storage.realms.get(parsed.realm)
      : await storage.realms.getByName(parsed.realm);
    if (realm === null) {
      io.printError(`break-glass: no realm ${JSON.stringify(parsed.realm)}`);
      return 1;
    }
    const events = new EventPublisher({ storage, sink: { emit() {} }, ...deps });
    const core = { storage, passwords, events, ...deps };
    if (parsed.sub === "create") {
      const { account, password } = await createBreakGlassAccount(core, {
        realmId: realm.id,
        email: parsed.email,
        actor: ACTOR,
      });
      io.print(
        `break-glass: account ${account.email} (user ${account.userId}) created in realm ${realm.name}`,
      );
      io.print(`password: ${password}`);
      io.print("this password is shown once: keep it offline; drill it (POST /svc-admin/break-glass/drill)");
      return 0;
    }
    const rotated = await rotateBreakGlassPassword(core, { realmId: realm.id, actor: ACTOR });
    if (database.kind === "postgres" && rotated.ended.length > 0) {
      // Running instances on this database refuse the ended sessions' tokens at once.
      await new EndedSessions({
        clock: systemClock,
        retainMs: endedSessionRetainMs(config.tokens.accessTokenTtlSeconds),
        bus: new NotificationCacheBus(database.notifications),
      }).announce(rotated.ended);
    }
    io.print(
      `break-glass: password of ${rotated.account.email} in realm ${realm.name} rotated, ${rotated.ended.length} session(s) ended`,
    );
    io.print(`password: ${rotated.password}`);
    io.print("this password is shown once: keep it offline");
    return 0;
  } catch (err) {
    if (err instanceof SvcError) {
      io.printError(`break-glass: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await passwords.close();
    await database.close();
  }
}
