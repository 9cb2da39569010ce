/**
 * The server log's two formats (`SVC_LOG_FORMAT`): `pretty` prints plain lines as they are, and
 * `json` prints one JSON object per line, `{"time", "level", "msg", …fields}`, for log shippers.
 * Fields whose name says they hold a secret are dropped, whatever the caller passed.
 *
 * @module
 */
import type { Clock } from "../core/clock.ts";

/** Where the server's lines go. */
export interface LogLines {
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}

const SECRET_FIELD = /pass(word)?|secret|token|authorization|cookie|otp|code|key/i;

/**
 * Log lines over `print` (stdout) and `printError` (stderr). Pretty lines append fields as
 * `name=value`; JSON lines carry them as members.
 */
export function logLines(
  format: "pretty" | "json",
  out: { print(line: string): void; printError(line: string): void },
  clock: Clock,
): LogLines {
  const safe = (fields: Readonly<Record<string, unknown>> = {}) =>
    Object.fromEntries(Object.entries(fields).filter(([name]) => !SECRET_FIELD.test(name)));
  if (format === "json") {
    const line = (level: string, msg: string, fields?: Readonly<Record<string, unknown>>) =>
      JSON.stringify({ time: new Date(clock.now()).toISOString(), level, msg, ...safe(fields) });
    return {
      info: (msg, fields) => out.print(line("info", msg, fields)),
      error: (msg, fields) => out.printError(line("error", msg, fields)),
    };
  }
  const line = (msg: string, fields?: Readonly<Record<string, unknown>>) => {
    const extra = Object.entries(safe(fields)).map(([name, value]) => `${name}=${String(value)}`);
    return extra.length === 0 ? msg : `${msg} ${extra.join(" ")}`;
  };
  return {
    info: (msg, fields) => out.print(line(msg, fields)),
    error: (msg, fields) => out.printError(line(msg, fields)),
  };
}
