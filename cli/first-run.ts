/**
 * What `svc start` prints for the first hour (issue 27): where the console, the account pages,
 * the API reference and development mail are; on a store whose default realm has no
 * administrator, one single-use setup link that opens the console's setup page; and, in
 * development (a localhost base URL), how to relax the abuse and risk gates that scripted local
 * sign-ins trip.
 *
 * @module
 */
import { hasAdministrator, issueSetupToken, SETUP_TOKEN_TTL_MS } from "../core/accounts/first-admin.ts";
import type { Clock } from "../core/clock.ts";
import { isLocalHostname, type SvcConfig } from "../core/config/mod.ts";
import type { RandomSource } from "../core/random.ts";
import { createSqlSetupTokenStore } from "../storage/sql/setup-tokens.ts";
import type { Storage } from "../core/storage/storage.ts";
import { publicRoot } from "../core/net/public-url.ts";

/** The settings that relax the gates for scripted local work, with their values. */
export const DEV_GATE_RELAXATIONS: readonly (readonly [string, string])[] = [
  ["SVC_ABUSE_PER_IP_LIMIT", "10000"],
  ["SVC_ABUSE_PER_IP_ACCOUNT_LIMIT", "10000"],
  ["SVC_ABUSE_ACCOUNT_LOCKOUT_LIMIT", "10000"],
  ["SVC_RISK_VELOCITY_LOGINS", "10000"],
  ["SVC_RISK_WEIGHT_NEW_DEVICE", "0"],
];

/** The URLs of a running server. */
export function serverUrls(config: SvcConfig): { console: string; account: string; openapi: string } {
  const root = publicRoot(config.server);
  return {
    console: `${root}${config.console.mountPath}/`,
    account: `${root}${config.account.mountPath}/`,
    openapi: `${root}/openapi`,
  };
}

/** The console URL of a setup link (the token rides in the fragment, which no server or log sees). */
export function setupLink(config: SvcConfig, token: string): string {
  return `${serverUrls(config).console}#/setup?token=${encodeURIComponent(token)}`;
}

/**
 * The lines `svc start` prints once it serves; issues a setup token when the default realm has no
 * administrator.
 */
export async function firstRunLines(
  deps: { storage: Storage; clock: Clock; random: RandomSource },
  config: SvcConfig,
  mailDescription: string,
): Promise<string[]> {
  const urls = serverUrls(config);
  const lines = [
    `console: ${urls.console}`,
    `account pages: ${urls.account}`,
    `API reference: ${urls.openapi} (document: ${urls.openapi}.json)`,
  ];
  if (!mailDescription.startsWith("smtp")) {
    lines.push(`dev mail: ${mailDescription}; list the outbox with "npx svc mail list"`);
  }
  const realm = await deps.storage.realms.getDefault();
  if (realm !== null && !await hasAdministrator(deps.storage, realm.id)) {
    const { token } = await issueSetupToken({
      ...deps,
      setupTokens: (storage) => createSqlSetupTokenStore(storage.pluginSql),
    }, realm.id);
    lines.push(
      `setup: no administrator yet; open this single-use link within ${
        SETUP_TOKEN_TTL_MS / 60_000
      } minutes to create the first one:`,
      `setup: ${setupLink(config, token)}`,
      `setup: or in a terminal: npx svc admin create --email you@example.com`,
    );
  }
  if (isLocalHostname(new URL(config.server.baseUrl).hostname)) {
    lines.push(
      "dev: scripted sign-ins from one address trip the abuse gate (429 login_blocked) and the risk gate " +
        "(email codes); for local work only, relax them with " +
        DEV_GATE_RELAXATIONS.map(([name, value]) => `${name}=${value}`).join(" "),
    );
  }
  return lines;
}
