/**
 * Reading SCIM resources (`GET /Users`, `/Groups` with filter, sorting, paging and attribute
 * selection; `GET /Users/{id}`, `/Groups/{id}` with `If-None-Match`), for both kinds.
 *
 * @module
 */
import type { Context } from "hono";
import { sql } from "kysely";
import { scimJson } from "./answers.ts";
import { invalidValue } from "./errors.ts";
import { parseAttrPath, parseFilter } from "./filter.ts";
import { builder, compileFilter, compileSort } from "./query.ts";
import { etagOf, project } from "./resources.ts";
import { LIST_SCHEMA, type ResourceKind, USER_KIND } from "./schema.ts";
import { resourceRowOf, type ScimConnection } from "./store.ts";

import { MAX_COUNT, type ScimKit } from "./kit.ts";

/** The read handlers over `kit`; `connectionOf` is the request's authenticated connection. */
export function readHandlers(kit: ScimKit, connectionOf: (c: Context) => ScimConnection) {
  const { ctx, userColumns, groupColumns, groupsOf, loadRow, show } = kit;
  const readOne = (kind: ResourceKind) => async (c: Context) => {
    const connection = connectionOf(c);
    const row = await loadRow(ctx.storage.pluginSql, kind, connection.id, c.req.param("id") ?? "");
    const etag = etagOf(row.version);
    if (c.req.header("If-None-Match") === etag) {
      return new Response(null, { status: 304, headers: { ETag: etag } });
    }
    const body = project(
      kind,
      await show(kind, connection, row),
      c.req.query("attributes"),
      c.req.query("excludedAttributes"),
    );
    return scimJson(body, 200, { ETag: etag });
  };

  const intParam = (c: Context, name: string, fallback: number, min: number): number => {
    const text = c.req.query(name);
    if (text === undefined || text === "") return fallback;
    if (!/^-?\d{1,9}$/.test(text)) throw invalidValue(`${name} must be an integer.`);
    return Math.max(min, Number(text));
  };

  const list = (kind: ResourceKind) => async (c: Context) => {
    const connection = connectionOf(c);
    const startIndex = intParam(c, "startIndex", 1, 1);
    const count = Math.min(intParam(c, "count", 100, 0), MAX_COUNT);
    const filterText = c.req.query("filter");
    const where = filterText === undefined || filterText === ""
      ? sql`true`
      : compileFilter(kind, parseFilter(filterText));
    const sortBy = c.req.query("sortBy");
    const sortOrder = (c.req.query("sortOrder") ?? "ascending").toLowerCase();
    if (sortOrder !== "ascending" && sortOrder !== "descending") {
      throw invalidValue("sortOrder must be ascending or descending.");
    }
    const dir = sql.raw(sortOrder === "descending" ? "DESC" : "ASC");
    const key = kind === USER_KIND ? "user_id" : "group_id";
    const order = sortBy === undefined || sortBy === ""
      ? sql`created_at, ${sql.ref(key)}`
      : sql`${compileSort(kind, parseAttrPath(sortBy, invalidValue))} ${dir} NULLS LAST, ${sql.ref(key)}`;
    const table = sql.table(kind === USER_KIND ? "scim_users" : "scim_groups");
    const cols = kind === USER_KIND ? userColumns : groupColumns;
    const db = ctx.storage.pluginSql;
    const page = sql`SELECT ${cols}, count(*) OVER () AS total FROM ${table}
      WHERE connection_id = ${connection.id} AND (${where})
      ORDER BY ${order} LIMIT ${count} OFFSET ${startIndex - 1}`.compile(builder);
    const rows = await db.query<Parameters<typeof resourceRowOf>[0] & { total: string | number }>(
      page.sql,
      page.parameters,
    );
    let total = rows.length > 0 ? Number(rows[0].total) : 0;
    if (rows.length === 0) {
      const counted =
        sql`SELECT count(*) AS total FROM ${table} WHERE connection_id = ${connection.id} AND (${where})`
          .compile(builder);
      total = Number((await db.query<{ total: string | number }>(counted.sql, counted.parameters))[0].total);
    }
    const resources = rows.map(resourceRowOf);
    const groups = kind === USER_KIND
      ? await groupsOf(db, connection.id, resources.map((r) => r.id))
      : undefined;
    const attributes = c.req.query("attributes");
    const excluded = c.req.query("excludedAttributes");
    const shown = [];
    for (const row of resources) {
      shown.push(project(kind, await show(kind, connection, row, groups), attributes, excluded));
    }
    return scimJson({
      schemas: [LIST_SCHEMA],
      totalResults: total,
      startIndex,
      itemsPerPage: shown.length,
      Resources: shown,
    });
  };

  return { readOne, list };
}
