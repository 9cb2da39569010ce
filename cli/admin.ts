/**
 * `svc admin create [--email EMAIL] [--name NAME] [--password-stdin] [--realm REALM]`: the first
 * administrator of a realm (default: the default realm) from the terminal, on the configured
 * storage directly, with the rules of the setup link (core/accounts/first-admin.ts): refused
 * when the realm has an administrator, password per the password policy, one audit entry (actor
 * kind `System`, actor id `svc:cli`). What the flags do not give is asked for; the password is
 * never taken from a flag (shell history, process lists): it is typed (not echoed) or read from
 * stdin with `--password-stdin`.
 *
 * On the embedded store the command needs the data folder's lock: with a server running, use the
 * setup link it printed (or stop it).
 *
 * Exit codes: 0 created, 1 refused or failed, 2 usage.
 *
 * @module
 */
import * as v from "valibot";
import { EmailAddressSchema } from "../core/accounts/email.ts";
import { createFirstAdmin } from "../core/accounts/first-admin.ts";
import { systemClock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { SvcError } from "../core/errors.ts";
import { ensureDefaultRealm } from "../core/definitions/sync.ts";
import { isUuid } from "../core/ids.ts";
import { argon2idParamsFromConfig } from "../core/passwords/argon2-params.ts";
import { passwordCostCeilingsFromConfig } from "../core/passwords/cost.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import { PasswordService } from "../core/passwords/service.ts";
import { cryptoRandom } from "../core/random.ts";
import { type EmbeddedStoreFilesSource, openDatabase } from "../storage/open.ts";
import { createSqlSetupTokenStore } from "../storage/sql/setup-tokens.ts";
import { createSqlStorage } from "../storage/storage.ts";
import { CLI_ACTOR_ID } from "./break-glass.ts";

/** The usage lines of the admin command. */
export const ADMIN_USAGE = [
  "  admin create [--email EMAIL] [--name NAME] [--password-stdin] [--realm REALM]",
  "                   create the first administrator (asks for what is missing; password never as a flag)",
];

const USAGE_LINE = "usage: svc admin create [--email EMAIL] [--name NAME] [--password-stdin] [--realm REALM]";

/** Parsed arguments of `svc admin …`. */
export interface AdminArgs {
  email?: string;
  name?: string;
  realm?: string;
  passwordStdin: boolean;
}

/** Parses `svc admin create …`; null for a usage error. */
export function parseAdminArgs(args: readonly string[]): AdminArgs | null {
  const [sub, ...rest] = args;
  if (sub !== "create") return null;
  const parsed: AdminArgs = { passwordStdin: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === "--password-stdin") {
      parsed.passwordStdin = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const [name, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, rest[++i]];
    const key = ({ "--email": "email", "--name": "name", "--realm": "realm" } as const)[name];
    if (key === undefined || value === undefined || value === "" || parsed[key] !== undefined) return null;
    parsed[key] = value;
  }
  return parsed;
}

/** What the command needs from the runtime. */
export interface AdminIo {
  print(line: string): void;
  printError(line: string): void;
  /** Asks one line (a secret is not echoed); null when stdin ended. Absent: nothing can be asked. */
  readLine?(question: string, options?: { secret?: boolean }): Promise<string | null>;
  embeddedStoreFiles?: EmbeddedStoreFilesSource;
}

/** Runs `svc admin …` against the configured storage. */
export async function adminCommand(args: string[], config: SvcConfig, io: AdminIo): Promise<number> {
  const parsed = parseAdminArgs(args);
  if (parsed === null) {
    io.printError(USAGE_LINE);
    return 2;
  }
  const ask = async (question: string, secret = false): Promise<string | null> =>
    io.readLine ? (await io.readLine(question, { secret }))?.trim() || null : null;
  const emailText = parsed.email ?? await ask("Email of the administrator: ");
  if (emailText === null) {
    io.printError("admin: no email; pass --email EMAIL");
    return 2;
  }
  const email = v.safeParse(EmailAddressSchema, emailText);
  if (!email.success) {
    io.printError(`admin: ${email.issues[0].message}`);
    return 1;
  }
  const password = await ask(
    parsed.passwordStdin ? "" : "Password (at least 8 characters, not shown): ",
    !parsed.passwordStdin,
  );
  if (password === null) {
    io.printError("admin: no password; type it when asked, or pipe it with --password-stdin");
    return 2;
  }
  const database = await openDatabase(config.storage, io.embeddedStoreFiles);
  const passwords = new PasswordService({
    hasher: createPasswordHasher({ workers: 0 }),
    params: argon2idParamsFromConfig(config.password),
    ceilings: passwordCostCeilingsFromConfig(config.password),
  });
  try {
    await database.ensureSchema();
    const deps = { clock: systemClock, random: cryptoRandom };
    const storage = createSqlStorage(database, deps);
    // Before the first `svc start`, the default realm is created here (as start would).
    const realm = parsed.realm === undefined
      ? await ensureDefaultRealm({ realms: storage.realms, storage })
      : isUuid(parsed.realm)
      ? await storage.realms.get(parsed.realm)
      : await storage.realms.getByName(parsed.realm);
    if (realm === null) {
      io.printError(`admin: no realm ${JSON.stringify(parsed.realm)}`);
      return 1;
    }
    const admin = await createFirstAdmin({
      storage,
      passwords,
      setupTokens: (s) => createSqlSetupTokenStore(s.pluginSql),
      ...deps,
    }, {
      realmId: realm.id,
      token: null,
      email: email.output,
      password,
      displayName: parsed.name ?? null,
      actor: { id: CLI_ACTOR_ID, kind: "System" },
    });
    io.print(`admin: administrator ${admin.email} (user ${admin.userId}) created in realm ${realm.name}`);
    io.print("admin: sign in to the console with this email and password; add a passkey under My passkeys");
    return 0;
  } catch (err) {
    if (err instanceof SvcError) {
      io.printError(`admin: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await passwords.close();
    await database.close();
  }
}
