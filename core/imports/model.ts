/**
 * The migration types of spec 2.11: what an importer reads a source into (`ImportedUser`,
 * `ImportedRole`, `ImportedGroup`, `ImportedClient`), what a run takes (`ImportOptions`) and what
 * it answers (`ImportReport`, its `ImportIssue`s). Every importer turns its source into a stream
 * of {@link ImportItem}s; one engine (`engine.ts`) applies them.
 *
 * @module
 */
import { normalizeEmail } from "../accounts/email.ts";

/** How organizations of the source map onto svc: only `FlattenToRealm` (everything at realm level). */
export type OrgMapping = "FlattenToRealm";

/** The options of one import run (spec 2.11 ImportOptions). */
export interface ImportOptions {
  /** The realm the import writes into; never created by an import (404 when unknown). */
  readonly targetRealmId: string;
  /** Same matching and counts, nothing persisted. */
  readonly dryRun: boolean;
  /** Default `FlattenToRealm`. */
  readonly orgMapping?: OrgMapping;
}

/** `Info`: imported with a caveat; `Warning`: partially imported; `Error`: not imported. */
export type IssueSeverity = "Info" | "Warning" | "Error";

/** One thing worth telling about an imported item. */
export interface ImportIssue {
  /** How serious it is. */
  readonly severity: IssueSeverity;
  /** `User`, `Credential`, `Role`, `RoleAssignment`, `Group`, `GroupMembership`, `Client` or `Source`. */
  readonly entity: string;
  /** The item's natural key (an email, a role key, a client id, a line number…). */
  readonly key: string;
  /** What happened, for people. */
  readonly message: string;
}

/** Created / Updated / Skipped / Total of one kind of entity. */
export interface ImportCounts {
  /** Items created. */
  created: number;
  /** Existing items updated. */
  updated: number;
  /** Items left as they were (already present and unchanged, or refused). */
  skipped: number;
  /** Items read from the source. */
  total: number;
}

/** The entities an import counts. */
export const COUNTED_ENTITIES = [
  "users",
  "credentials",
  "roles",
  "roleAssignments",
  "groups",
  "groupMemberships",
  "clients",
] as const;

/** One of {@link COUNTED_ENTITIES}. */
export type CountedEntity = (typeof COUNTED_ENTITIES)[number];

/** The report of one import run (spec 2.11 ImportReport), camelCase on the wire. */
export interface ImportReport {
  /** Users. */
  users: ImportCounts;
  /** Password hashes. */
  credentials: ImportCounts;
  /** Roles. */
  roles: ImportCounts;
  /** Role assignments. */
  roleAssignments: ImportCounts;
  /** Groups. */
  groups: ImportCounts;
  /** Group memberships. */
  groupMemberships: ImportCounts;
  /** Clients. */
  clients: ImportCounts;
  /** Everything worth telling, item by item. */
  issues: ImportIssue[];
  /** Whether nothing was written (a rehearsal). */
  dryRun: boolean;
  /** Client id → plaintext secret: the only place the plaintext exists. */
  generatedClientSecrets: Record<string, string>;
}

/** An empty report. */
export function emptyReport(dryRun: boolean): ImportReport {
  const counts = (): ImportCounts => ({ created: 0, updated: 0, skipped: 0, total: 0 });
  return {
    users: counts(),
    credentials: counts(),
    roles: counts(),
    roleAssignments: counts(),
    groups: counts(),
    groupMemberships: counts(),
    clients: counts(),
    issues: [],
    dryRun,
    generatedClientSecrets: {},
  };
}

/** A password hash in its source's native text format under an svc algorithm tag. */
export interface ImportedCredential {
  /** An svc algorithm tag (`bcrypt`, `pbkdf2-sha256`, `framework-identity-v3`). */
  readonly algorithm: string;
  /** The hash in the source's own text format. */
  readonly hash: string;
}

/** A user of the source. */
export interface ImportedUser {
  /** Normalized by the engine (`normalizeEmail`): the realm-scoped natural key. */
  readonly email: string;
  /** The name people see, when the source has one. */
  readonly displayName?: string | null;
  /** Whether the source had verified the address. */
  readonly emailVerified: boolean;
  /** Whether the account was disabled in the source. */
  readonly suspended: boolean;
  /** Null: password-less. */
  readonly credential?: ImportedCredential | null;
  /** Source role keys (normalized and prefixed `imported:` by the engine). */
  readonly roleKeys: readonly string[];
  /** Source group keys (normalized by the engine). */
  readonly groupKeys: readonly string[];
  /** Merged into the user's ABAC bag; imported keys overwrite. */
  readonly attributes: Readonly<Record<string, unknown>>;
}

/** A role of the source. */
export interface ImportedRole {
  /** The source's role key. */
  readonly key: string;
  /** The name people see. */
  readonly displayName: string;
}

/** A group of the source. */
export type ImportedGroup = ImportedRole;

/** A client of the source (spec 2.11 ImportedClient). */
export interface ImportedClient {
  /** The client id, kept as it was. */
  readonly clientId: string;
  /** `confidential` or `public`. */
  readonly clientType: string;
  /** Allowed redirect URIs. */
  readonly redirectUris: readonly string[];
  /** Allowed post-logout redirect URIs. */
  readonly postLogoutRedirectUris: readonly string[];
  /** Scopes the client may ask for. */
  readonly allowedScopes: readonly string[];
  /** Whether users are asked to consent. */
  readonly requireConsent: boolean;
  /** Whether the client was disabled in the source. */
  readonly suspended: boolean;
  /**
   * What to do with the secret of a confidential client: `generate` a fresh one (client-config
   * import; flagged SecretResetRequired), `rehash` this plaintext (realm exports, no rotation),
   * or `keep` the stored one.
   */
  readonly secret: { readonly kind: "generate" } | { readonly kind: "rehash"; readonly plaintext: string } | {
    readonly kind: "keep";
  };
}

/** One element of an importer's output stream. */
export type ImportItem =
  | { readonly kind: "role"; readonly role: ImportedRole }
  | { readonly kind: "group"; readonly group: ImportedGroup }
  | { readonly kind: "user"; readonly user: ImportedUser }
  | { readonly kind: "client"; readonly client: ImportedClient }
  | { readonly kind: "issue"; readonly issue: ImportIssue };

/** The prefix of imported role keys (spec 2.11). */
export const IMPORTED_ROLE_PREFIX = "imported:";

/**
 * The shared normalization of imported role and group keys: trimmed, lowercased, every run of
 * characters outside `a-z 0-9 _ . : -` replaced by `-`, leading punctuation dropped, at most 90
 * characters (so that `imported:` fits the 100-character key limit). Empty when nothing is left.
 */
export function normalizeImportKey(key: string): string {
  return key.trim().toLowerCase().replace(/[^a-z0-9_.:-]+/g, "-").replace(/^[^a-z0-9]+/, "").slice(0, 90)
    .replace(/-+$/, "");
}

/** The svc key of an imported role: `imported:<normalized key>` (empty when the key normalizes to nothing). */
export function importedRoleKey(key: string): string {
  const normalized = normalizeImportKey(key);
  return normalized === "" ? "" : IMPORTED_ROLE_PREFIX + normalized;
}

/** The natural key of an imported user: the normalized email (`normalizeEmail`). */
export const importedUserKey: (email: string) => string = normalizeEmail;

/** A syntactically plausible email (one `@`, something on each side, no spaces or controls). */
export function plausibleEmail(email: string): boolean {
  for (let i = 0; i < email.length; i++) if (email.charCodeAt(i) < 0x20) return false;
  return email.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(email);
}
