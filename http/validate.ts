/**
 * Request body validation: JSON only, checked against a valibot schema.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { SvcError } from "../core/errors.ts";
import { validationError } from "./errors.ts";

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/**
 * Reads the request body as JSON and validates it with `schema`. Throws `SvcError` 400
 * `invalid_json` when the body is not JSON (wrong or missing `Content-Type`, or unparsable),
 * and 400 `invalid_request` naming the field when it does not match the schema.
 *
 * @example
 * ```ts
 * app.post("/things", async (c) => {
 *   const body = await parseBody(c, v.object({ name: v.string() }));
 *   return c.json({ name: body.name });
 * });
 * ```
 */
export async function parseBody<S extends v.GenericSchema>(
  c: Context,
  schema: S,
): Promise<v.InferOutput<S>> {
  const mediaType = (c.req.header("Content-Type") ?? "").split(";")[0].trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new SvcError(
      "invalid_json",
      "The request body must be JSON (Content-Type: application/json).",
      400,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(await c.req.text());
  } catch {
    throw new SvcError("invalid_json", "The request body is not valid JSON.", 400);
  }
  const result = v.safeParse(schema, data);
  if (!result.success) throw validationError(result.issues);
  return result.output;
}
