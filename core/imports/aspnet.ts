/**
 * The identity-framework (ASP.NET Core Identity) importer, over the EF Core default tables
 * `AspNetUsers`, `AspNetRoles`, `AspNetUserRoles` and `AspNetUserClaims` (dotnet/aspnetcore
 * `IdentityUser.cs`, `IdentityUserContext.cs`), read from a JSON or CSV export of those tables or
 * straight from a database (`storage/imports/aspnet-postgres.ts`).
 *
 * Users by email; `PasswordHash` carried over verbatim under `framework-identity-v3` (V2 and V3
 * payloads; a malformed one is a Warning and the user is password-less); an active lockout
 * (`LockoutEnd` in the future) becomes Suspended; roles become realm roles `imported:<name>`;
 * claims go into the user's ABAC attribute bag (a claim type with several values becomes a list).
 *
 * @module
 */
import { FRAMEWORK_IDENTITY_V3_TAG, parseAspNetIdentityHash } from "../passwords/aspnet-identity.ts";
import { parseCsvTable } from "./csv.ts";
import type { ImportItem } from "./model.ts";
import { flag, isObject, issueItem, looseKey, parseJson, text } from "./source.ts";

/** One row of an Identity table, by column name. */
export type AspNetRow = Readonly<Record<string, unknown>>;

/** The Identity tables an import reads. Only `users` is required. */
export interface AspNetTables {
  /** `AspNetUsers` rows, possibly streamed (from a database); required. */
  readonly users: AsyncIterable<AspNetRow> | Iterable<AspNetRow>;
  /** `AspNetRoles` rows; each named role becomes the realm role `imported:<Name>`. */
  readonly roles?: Iterable<AspNetRow>;
  /** `AspNetUserRoles` rows linking `UserId` to `RoleId`. */
  readonly userRoles?: Iterable<AspNetRow>;
  /** `AspNetUserClaims` rows, gathered into each user's attribute bag. */
  readonly userClaims?: Iterable<AspNetRow>;
}

/** The table names of the EF Core default schema. */
export const ASPNET_TABLES = {
  users: "AspNetUsers",
  roles: "AspNetRoles",
  userRoles: "AspNetUserRoles",
  userClaims: "AspNetUserClaims",
} as const;

/** The import items of the Identity tables; `now` decides which lockouts are active. */
export async function* aspnetItems(tables: AspNetTables, now: Date): AsyncGenerator<ImportItem> {
  const roleNames = new Map<string, string>();
  for (const role of tables.roles ?? []) {
    const name = text(role.Name).trim();
    if (name === "") {
      yield issueItem("Error", "Role", text(role.Id, "?"), "The role has no Name.");
      continue;
    }
    roleNames.set(String(role.Id), name);
    yield { kind: "role", role: { key: name, displayName: name } };
  }
  const rolesOf = new Map<string, string[]>();
  for (const link of tables.userRoles ?? []) {
    const name = roleNames.get(String(link.RoleId));
    if (name === undefined) {
      yield issueItem(
        "Warning",
        "RoleAssignment",
        String(link.UserId),
        "The assignment names an unknown RoleId.",
      );
      continue;
    }
    const list = rolesOf.get(String(link.UserId)) ?? [];
    list.push(name);
    rolesOf.set(String(link.UserId), list);
  }
  const claimsOf = new Map<string, Record<string, unknown>>();
  for (const claim of tables.userClaims ?? []) {
    const type = text(claim.ClaimType);
    if (type === "") continue;
    const bag = claimsOf.get(String(claim.UserId)) ?? {};
    const value = claim.ClaimValue ?? null;
    const had = bag[type];
    bag[type] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
    claimsOf.set(String(claim.UserId), bag);
  }
  for await (const user of tables.users) {
    const id = String(user.Id ?? "");
    const email = text(user.Email).trim();
    if (email === "") {
      yield issueItem(
        "Error",
        "User",
        text(user.UserName) || id || "?",
        "The user has no Email (the natural key); it was not imported.",
      );
      continue;
    }
    const hash = text(user.PasswordHash);
    let credential = null;
    if (hash !== "") {
      if (parseAspNetIdentityHash(hash) !== null) credential = { algorithm: FRAMEWORK_IDENTITY_V3_TAG, hash };
      else {
        yield issueItem(
          "Warning",
          "Credential",
          email,
          "The PasswordHash is not an ASP.NET Identity V2 or V3 hash; the user is password-less.",
        );
      }
    }
    const lockoutEnd = lockoutEndOf(user.LockoutEnd);
    const userName = text(user.UserName).trim();
    yield {
      kind: "user",
      user: {
        email,
        displayName: userName !== "" && userName.toLowerCase() !== email.toLowerCase() ? userName : null,
        emailVerified: flag(user.EmailConfirmed),
        suspended: lockoutEnd !== null && lockoutEnd.getTime() > now.getTime(),
        credential,
        roleKeys: rolesOf.get(id) ?? [],
        groupKeys: [],
        attributes: claimsOf.get(id) ?? {},
      },
    };
  }
}

function lockoutEndOf(value: unknown): Date | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value !== "string" || value.trim() === "") return null;
  const date = new Date(value.trim().replace(/^(\d{4}-\d\d-\d\d) /, "$1T"));
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * The Identity tables of a JSON export: an object with the table names as keys (`AspNetUsers`…,
 * any casing) and arrays of rows, or a bare array of `AspNetUsers` rows. Null with a message when
 * the document is not one.
 */
export function aspnetTablesFromJson(source: string): { tables: AspNetTables } | { error: string } {
  const parsed = parseJson(source);
  if (!parsed.ok) return { error: `The document is not JSON: ${parsed.message}` };
  if (Array.isArray(parsed.value)) return { tables: { users: parsed.value.filter(isObject) } };
  if (!isObject(parsed.value)) return { error: "The document is not an object of Identity tables." };
  const byName = new Map(Object.entries(parsed.value).map(([k, v]) => [looseKey(k), v]));
  const rows = (name: string) => {
    const value = byName.get(looseKey(name));
    return Array.isArray(value) ? value.filter(isObject) : undefined;
  };
  const users = rows(ASPNET_TABLES.users);
  if (users === undefined) return { error: "The document has no AspNetUsers array." };
  return {
    tables: {
      users,
      roles: rows(ASPNET_TABLES.roles),
      userRoles: rows(ASPNET_TABLES.userRoles),
      userClaims: rows(ASPNET_TABLES.userClaims),
    },
  };
}

/** The Identity tables of CSV exports (header rows with the column names), by table. */
export function aspnetTablesFromCsv(files: {
  users: string;
  roles?: string;
  userRoles?: string;
  userClaims?: string;
}): AspNetTables {
  return {
    users: parseCsvTable(files.users),
    roles: files.roles === undefined ? undefined : parseCsvTable(files.roles),
    userRoles: files.userRoles === undefined ? undefined : parseCsvTable(files.userRoles),
    userClaims: files.userClaims === undefined ? undefined : parseCsvTable(files.userClaims),
  };
}
