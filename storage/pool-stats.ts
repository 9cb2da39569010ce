/**
 * Connection pool figures for the metrics endpoint, counted where kysely takes and gives back a
 * connection: every query outside a transaction, and every transaction, acquires one connection
 * from its driver and releases it when done. On a Postgres server (postgres.js, which exposes no
 * pool figures of its own) an acquisition is a `reserve()` of one of the pool's `max` connections;
 * on the embedded store (PGlite, one connection) it is the turn on that single connection, so
 * `waiting` is the queue of queries and transactions behind the one running.
 *
 * @module
 */
import type { DatabaseConnection, Dialect } from "kysely";
import { delegatingDriver, withDriver } from "./driver-wrapper.ts";

/** The pool as it stands, read at scrape time. */
export interface DatabasePoolStats {
  /** Connections the pool may hold (postgres.js `max`; 1 for the embedded store). */
  readonly maxConnections: number;
  /** Connections handed out to a query or a transaction right now. */
  readonly inUse: number;
  /** Queries and transactions waiting for a connection right now. */
  readonly waiting: number;
  /** Connections handed out since the database was opened. */
  readonly acquisitions: number;
  /** Seconds spent waiting for a connection, summed over every acquisition since it was opened. */
  readonly waitSeconds: number;
}

/** Live pool figures and the dialect wrapper that keeps them. */
export class PoolStatsRecorder implements DatabasePoolStats {
  readonly maxConnections: number;
  readonly #now: () => number;
  #inUse = 0;
  #waiting = 0;
  #acquisitions = 0;
  #waitMs = 0;

  /** `now` is a monotonic clock in milliseconds (`performance.now`). */
  constructor(maxConnections: number, now: () => number = () => performance.now()) {
    this.maxConnections = maxConnections;
    this.#now = now;
  }

  /** Connections handed out right now. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Acquisitions waiting right now. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Connections handed out since the start. */
  get acquisitions(): number {
    return this.#acquisitions;
  }

  /** Seconds waited for a connection, in total. */
  get waitSeconds(): number {
    return this.#waitMs / 1000;
  }

  /** The dialect with its driver counted by this recorder. */
  wrap(dialect: Dialect): Dialect {
    return withDriver(dialect, (inner) =>
      delegatingDriver(inner, {
        acquireConnection: async (options) => {
          const started = this.#now();
          this.#waiting++;
          let connection: DatabaseConnection;
          try {
            connection = await inner.acquireConnection(options);
          } finally {
            this.#waiting--;
            this.#waitMs += this.#now() - started;
          }
          this.#inUse++;
          this.#acquisitions++;
          return connection;
        },
        releaseConnection: async (connection, options) => {
          try {
            await inner.releaseConnection(connection, options);
          } finally {
            this.#inUse--;
          }
        },
      }));
  }
}
