/**
 * `svc import <aspnet|keycloak|auth0|clients> <file-or-url> --realm <id|name> [--dry-run] [--json]`:
 * one import (spec 2.11), with a progress line on a terminal and the ImportReport as a table (or
 * JSON with `--json`).
 *
 * Sources: `auth0` an NDJSON file (streamed); `keycloak` a realm export file or a directory export
 * (every `*.json` in it); `aspnet` a JSON export of the Identity tables, a CSV of `AspNetUsers`, a
 * directory of `AspNetUsers.csv`, `AspNetRoles.csv`, `AspNetUserRoles.csv`, `AspNetUserClaims.csv`,
 * or a `postgres://` URL of the Identity database itself; `clients` a JSON array of clients.
 *
 * The CLI writes to the database directly (audit actor `System` `svc:cli`) unless a running
 * server holds the embedded store; then it sends the export to that server
 * (`POST /svc-admin/imports/{kind}` at `SVC_BASE_URL`, bearer `SVC_ADMIN_TOKEN`), which
 * takes files only (not a database URL); a realm name is looked up there.
 *
 * Exit codes: 0 done (issues or not), 1 failure, 2 usage.
 *
 * @module
 */
import { runAdminMutation } from "../core/audit/mutation.ts";
import { systemClock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { SvcError } from "../core/errors.ts";
import { isUuid } from "../core/ids.ts";
import {
  aspnetItems,
  type AspNetTables,
  aspnetTablesFromCsv,
  aspnetTablesFromJson,
} from "../core/imports/aspnet.ts";
import { auth0Items } from "../core/imports/auth0.ts";
import { clientConfigItems } from "../core/imports/client-config.ts";
import { runImport, secretsOf } from "../core/imports/engine.ts";
import type { JsonLimits } from "../core/json-limits.ts";
import { keycloakItems } from "../core/imports/keycloak.ts";
import { decodeUtf8 } from "../core/imports/lines.ts";
import { COUNTED_ENTITIES, type ImportItem, type ImportReport } from "../core/imports/model.ts";
import { issueItem, parseJson } from "../core/imports/source.ts";
import { argon2idParamsFromConfig } from "../core/passwords/argon2-params.ts";
import { passwordCostCeilingsFromConfig } from "../core/passwords/cost.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import { PasswordService } from "../core/passwords/service.ts";
import { cryptoRandom } from "../core/random.ts";
import { IMPORT_KINDS, type ImportKind, reportSummary } from "../http/admin/imports.ts";
import { type EmbeddedStoreFilesSource, openDatabase } from "../storage/open.ts";
import { createSqlStorage } from "../storage/storage.ts";
import { CLI_ACTOR_ID } from "./break-glass.ts";
import { publicRoot } from "../core/net/public-url.ts";

/** The usage lines of the import command. */
export const IMPORT_USAGE = [
  "  import KIND FILE|URL --realm REALM [--dry-run] [--json]",
  "                   import users, hashes, roles, groups, clients (KIND: aspnet, keycloak, auth0, clients)",
];

/** The usage error line. */
export const IMPORT_USAGE_LINE =
  "usage: svc import <aspnet|keycloak|auth0|clients> <file-or-url> --realm <id|name> [--dry-run] [--json]";

/** Files as `svc import` reads them (runtime adapters provide them). */
export interface ImportFiles {
  /** The bytes of a file, as a stream. */
  openFile(path: string): AsyncIterable<Uint8Array>;
  /** The names of the entries of a directory, or null when `path` is not a directory. */
  listDirectory(path: string): Promise<string[] | null>;
}

/** What the import command needs from the runtime. */
export interface ImportIo {
  readTextFile(path: string): Promise<string>;
  importFiles?: ImportFiles;
  /** Redraws a progress line on a terminal (absent or a no-op elsewhere). */
  progress?(line: string): void;
  print(line: string): void;
  printError(line: string): void;
  env(): Record<string, string | undefined>;
  /** PGlite's files and the prepared cluster, when the runtime has them. */
  embeddedStoreFiles?: EmbeddedStoreFilesSource;
}

/** Parsed arguments. */
export interface ImportArgs {
  readonly kind: ImportKind;
  readonly source: string;
  readonly realm: string;
  readonly dryRun: boolean;
  readonly json: boolean;
}

/** Parses the arguments; null for a usage error. */
export function parseImportArgs(args: readonly string[]): ImportArgs | null {
  const positional: string[] = [];
  let realm: string | undefined;
  let dryRun = false;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--dry-run") dryRun = true;
    else if (arg === "--json") json = true;
    else if (arg === "--realm" || arg.startsWith("--realm=")) {
      const value = arg === "--realm" ? args[++i] : arg.slice("--realm=".length);
      if (value === undefined || value === "" || realm !== undefined) return null;
      realm = value;
    } else if (arg.startsWith("--")) return null;
    else positional.push(arg);
  }
  const [kind, source] = positional;
  if (positional.length !== 2 || realm === undefined) return null;
  if (!(IMPORT_KINDS as readonly string[]).includes(kind)) return null;
  return { kind: kind as ImportKind, source, realm, dryRun, json };
}

/** The report as table lines. */
export function reportTable(report: ImportReport): string[] {
  const rows = [["", "created", "updated", "skipped", "total"]];
  for (const entity of COUNTED_ENTITIES) {
    const c = report[entity];
    rows.push([entity, String(c.created), String(c.updated), String(c.skipped), String(c.total)]);
  }
  const widths = rows[0].map((_, col) => Math.max(...rows.map((r) => r[col].length)));
  const lines = rows.map((r) =>
    r.map((cell, col) => col === 0 ? cell.padEnd(widths[col]) : cell.padStart(widths[col])).join("  ")
  );
  if (report.dryRun) lines.unshift("dry run: nothing was written");
  for (const issue of report.issues) {
    lines.push(`${issue.severity} ${issue.entity} ${issue.key}: ${issue.message}`);
  }
  for (const [clientId, secret] of Object.entries(report.generatedClientSecrets)) {
    lines.push(`client ${clientId} secret (shown once): ${secret}`);
  }
  return lines;
}

function printReport(report: ImportReport, args: ImportArgs, io: ImportIo): void {
  if (args.json) io.print(JSON.stringify(report, null, 2));
  else for (const line of reportTable(report)) io.print(line);
}

function joinPath(dir: string, name: string): string {
  return dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

async function textOf(io: ImportIo, path: string): Promise<string> {
  return await io.readTextFile(path);
}

/** The items of the source, and what to close after the import. */
async function itemsOfSource(
  args: ImportArgs,
  io: ImportIo,
  jsonLimits: JsonLimits,
): Promise<{ items: AsyncIterable<ImportItem> | Iterable<ImportItem>; close?: () => Promise<void> }> {
  const now = new Date(systemClock.now());
  const entries = io.importFiles ? await io.importFiles.listDirectory(args.source) : null;
  switch (args.kind) {
    case "auth0":
      return {
        items: auth0Items(
          io.importFiles ? decodeUtf8(io.importFiles.openFile(args.source)) : [await textOf(io, args.source)],
          jsonLimits,
        ),
      };
    case "clients":
      return { items: clientConfigItems(await textOf(io, args.source)) };
    case "keycloak": {
      const files = entries === null
        ? [args.source]
        : entries.filter((n) => n.endsWith(".json")).sort((a, b) =>
          realmFirst(a) - realmFirst(b) || a.localeCompare(b)
        )
          .map((n) => joinPath(args.source, n));
      const documents: unknown[] = [];
      const problems: ImportItem[] = [];
      for (const file of files) {
        const parsed = parseJson(await textOf(io, file));
        if (parsed.ok) documents.push(parsed.value);
        else problems.push(issueItem("Error", "Source", file, `The file is not JSON: ${parsed.message}`));
      }
      return { items: [...problems, ...keycloakItems(documents)] };
    }
    case "aspnet": {
      if (/^postgres(ql)?:\/\//.test(args.source)) {
        // Loaded here: postgres.js stays out of a server that never imports from a database.
        const { openAspNetDatabase } = await import("../storage/imports/aspnet-postgres.ts");
        const source = await openAspNetDatabase(args.source);
        return { items: aspnetItems(source.tables, now), close: source.close };
      }
      let tables: AspNetTables;
      if (entries !== null) {
        const read = async (table: string) => {
          const name = entries.find((n) => n.toLowerCase() === `${table.toLowerCase()}.csv`);
          return name === undefined ? undefined : await textOf(io, joinPath(args.source, name));
        };
        const users = await read("AspNetUsers");
        if (users === undefined) {
          throw new SvcError("invalid_request", "The directory has no AspNetUsers.csv.", 400);
        }
        tables = aspnetTablesFromCsv({
          users,
          roles: await read("AspNetRoles"),
          userRoles: await read("AspNetUserRoles"),
          userClaims: await read("AspNetUserClaims"),
        });
      } else if (args.source.toLowerCase().endsWith(".csv")) {
        tables = aspnetTablesFromCsv({ users: await textOf(io, args.source) });
      } else {
        const read = aspnetTablesFromJson(await textOf(io, args.source));
        if ("error" in read) return { items: [issueItem("Error", "Source", args.source, read.error)] };
        tables = read.tables;
      }
      return { items: aspnetItems(tables, now) };
    }
  }
}

function realmFirst(name: string): number {
  return name.endsWith("-realm.json") ? 0 : 1;
}

/** Runs the import on the configured storage, directly. */
export async function importCommand(args: ImportArgs, config: SvcConfig, io: ImportIo): Promise<number> {
  const database = await openDatabase(config.storage, io.embeddedStoreFiles);
  const passwords = new PasswordService({
    hasher: createPasswordHasher({ workers: 0 }),
    params: argon2idParamsFromConfig(config.password),
    ceilings: passwordCostCeilingsFromConfig(config.password),
  });
  let close: (() => Promise<void>) | undefined;
  try {
    await database.ensureSchema();
    const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
    const realm = isUuid(args.realm)
      ? await storage.realms.get(args.realm)
      : await storage.realms.getByName(args.realm);
    if (realm === null) {
      io.printError(`import: no realm ${JSON.stringify(args.realm)}`);
      return 1;
    }
    const jsonLimits = { maxDepth: config.server.maxJsonDepth, maxMembers: config.server.maxJsonMembers };
    const source = await itemsOfSource(args, io, jsonLimits);
    close = source.close;
    const report = await runImport(
      {
        storage,
        random: cryptoRandom,
        ...secretsOf(passwords),
        jsonLimits,
        onProgress: io.progress ? (n) => io.progress!(`import: ${n} item(s) applied`) : undefined,
      },
      { targetRealmId: realm.id, dryRun: args.dryRun },
      source.items,
    );
    io.progress?.("");
    if (!args.dryRun) {
      await runAdminMutation(
        { storage },
        realm.id,
        { id: CLI_ACTOR_ID, kind: "System" },
        () =>
          Promise.resolve({
            value: null,
            audit: {
              action: `import.${args.kind}`,
              target: realm.id,
              after: reportSummary(args.kind, report),
            },
          }),
      );
    }
    printReport(report, args, io);
    return 0;
  } catch (err) {
    if (err instanceof SvcError) {
      io.printError(`import: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await close?.();
    await passwords.close();
    await database.close();
  }
}

/**
 * Sends the export to the running server that holds the embedded store: `target` (the URL the
 * server's lock names and the token `SVC_ADMIN_TOKEN` or `svc login` gave), else `SVC_BASE_URL`
 * with `SVC_ADMIN_TOKEN`. A realm given by name is looked up on that server (`GET /svc-admin/realms`).
 */
export async function importViaServer(
  args: ImportArgs,
  config: SvcConfig,
  io: ImportIo,
  fetcher: typeof fetch = fetch,
  target?: { url: string; token: string | null },
): Promise<number> {
  const token = target ? target.token : io.env().SVC_ADMIN_TOKEN ?? null;
  const base = (target?.url ?? publicRoot(config.server)) + "/";
  if (!token) {
    io.printError(
      'import: a running svc holds the embedded store; set SVC_ADMIN_TOKEN (an administrator\'s token or API key), or run "svc login" once, to import through it, or stop the server',
    );
    return 1;
  }
  let realmId = args.realm;
  if (!isUuid(realmId)) {
    const res = await fetcher(new URL("svc-admin/realms?limit=200", base), {
      headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
    });
    if (!res.ok) {
      io.printError(`import: the server answered ${res.status} to the realm lookup; give the realm by id`);
      await res.body?.cancel();
      return 1;
    }
    const found = ((await res.json()) as { items?: { id: string; name: string }[] }).items?.find((r) =>
      r.name === args.realm
    );
    if (found === undefined) {
      io.printError(`import: no realm ${JSON.stringify(args.realm)} on the running server`);
      return 1;
    }
    realmId = found.id;
  }
  if (/^postgres(ql)?:\/\//.test(args.source)) {
    io.printError("import: the running server imports files only; stop it to import from a database URL");
    return 1;
  }
  const url = new URL(`svc-admin/imports/${args.kind}`, base);
  url.searchParams.set("realm", realmId);
  url.searchParams.set("dryRun", String(args.dryRun));
  const body = await io.readTextFile(args.source);
  const res = await fetcher(url, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": args.source.toLowerCase().endsWith(".csv") ? "text/csv" : "application/json",
    },
    body,
  });
  if (!res.ok) {
    io.printError(`import: the server answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
    return 1;
  }
  printReport(await res.json() as ImportReport, args, io);
  return 0;
}
