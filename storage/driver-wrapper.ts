/**
 * Wrapping kysely's driver of a dialect: the connection pool figures (`pool-stats.ts`) and the
 * statement spans (`tracing.ts`) each replace how connections are taken and given back, and pass
 * every other driver call through unchanged.
 *
 * @module
 */
import type { Dialect, Driver } from "kysely";

/** `dialect` with its driver replaced by `wrap(its driver)`; adapter, compiler, introspector kept. */
export function withDriver(dialect: Dialect, wrap: (inner: Driver) => Driver): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => wrap(dialect.createDriver()),
  };
}

/**
 * A driver that passes every call to `inner`, with `acquireConnection` and `releaseConnection`
 * replaced where `overrides` gives them. Savepoints exist only where the inner driver has them
 * (kysely checks for the methods).
 */
export function delegatingDriver(
  inner: Driver,
  overrides: Partial<Pick<Driver, "acquireConnection" | "releaseConnection">>,
): Driver {
  const driver: Driver = {
    init: (options) => inner.init(options),
    acquireConnection: overrides.acquireConnection ?? ((options) => inner.acquireConnection(options)),
    beginTransaction: (connection, settings) => inner.beginTransaction(connection, settings),
    commitTransaction: (connection) => inner.commitTransaction(connection),
    rollbackTransaction: (connection) => inner.rollbackTransaction(connection),
    releaseConnection: overrides.releaseConnection ??
      ((connection, options) => inner.releaseConnection(connection, options)),
    destroy: (options) => inner.destroy(options),
  };
  if (inner.savepoint) driver.savepoint = inner.savepoint.bind(inner);
  if (inner.rollbackToSavepoint) driver.rollbackToSavepoint = inner.rollbackToSavepoint.bind(inner);
  if (inner.releaseSavepoint) driver.releaseSavepoint = inner.releaseSavepoint.bind(inner);
  return driver;
}
