/**
 * `svc mail list` / `svc mail show ID` (issue 14): the mail outbox of the configured storage,
 * newest first, with each message's delivery state; `show` prints one message with its links and
 * text body. On the embedded store a running server holds the data folder: the command then reads
 * that server's outbox over its HTTP API (`GET /svc-admin/mail`) with the access token in
 * `SVC_ADMIN_TOKEN` (an administrator holding `svc:global:mail-read`), which shows the mail of the
 * token's realm only (issue 24: by each message's realm). Read from the store itself, the list
 * holds every realm's mail: whoever runs it holds the database.
 *
 * @module
 */
import { systemClock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import { linksOf } from "../core/mail/log-relay.ts";
import { cryptoRandom } from "../core/random.ts";
import type { MailDeliveryStatus } from "../core/storage/mail-outbox.ts";
import { type EmbeddedStoreFilesSource, openDatabase } from "../storage/open.ts";
import { createSqlMailOutboxStore } from "../storage/sql/mail-outbox.ts";
import { publicUrl } from "../core/net/public-url.ts";

/** The usage lines of the mail command. */
export const MAIL_USAGE = [
  "  mail list [--to ADDRESS] [--kind KIND] [--status STATUS] [--limit N]",
  "                   list the mail outbox, newest first, with delivery state",
  "  mail show ID     print one message of the outbox: headers, links and text",
];

/** The environment variable holding the access token used to read a running server's outbox. */
export const ADMIN_TOKEN_ENV = "SVC_ADMIN_TOKEN";

/** A message as the command prints it (from the store or from the HTTP API). */
export interface MailRow {
  readonly id: string;
  readonly kind: string;
  readonly to: string;
  readonly from: string;
  readonly subject: string;
  readonly createdAt: string;
  readonly deliveryStatus: string;
  readonly attempts: number;
  readonly nextAttemptAt: string | null;
  readonly lastError: string | null;
  readonly sentAt: string | null;
  readonly text?: string;
}

/** Parsed arguments of `svc mail`. */
export type MailArgs =
  | {
    readonly sub: "list";
    readonly to?: string;
    readonly kind?: string;
    readonly status?: MailDeliveryStatus;
    readonly limit: number;
  }
  | { readonly sub: "show"; readonly id: string };

const STATUSES = ["pending", "retrying", "sent", "dead_letter"];

/** Parses `svc mail …` arguments; null on a usage error. */
export function parseMailArgs(args: readonly string[]): MailArgs | null {
  const [sub, ...rest] = args;
  if (sub === "show") {
    return rest.length === 1 && /^[0-9a-fA-F-]{36}$/.test(rest[0]) ? { sub, id: rest[0] } : null;
  }
  if (sub !== "list") return null;
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i += 2) {
    const flag = rest[i];
    const value = rest[i + 1];
    if (!["--to", "--kind", "--status", "--limit"].includes(flag) || value === undefined) return null;
    options[flag.slice(2)] = value;
  }
  if (options.status !== undefined && !STATUSES.includes(options.status)) return null;
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) return null;
  return {
    sub,
    to: options.to,
    kind: options.kind,
    status: options.status as MailDeliveryStatus | undefined,
    limit,
  };
}

/** The lines of a list. */
export function describeList(rows: readonly MailRow[]): string[] {
  if (rows.length === 0) return ["no mail"];
  return rows.map((m) =>
    `${m.id}  ${m.createdAt}  ${stateOf(m)}  ${m.kind}  ${m.to}  ${JSON.stringify(m.subject)}`
  );
}

/** The lines of one message. */
export function describeMessage(m: MailRow): string[] {
  const lines = [
    `id: ${m.id}`,
    `kind: ${m.kind}`,
    `from: ${m.from}`,
    `to: ${m.to}`,
    `subject: ${m.subject}`,
    `created: ${m.createdAt}`,
    `delivery: ${stateOf(m)}${m.lastError ? ` (last error: ${m.lastError})` : ""}`,
  ];
  const text = m.text ?? "";
  for (const link of linksOf(text)) lines.push(`link: ${link}`);
  lines.push("", ...text.trimEnd().split("\n"));
  return lines;
}

function stateOf(m: MailRow): string {
  if (m.deliveryStatus === "sent") return `sent ${m.sentAt ?? ""}`.trim();
  const next = m.nextAttemptAt ? `, next ${m.nextAttemptAt}` : "";
  return `${m.deliveryStatus} (${m.attempts} attempt${m.attempts === 1 ? "" : "s"}${
    m.deliveryStatus === "dead_letter" ? "" : next
  })`;
}

interface Io {
  print(line: string): void;
  printError(line: string): void;
  /** PGlite's files and the prepared cluster, when the runtime has them. */
  embeddedStoreFiles?: EmbeddedStoreFilesSource;
}

/** Runs `svc mail …` on the configured storage (which this process holds). */
export async function mailCommand(args: MailArgs, config: SvcConfig, io: Io): Promise<number> {
  const database = await openDatabase(config.storage, io.embeddedStoreFiles);
  try {
    await database.ensureSchema();
    const store = createSqlMailOutboxStore(database.db, { clock: systemClock, random: cryptoRandom });
    if (args.sub === "show") {
      const message = await store.get(args.id);
      if (message === null) {
        io.printError(`mail: no message ${args.id}`);
        return 1;
      }
      for (const line of describeMessage(rowOf(message))) io.print(line);
      return 0;
    }
    const rows = await store.list({
      to: args.to,
      kind: args.kind,
      deliveryStatus: args.status,
      limit: args.limit,
      newestFirst: true,
    });
    for (const line of describeList(rows.map(rowOf))) io.print(line);
    return 0;
  } finally {
    await database.close();
  }
}

/**
 * Runs `svc mail …` against a running server's HTTP API (`baseUrl` with its path base) with an
 * administrator's access token.
 */
export async function mailOverHttp(
  args: MailArgs,
  server: { baseUrl: string; pathBase: string },
  token: string,
  io: Io,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<number> {
  const base = publicUrl(server, "/svc-admin/mail");
  let url = base;
  if (args.sub === "show") url = `${base}/${encodeURIComponent(args.id)}`;
  else {
    const query = new URLSearchParams({ limit: String(args.limit) });
    if (args.to) query.set("to", args.to);
    if (args.kind) query.set("kind", args.kind);
    if (args.status) query.set("status", args.status);
    url = `${base}?${query}`;
  }
  let response: Response;
  try {
    response = await fetcher(url, {
      headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
    });
  } catch (err) {
    io.printError(`mail: the running server at ${base} did not answer: ${(err as Error).message ?? err}`);
    return 1;
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({})) as { error?: { message?: string } };
    io.printError(
      `mail: the running server answered ${response.status}${
        body.error?.message ? `: ${body.error.message}` : ""
      } (the token, ${ADMIN_TOKEN_ENV} or the one "svc login" stored, must be an administrator's holding svc:global:mail-read)`,
    );
    return 1;
  }
  const body = await response.json();
  const lines = args.sub === "show"
    ? describeMessage(body as MailRow)
    : describeList(body.items as MailRow[]);
  for (const line of lines) io.print(line);
  return 0;
}

/** The line printed when a running server holds the embedded store and no token was given. */
export function mailLockedLine(dataDir: string): string {
  return `mail: a running svc holds ${dataDir}; set ${ADMIN_TOKEN_ENV} to an administrator's access token (svc:global:mail-read), or run "svc login" once, to read its outbox over HTTP (GET /svc-admin/mail); or stop the server and run this again`;
}

function rowOf(m: {
  id: string;
  kind: string;
  to: string;
  from: string;
  subject: string;
  createdAt: Date;
  deliveryStatus: string;
  attempts: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
  sentAt: Date | null;
  text: string;
}): MailRow {
  return {
    id: m.id,
    kind: m.kind,
    to: m.to,
    from: m.from,
    subject: m.subject,
    createdAt: m.createdAt.toISOString(),
    deliveryStatus: m.deliveryStatus,
    attempts: m.attempts,
    nextAttemptAt: m.nextAttemptAt?.toISOString() ?? null,
    lastError: m.lastError,
    sentAt: m.sentAt?.toISOString() ?? null,
    text: m.text,
  };
}
