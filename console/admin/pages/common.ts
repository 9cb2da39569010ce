/**
 * Lookups several pages share.
 *
 * @module
 */
import { ApiError } from "../api.ts";

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
