/**
 * Reads the ASP.NET Core Identity tables straight from a Postgres database by URL (the Npgsql
 * provider's EF Core schema: quoted PascalCase table and column names). Users are read in pages
 * by `Id` (keyset), so a large table is not held in memory; roles, role links and claims are read
 * whole (they are looked up per user). Only `AspNetUsers` must exist.
 *
 * @module
 */
import postgres from "postgres";
import { ASPNET_TABLES, type AspNetRow, type AspNetTables } from "../../core/imports/aspnet.ts";

/** An open connection to an Identity database and the tables read from it. */
export interface AspNetDatabaseSource {
  readonly tables: AspNetTables;
  /** Closes the connection (after the import). */
  close(): Promise<void>;
}

/** Users per page. */
const PAGE = 500;

/**
 * Connects to the Identity database at `url` (in `schema`, default `public`) and prepares its
 * tables. Throws when the database cannot be reached or has no `AspNetUsers` table.
 */
export async function openAspNetDatabase(
  url: string,
  options: { schema?: string } = {},
): Promise<AspNetDatabaseSource> {
  const client = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  const schema = options.schema ?? "public";
  try {
    const present = new Set(
      (await client<{ table_name: string }[]>`
        SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema}`).map((r) =>
        r.table_name
      ),
    );
    if (!present.has(ASPNET_TABLES.users)) {
      throw new Error(`The database has no "${ASPNET_TABLES.users}" table.`);
    }
    const whole = async (table: string): Promise<AspNetRow[] | undefined> =>
      present.has(table) ? [...await client`SELECT * FROM ${client(schema)}.${client(table)}`] : undefined;
    const roles = await whole(ASPNET_TABLES.roles);
    const userRoles = await whole(ASPNET_TABLES.userRoles);
    const userClaims = await whole(ASPNET_TABLES.userClaims);
    return {
      tables: { users: pagedUsers(client, schema), roles, userRoles, userClaims },
      close: () => client.end({ timeout: 5 }),
    };
  } catch (error) {
    await client.end({ timeout: 5 });
    throw error;
  }
}

/** The users table in pages by `Id` (keyset). */
async function* pagedUsers(client: postgres.Sql, schema: string): AsyncGenerator<AspNetRow> {
  let after: string | null = null;
  for (;;) {
    const rows: AspNetRow[] = after === null
      ? await client`SELECT * FROM ${client(schema)}.${client(ASPNET_TABLES.users)}
          ORDER BY "Id" LIMIT ${PAGE}`
      : await client`SELECT * FROM ${client(schema)}.${client(ASPNET_TABLES.users)}
          WHERE "Id" > ${after} ORDER BY "Id" LIMIT ${PAGE}`;
    yield* rows;
    if (rows.length < PAGE) return;
    after = String(rows[rows.length - 1].Id);
  }
}
