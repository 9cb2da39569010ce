/**
 * Lookups several pages share.
 *
 * @module
 */
import { api, ApiError, query } from "../api.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A user id from an id or an email address (searched through the admin API). */
export async function resolveUserId(text: string): Promise<string> {
  const value = text.trim();
  if (UUID.test(value)) return value.toLowerCase();
  const list = await api<{ items: { id: string; email: string }[] }>(
    "GET",
    `/svc-admin/users${query({ q: value, limit: 20 })}`,
  );
  const match = list.items.find((u) => u.email.toLowerCase() === value.toLowerCase());
  if (!match) {
    throw new ApiError(404, "not_found", `No user with the email address ${value} is visible to you.`, {
      field: "user",
    });
  }
  return match.id;
}

/** Parses a JSON text field (empty: undefined); a syntax error names the field. */
export function jsonField(text: string | undefined, field: string): unknown {
  if (text === undefined || text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, "invalid_json", `${field}: not valid JSON (${(error as Error).message})`, {
      field,
    });
  }
}
