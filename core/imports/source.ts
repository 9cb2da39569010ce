/**
 * Small helpers importers share to read loosely typed export documents.
 *
 * @module
 */
import type { ImportItem, IssueSeverity } from "./model.ts";

/** An issue as an import item. */
export function issueItem(severity: IssueSeverity, entity: string, key: string, message: string): ImportItem {
  return { kind: "issue", issue: { severity, entity, key, message } };
}

/** Whether `value` is a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string field, or `fallback`. */
export function text(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

/** A boolean field (JSON `true`/`false` or the strings `true`/`false`, `1`/`0`), or `fallback`. */
export function flag(value: unknown, fallback = false): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    const v = value.trim().toLowerCase();
    if (v === "true" || v === "1" || v === "t") return true;
    if (v === "false" || v === "0" || v === "f") return false;
  }
  if (typeof value === "number") return value !== 0;
  return fallback;
}

/** A list of strings (non-strings dropped); a single string becomes a one-item list. */
export function strings(value: unknown): string[] {
  if (typeof value === "string") return value === "" ? [] : [value];
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === "string" && v !== "");
}

/**
 * The fields of an object keyed case- and underscore-insensitively (`clientId`, `ClientId` and
 * `client_id` are one key): for exports in either casing.
 */
export function looseKeys(object: Record<string, unknown>): Map<string, unknown> {
  const map = new Map<string, unknown>();
  for (const [key, value] of Object.entries(object)) map.set(looseKey(key), value);
  return map;
}

/** The loose form of a key (lowercase, without `_` and `-`). */
export function looseKey(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, "");
}

/** Parses JSON text; null with the parse error's message when it is not JSON. */
export function parseJson(source: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(source) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
