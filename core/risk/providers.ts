/**
 * The risk gate's providers (spec 5.2 step 4) and their offline implementations:
 *
 * - {@link GeoLocator}: IP → country and coordinates. {@link CsvGeoLocator} reads an
 *   operator-supplied CSV of CIDR ranges (IPv4 and IPv6). Without a header the columns are
 *   `cidr,country,latitude,longitude`; with a header they are found by name (`network` or
 *   `cidr`; `country`, `country_code` or `country_iso_code`; `latitude` or `lat`; `longitude`,
 *   `lon` or `lng`), so a GeoLite2-City-Blocks CSV works as is (country empty). Rows without
 *   coordinates are skipped; `#` starts a comment line.
 * - {@link IpReputation}: IP → score 0 to 100 (higher is worse). {@link ListIpReputation} reads
 *   an operator-supplied list: one IP or CIDR range per line, optionally followed (after a
 *   comma, a tab or spaces) by a score; no score means 100 (a plain blocklist). `#` and `;`
 *   start comments, so Spamhaus DROP-style files load unchanged.
 * - {@link LoginHistory}: the last login (time, IP, location) and the number of recent logins,
 *   for impossible travel and velocity.
 *
 * The most specific range wins in both files. Core does no I/O: files are read through an
 * injected {@link TextLoader} (the CLI passes its runtime's `readTextFile`).
 *
 * @module
 */
import type { SecurityEventStore } from "../storage/security-events.ts";
import { ValidationError } from "../errors.ts";
import { CidrTable, parseCidr } from "../net/ip.ts";

/** Reads a text file by path (the runtime adapter's `readTextFile`). */
export type TextLoader = (path: string) => Promise<string>;

/** Where an IP address is. */
export interface GeoLocation {
  /** ISO 3166-1 alpha-2 country code, uppercase ("" when the source has none). */
  readonly country: string;
  /** Latitude in degrees. */
  readonly lat: number;
  /** Longitude in degrees. */
  readonly lon: number;
}

/** Geolocates IP addresses. */
export interface GeoLocator {
  /** The location of an address, or null when unknown. */
  locate(ip: string): GeoLocation | null | Promise<GeoLocation | null>;
}

/** Scores IP addresses. */
export interface IpReputation {
  /** A score from 0 (clean) to 100 (known bad), or null when the address is not listed. */
  score(ip: string): number | null | Promise<number | null>;
}

/** One past login. */
export interface LoginRecord {
  /** When it happened (ms since the epoch). */
  readonly at: number;
  /** The client IP, when known. */
  readonly ip: string | null;
  /** The location, when it was recorded (otherwise the gate geolocates `ip`). */
  readonly location?: GeoLocation | null;
}

/** A user's login history, as the risk gate needs it. */
export interface LoginHistory {
  /** The user's most recent login, or null. */
  lastLogin(userId: string): Promise<LoginRecord | null>;
  /** How many logins the user had at or after `since` (ms since the epoch). */
  countSince(userId: string, since: number): Promise<number>;
}

/**
 * A {@link LoginHistory} over one user's history row already read (the `login_history` row a
 * sign-in reads with the account): the same answers the store gives, without a read.
 */
export function loginHistoryOf(
  row:
    | { readonly lastAt: number; readonly lastIp: string | null; readonly recentMs: readonly number[] }
    | null,
): LoginHistory {
  return {
    lastLogin: () => Promise.resolve(row === null ? null : { at: row.lastAt, ip: row.lastIp }),
    countSince: (_userId, since) =>
      Promise.resolve(row === null ? 0 : row.recentMs.filter((t) => t >= since).length),
  };
}

function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"' && field === "") {
      quoted = true;
    } else if (c === ",") {
      out.push(field.trim());
      field = "";
    } else {
      field += c;
    }
  }
  out.push(field.trim());
  return out;
}

function fileError(source: string, line: number, problem: string): ValidationError {
  return new ValidationError(`${source}, line ${line}: ${problem}`, { source, line });
}

/** A geolocator over a CIDR → location table. */
export class CsvGeoLocator implements GeoLocator {
  readonly #table: CidrTable<GeoLocation>;

  private constructor(table: CidrTable<GeoLocation>) {
    this.#table = table;
  }

  /** How many ranges were loaded. */
  get size(): number {
    return this.#table.size;
  }

  /** Parses the CSV text (see the module doc); `source` names it in errors. */
  static parse(text: string, source = "geolocation CSV"): CsvGeoLocator {
    const table = new CidrTable<GeoLocation>();
    let columns: { cidr: number; country: number; lat: number; lon: number } | null = null;
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i].replace(/^\uFEFF/, "").trim();
      if (raw === "" || raw.startsWith("#")) continue;
      const fields = splitCsvLine(raw);
      if (columns === null) {
        if (parseCidr(fields[0]) === null) {
          const names = fields.map((f) => f.toLowerCase());
          const find = (...candidates: string[]) => names.findIndex((n) => candidates.includes(n));
          columns = {
            cidr: find("network", "cidr", "range", "prefix"),
            country: find("country", "country_code", "country_iso_code", "iso_code", "cc"),
            lat: find("latitude", "lat"),
            lon: find("longitude", "lon", "lng", "long"),
          };
          if (columns.cidr < 0 || columns.lat < 0 || columns.lon < 0) {
            throw fileError(source, i + 1, "the header names no network, latitude or longitude column");
          }
          continue;
        }
        columns = { cidr: 0, country: 1, lat: 2, lon: 3 };
      }
      const range = parseCidr(fields[columns.cidr] ?? "");
      if (!range) {
        throw fileError(source, i + 1, `${JSON.stringify(fields[columns.cidr] ?? "")} is not a CIDR range`);
      }
      const latText = fields[columns.lat] ?? "", lonText = fields[columns.lon] ?? "";
      if (latText === "" || lonText === "") continue;
      const lat = Number(latText), lon = Number(lonText);
      if (
        !Number.isFinite(lat) || lat < -90 || lat > 90 || !Number.isFinite(lon) || lon < -180 || lon > 180
      ) {
        throw fileError(source, i + 1, "latitude or longitude out of range");
      }
      const country = columns.country >= 0 ? (fields[columns.country] ?? "").toUpperCase() : "";
      table.set(range, Object.freeze({ country, lat, lon }));
    }
    return new CsvGeoLocator(table);
  }

  /** The location of the most specific loaded range containing `ip`, or null when none does (or `ip` is not an address). */
  locate(ip: string): GeoLocation | null {
    return this.#table.lookup(ip);
  }
}

/** An IP reputation over a CIDR → score table. */
export class ListIpReputation implements IpReputation {
  readonly #table: CidrTable<number>;

  private constructor(table: CidrTable<number>) {
    this.#table = table;
  }

  /** How many entries were loaded. */
  get size(): number {
    return this.#table.size;
  }

  /** Parses the list text (see the module doc); `source` names it in errors. */
  static parse(text: string, source = "IP reputation list"): ListIpReputation {
    const table = new CidrTable<number>();
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].replace(/^\uFEFF/, "").replace(/[#;].*$/, "").trim();
      if (line === "") continue;
      const [entry, scoreText, ...rest] = line.split(/\s*,\s*|\s+/).filter((p) => p !== "");
      if (rest.length > 0) {
        throw fileError(source, i + 1, "expected an IP or CIDR range and an optional score");
      }
      const range = parseCidr(entry);
      if (!range) {
        throw fileError(source, i + 1, `${JSON.stringify(entry)} is not an IP address or CIDR range`);
      }
      let score = 100;
      if (scoreText !== undefined) {
        score = Number(scoreText);
        if (!/^\d+(\.\d+)?$/.test(scoreText) || score > 100) {
          throw fileError(source, i + 1, `${JSON.stringify(scoreText)} is not a score from 0 to 100`);
        }
      }
      table.set(range, score);
    }
    return new ListIpReputation(table);
  }

  /** The score of the most specific listed range containing `ip`, or null when none does (or `ip` is not an address). */
  score(ip: string): number | null {
    return this.#table.lookup(ip);
  }
}

/** Reads and parses a geolocation CSV through `load`. */
export async function loadGeoLocator(load: TextLoader, path: string): Promise<CsvGeoLocator> {
  return CsvGeoLocator.parse(await load(path), path);
}

/** Reads and parses an IP reputation list through `load`. */
export async function loadIpReputation(load: TextLoader, path: string): Promise<ListIpReputation> {
  return ListIpReputation.parse(await load(path), path);
}

/** The offline providers the configuration names (`risk.geoipFile`, `risk.ipReputationFile`). */
export async function loadRiskProviders(
  config: { readonly geoipFile?: string; readonly ipReputationFile?: string },
  load: TextLoader,
): Promise<{ geo: CsvGeoLocator | null; reputation: ListIpReputation | null }> {
  return {
    geo: config.geoipFile ? await loadGeoLocator(load, config.geoipFile) : null,
    reputation: config.ipReputationFile ? await loadIpReputation(load, config.ipReputationFile) : null,
  };
}

/** Great-circle distance in kilometres between two points (haversine, mean Earth radius). */
export function greatCircleKm(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad, dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** A login history in memory (one instance; tests). */
export class MemoryLoginHistory implements LoginHistory {
  readonly #logins = new Map<string, LoginRecord[]>();

  /** Records a login. */
  record(userId: string, login: LoginRecord): void {
    const list = this.#logins.get(userId) ?? [];
    list.push(login);
    list.sort((a, b) => a.at - b.at);
    this.#logins.set(userId, list);
  }

  /** The user's latest recorded login (by `at`), or null. */
  lastLogin(userId: string): Promise<LoginRecord | null> {
    return Promise.resolve(this.#logins.get(userId)?.at(-1) ?? null);
  }

  /** How many recorded logins of the user are at or after `since` (ms since the epoch). */
  countSince(userId: string, since: number): Promise<number> {
    return Promise.resolve((this.#logins.get(userId) ?? []).filter((l) => l.at >= since).length);
  }
}

/**
 * A login history read from the security-event ledger: logins are the events of `kinds`
 * (default `login.succeeded`), with their recorded IP address. Reads at most `maxScan` events
 * per question (default 500), newest first.
 */
export function securityEventLoginHistory(
  store: SecurityEventStore,
  options: { kinds?: readonly string[]; maxScan?: number } = {},
): LoginHistory {
  const kinds = new Set(options.kinds ?? ["login.succeeded"]);
  const maxScan = options.maxScan ?? 500;
  const page = 100;
  async function* events(userId: string) {
    let before: Date | undefined;
    for (let scanned = 0; scanned < maxScan;) {
      const batch = await store.listByUser(userId, { limit: Math.min(page, maxScan - scanned), before });
      if (batch.length === 0) return;
      yield* batch;
      scanned += batch.length;
      before = batch[batch.length - 1].occurredAt;
      if (batch.length < page) return;
    }
  }
  return {
    async lastLogin(userId) {
      for await (const event of events(userId)) {
        if (kinds.has(event.kind)) return { at: event.occurredAt.getTime(), ip: event.ipAddress };
      }
      return null;
    },
    async countSince(userId, since) {
      let n = 0;
      for await (const event of events(userId)) {
        if (event.occurredAt.getTime() < since) break;
        if (kinds.has(event.kind)) n++;
      }
      return n;
    },
  };
}
