/**
 * `svc audit verify <realm>`: verifies a realm's admin audit chain (by realm id or name) on the
 * configured storage and prints whether it is valid, how many entries were checked, the head
 * hash, and the first bad sequence number with the reason. Exit code 0 when valid, 1 when
 * broken or on errors, 2 on usage errors.
 *
 * @module
 */
import { systemClock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { cryptoRandom } from "../core/random.ts";
import type { AuditChainReport } from "../core/storage/admin-audit.ts";
import { type EmbeddedStoreFilesSource, openDatabase } from "../storage/open.ts";
import { createSqlAdminAuditStore } from "../storage/sql/admin-audit.ts";
import { createSqlRealmStore } from "../storage/sql/realms.ts";
import { isUuid } from "../core/ids.ts";

/** The usage lines of the audit command. */
export const AUDIT_USAGE = "  audit verify REALM  verify a realm's admin audit chain (realm id or name)";

/** One report as printed lines. */
export function describeReport(report: AuditChainReport): string[] {
  if (report.valid) {
    return [
      `realm ${report.realmId}: chain valid, ${report.checked} entries checked`,
      `head: seq ${report.headSeq}, hash ${report.headHash}`,
    ];
  }
  const bad = report.firstBad!;
  return [
    `realm ${report.realmId}: chain BROKEN at seq ${bad.seq} (${bad.reason}), ${report.checked} entries checked before it`,
    `last good: seq ${report.headSeq}, hash ${report.headHash}`,
  ];
}

/** Runs `svc audit …` against the configured storage. */
export async function auditCommand(
  args: string[],
  config: SvcConfig,
  io: {
    print(line: string): void;
    printError(line: string): void;
    embeddedStoreFiles?: EmbeddedStoreFilesSource;
  },
): Promise<number> {
  const [sub, realmArg, ...extra] = args;
  if (sub !== "verify" || realmArg === undefined || extra.length > 0) {
    io.printError("usage: svc audit verify REALM   (a realm id or name)");
    return 2;
  }
  const database = await openDatabase(config.storage, io.embeddedStoreFiles);
  try {
    await database.ensureSchema();
    const deps = { clock: systemClock, random: cryptoRandom };
    const realms = createSqlRealmStore(database.db, deps);
    const realm = isUuid(realmArg) ? await realms.get(realmArg) : await realms.getByName(realmArg);
    if (realm === null) {
      io.printError(`audit: no realm ${JSON.stringify(realmArg)}`);
      return 1;
    }
    const report = await createSqlAdminAuditStore(database.db, deps).verify(realm.id);
    for (const line of describeReport(report)) io.print(line);
    return report.valid ? 0 : 1;
  } finally {
    await database.close();
  }
}
