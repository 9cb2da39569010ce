/**
 * The SQL server-secret store: `INSERT … ON CONFLICT DO NOTHING`, then (when another writer won)
 * a read of the winner's row in a new statement, which under READ COMMITTED sees it.
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import { StorageError, ValidationError } from "../../core/errors.ts";
import type { ServerSecretStore } from "../../core/storage/server-secrets.ts";
import type { Executor } from "../database.ts";

/** A {@link ServerSecretStore} over the `server_secrets` table. */
export function createSqlServerSecretStore(db: Executor, deps: { clock: Clock }): ServerSecretStore {
  return {
    async getOrCreate(name, create) {
      if (!/^[a-z0-9_.:-]{1,100}$/.test(name)) {
        throw new ValidationError("A server secret name is 1 to 100 of [a-z0-9_.:-].");
      }
      const inserted = await db.insertInto("server_secrets")
        .values({ name, secret: create(), created_at: new Date(deps.clock.now()) })
        .onConflict((oc) => oc.column("name").doNothing())
        .returning("secret").executeTakeFirst();
      if (inserted) return new Uint8Array(inserted.secret);
      const existing = await db.selectFrom("server_secrets").select("secret").where("name", "=", name)
        .executeTakeFirst();
      if (!existing) throw new StorageError(`The server secret ${name} could not be read or created.`);
      return new Uint8Array(existing.secret);
    },
  };
}
