/**
 * The bed of the authority model test (issue 24): a plugin bed on Postgres (the federation and
 * workload plugins mounted) with every kind of caller the admin API knows, and the observations
 * the model's invariants are stated over:
 *
 * - `reachAll()`: the reach (`core/authority` `reachOf`, every permission of the universe in
 *   every context) of every user and service account of the realm, read from storage;
 * - `fingerprint()`: a digest of every table but the audit chain (what "a state change" is),
 *   usage bookkeeping (`last_used_at`, `last_seen_at`) left out;
 * - `chainLength()` / `chainsVerify()`: the audit entries of both realms, and their verification.
 */
import { sql } from "kysely";
import { type PermissionUniverse, type Reached, reachOf } from "../../core/authority/mod.ts";
import { permissionUniverseOf, subjectGrantsOf } from "../../http/admin/authority.ts";
import { federationPlugin } from "../../plugins/federation/mod.ts";
import { workloadFederationPlugin } from "../../plugins/workload-federation/mod.ts";
import { type OtherRealm, otherRealm } from "./other-realm.ts";
import { type PluginBed, pluginBed } from "./plugins.ts";
import { seeder } from "./seed.ts";

/** The callers of the model. */
export const CALLERS = [
  "root",
  "orgA",
  "orgB",
  "importer",
  "impersonator",
  "pluginHolder",
  "rival",
  "apiKey",
  "serviceAccount",
] as const;

/** One caller of the model. */
export type ModelCaller = typeof CALLERS[number];

/** What the model knows of a caller. */
export interface CallerInfo {
  /** The Authorization header it sends. */
  readonly authorization: string;
  /** The principal whose grants it acts with in the realm (null: none, another realm's). */
  readonly principalId: string | null;
  /** The organization its token is signed in to (null: none). */
  readonly tokenOrg: string | null;
}

/** The model bed. */
export interface ModelBed {
  readonly plugged: PluginBed;
  readonly realmId: string;
  readonly orgA: string;
  readonly orgB: string;
  readonly rival: OtherRealm;
  readonly universe: PermissionUniverse;
  readonly callers: Readonly<Record<ModelCaller, CallerInfo>>;
  /** Known roles, groups and users of the realm (grown by the commands). */
  readonly roles: string[];
  readonly groups: string[];
  readonly users: string[];
  /** The service accounts of the realm. */
  readonly serviceAccounts: string[];
  /** Calls the app as `caller`. */
  call(
    caller: ModelCaller,
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; body: unknown }>;
  /** The reach of every user and service account of the realm, by id (`permission@context`). */
  reachAll(): Promise<Map<string, Set<string>>>;
  /** A digest per table of every table but the audit chain. */
  fingerprint(): Promise<Map<string, string>>;
  /** Audit entries of every realm. */
  chainLength(): Promise<number>;
  /** Null when both realms' chains verify, else what broke. */
  chainsVerify(): Promise<string | null>;
  close(): Promise<void>;
}

/** `permission@context` (context `*`: realm-wide). */
export const reachKey = (r: Reached): string => `${r.permission}@${r.context ?? "*"}`;

/** Builds the model bed on a fresh Postgres schema. */
export async function modelBed(): Promise<ModelBed> {
  const plugins = [federationPlugin(), workloadFederationPlugin()];
  const plugged = await pluginBed(plugins, {}, { postgres: true });
  try {
    const { admin } = plugged;
    const { bed, realmId, orgA, orgB } = admin;
    const db = bed.database.db;
    const seed = seeder(db);
    const pluginPermissions = plugins.flatMap((p) => (p.permissions ?? []).map((x) => x.id));
    const universe = permissionUniverseOf({ pluginPermissions });
    const sign = async (userId: string, orgId: string | null) =>
      (await bed.auth.sessions.signIn({ realmId, userId, orgId, mfa: "MultiFactor" })).tokens.accessToken;
    const holderOf = async (key: string, patterns: string[]) => {
      const id = await seed.user(realmId);
      const role = await seed.role(realmId, key, patterns.map((pattern) => ({ pattern })));
      await seed.assign(realmId, role, { kind: "User", id });
      return id;
    };
    const importer = await holderOf("importer", ["svc:global:import"]);
    const pluginHolder = await holderOf("plugin-holder", [
      "workload:*:*",
      "federation:*:*",
      "svc:global:roles-*",
      "svc:global:users-read",
    ]);
    const memberB = await seed.user(realmId);
    await bed.storage.organizations.addMember(orgB, memberB);
    const groupA = await seed.group(realmId, "group-a", [], orgA);
    const groupRealm = await seed.group(realmId, "group-realm", []);
    await bed.snapshots.invalidateAll();
    const rootAuth = `Bearer ${admin.tokens.global}`;
    const rootCall = async (path: string, body: unknown) => {
      const res = await plugged.app.request(path, {
        method: "POST",
        headers: { Authorization: rootAuth, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const json = await res.json();
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const bot = await rootCall("/svc-admin/service-accounts", { key: "model-bot", displayName: "Bot" });
    const keyOwner = await rootCall("/svc-admin/service-accounts", {
      key: "model-keys",
      displayName: "Keys",
    });
    const saRole = async (key: string, patterns: string[], id: string) => {
      const role = await seed.role(realmId, key, patterns.map((pattern) => ({ pattern })));
      await bed.storage.roles.assign({ roleId: role, principalKind: "ServiceAccount", principalId: id });
    };
    await saRole("bot-ops", [
      "svc:global:roles-*",
      "svc:global:groups-*",
      "svc:global:users-read",
    ], bot.id);
    await saRole("key-ops", ["svc:global:users-*", "svc:global:members-*"], keyOwner.id);
    const key = await rootCall("/svc-admin/api-keys", {
      ownerKind: "ServiceAccount",
      ownerId: keyOwner.id,
      name: "model",
      expiresAt: new Date(bed.clock.now() + 86_400_000).toISOString(),
    });
    const impersonation = await rootCall("/svc-admin/impersonation", {
      targetUserId: admin.users.plain,
      reason: "model test",
    });
    const rival = await otherRealm(admin, { app: plugged.app });
    await bed.snapshots.invalidateAll();
    const basic = btoa(`model-bot:${bot.secret}`);
    const callers: Record<ModelCaller, CallerInfo> = {
      root: { authorization: rootAuth, principalId: admin.users.global, tokenOrg: null },
      orgA: { authorization: `Bearer ${admin.tokens.orgA}`, principalId: admin.users.orgA, tokenOrg: orgA },
      orgB: { authorization: `Bearer ${admin.tokens.orgB}`, principalId: admin.users.orgB, tokenOrg: orgB },
      importer: {
        authorization: `Bearer ${await sign(importer, null)}`,
        principalId: importer,
        tokenOrg: null,
      },
      impersonator: {
        authorization: `Bearer ${impersonation.accessToken}`,
        principalId: admin.users.plain,
        tokenOrg: null,
      },
      pluginHolder: {
        authorization: `Bearer ${await sign(pluginHolder, null)}`,
        principalId: pluginHolder,
        tokenOrg: null,
      },
      rival: { authorization: `Bearer ${rival.token}`, principalId: null, tokenOrg: null },
      apiKey: { authorization: `Bearer ${key.token}`, principalId: keyOwner.id, tokenOrg: null },
      serviceAccount: { authorization: `Basic ${basic}`, principalId: bot.id, tokenOrg: null },
    };
    const roles = (await bed.storage.roles.list(realmId, {})).map((r) => r.id);
    for (const org of [orgA, orgB]) {
      for (const r of await bed.storage.roles.list(realmId, { orgId: org })) {
        if (!roles.includes(r.id)) roles.push(r.id);
      }
    }
    const users = [
      admin.users.global,
      admin.users.orgA,
      admin.users.orgB,
      admin.users.plain,
      importer,
      pluginHolder,
      memberB,
    ];
    const serviceAccounts = [bot.id, keyOwner.id];
    const tables = (await sql<{ name: string }>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
        AND table_name NOT IN ('admin_audit_entries') ORDER BY 1`.execute(db)).rows.map((r) => r.name);
    const deps = { storage: bed.storage, snapshots: bed.snapshots, pluginPermissions };
    return {
      plugged,
      realmId,
      orgA,
      orgB,
      rival,
      universe,
      callers,
      roles,
      groups: [groupA, groupRealm],
      users,
      serviceAccounts,
      async call(caller, method, path, body, contentType = "application/json") {
        const headers: Record<string, string> = { Authorization: callers[caller].authorization };
        if (body !== undefined) headers["Content-Type"] = contentType;
        const res = await plugged.app.request(path, {
          method,
          headers,
          body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
        });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = text === "" ? null : JSON.parse(text);
        } catch {
          // Not JSON: kept as text.
        }
        return { status: res.status, body: parsed };
      },
      async reachAll() {
        const ids = [
          ...(await db.selectFrom("users").select("id").where("realm_id", "=", realmId).execute()).map((
            r,
          ) => ({ kind: "User" as const, id: r.id })),
          ...serviceAccounts.map((id) => ({ kind: "ServiceAccount" as const, id })),
        ];
        const out = new Map<string, Set<string>>();
        for (const subject of ids) {
          const grants = await subjectGrantsOf(deps, realmId, subject, bed.storage);
          out.set(subject.id, new Set(reachOf(grants ?? [], universe).map(reachKey)));
        }
        return out;
      },
      async fingerprint() {
        const selects = tables.map((table) =>
          sql`SELECT ${table} AS name, coalesce(md5(string_agg(
            (to_jsonb(x) - 'last_used_at' - 'last_seen_at')::text, '|'
            ORDER BY (to_jsonb(x) - 'last_used_at' - 'last_seen_at')::text)), '') AS digest
            FROM ${sql.table(table)} AS x`
        );
        const rows = await sql<{ name: string; digest: string }>`${sql.join(selects, sql` UNION ALL `)}`
          .execute(db);
        return new Map(rows.rows.map((r) => [r.name, r.digest]));
      },
      async chainLength() {
        const row = await db.selectFrom("admin_audit_entries")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow();
        return Number(row.n);
      },
      async chainsVerify() {
        for (const realm of [realmId, rival.realmId]) {
          const report = await bed.storage.adminAudit.verify(realm);
          if (!report.valid) return `${realm}: ${JSON.stringify(report.firstBad)}`;
        }
        return null;
      },
      close: () => plugged.close(),
    };
  } catch (err) {
    await plugged.close();
    throw err;
  }
}
