/**
 * Building blocks of plugins' config sections: a whole number of seconds, the realm a plugin
 * serves, and finding that realm at start.
 *
 * @module
 */
import * as v from "valibot";
import type { Realm, RealmStore } from "../core/storage/realms.ts";

/** A config value given as a number (a config file) or as its digits (an environment variable). */
export type NumberOrDigits = v.GenericSchema<number | string, number>;

/**
 * A whole number of seconds from `min` to `max`, given as a number or as digits; `fallback` when
 * unset.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { secondsSetting } from "@svc/svc";
 *
 * const ConfigSchema = v.object({ codeTtlSeconds: secondsSetting(10, 600, 60) });
 * v.parse(ConfigSchema, { codeTtlSeconds: "120" }); // { codeTtlSeconds: 120 }
 * ```
 */
export function secondsSetting(
  min: number,
  max: number,
  fallback: number,
): v.OptionalSchema<NumberOrDigits, number> {
  const message = `a whole number of seconds from ${min} to ${max}`;
  const value: NumberOrDigits = v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,9}$/, "a whole number"), v.transform(Number))]),
    v.integer(message),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
  return v.optional(value, fallback);
}

/** The realm a plugin serves, by id or name (null: the default realm). */
export const realmSetting: v.OptionalSchema<
  v.NullableSchema<v.GenericSchema<string>, undefined>,
  null
> = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The realm named by a plugin's {@link realmSetting}: by id, else by name; the default realm for
 * null. Throws (stopping the plugin's start) when there is no such realm.
 */
export async function pluginRealm(
  realms: Pick<RealmStore, "get" | "getByName" | "getDefault">,
  wanted: string | null,
): Promise<Realm> {
  const realm = wanted === null
    ? await realms.getDefault()
    : (UUID.test(wanted) ? await realms.get(wanted) : null) ?? await realms.getByName(wanted);
  if (realm === null) throw new Error(`realm ${JSON.stringify(wanted ?? "default")} does not exist`);
  return realm;
}
