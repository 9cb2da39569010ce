/**
 * A client span per SQL statement, counted where kysely hands a statement to its driver's
 * connection: `SELECT`, `INSERT`, `UPDATE`, `DELETE`, `WITH` and the rest, named by the statement's
 * first keyword, with the parameterized statement (`db.query.text`: values travel as parameters and
 * are never part of it) and the number of rows it returned or changed. Transactions show as their
 * `BEGIN` and `COMMIT` statements where the driver sends them as statements. Inside a request the
 * spans are children of the request's span when the host's context manager carries it.
 *
 * @module
 */
import { SpanKind } from "@opentelemetry/api";
import type { DatabaseConnection, Dialect, QueryResult } from "kysely";
import { inSpan } from "../core/tracing.ts";
import { delegatingDriver, withDriver } from "./driver-wrapper.ts";

const TRACED = Symbol("svc traced connection");

/** The statement's first keyword (`SELECT`, `WITH`, …), upper case; `QUERY` when there is none. */
export function operationName(sql: string): string {
  const match = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)/.exec(sql);
  return match ? match[1].toUpperCase() : "QUERY";
}

/** `dialect` with a client span around every statement its connections execute. */
export function traceQueries(dialect: Dialect, system = "postgresql"): Dialect {
  return withDriver(dialect, (inner) =>
    delegatingDriver(inner, {
      acquireConnection: async (options) => traced(await inner.acquireConnection(options), system),
    }));
}

/**
 * Wraps the connection's `executeQuery` in place, once: the driver gets its own connection object
 * back (drivers keep private state on it), only the method is replaced.
 */
function traced(connection: DatabaseConnection, system: string): DatabaseConnection {
  const marked = connection as DatabaseConnection & { [TRACED]?: true };
  if (marked[TRACED]) return connection;
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = <R>(query: Parameters<DatabaseConnection["executeQuery"]>[0]) => {
    const operation = operationName(query.sql);
    return inSpan<QueryResult<R>>(operation, {
      kind: SpanKind.CLIENT,
      attributes: {
        "db.system.name": system,
        "db.operation.name": operation,
        "db.query.text": query.sql,
      },
    }, async (span) => {
      const result = await execute<R>(query);
      // Rows returned, else rows changed (PGlite reports 0 changed for a SELECT).
      const rows = result.rows.length > 0 ? result.rows.length : Number(result.numAffectedRows ?? 0);
      span.setAttribute("db.response.returned_rows", rows);
      return result;
    });
  };
  marked[TRACED] = true;
  return connection;
}
