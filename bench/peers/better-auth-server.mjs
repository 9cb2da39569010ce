/**
 * Better Auth as a peer for bench/peers/run.ts: `node bench/peers/better-auth-server.mjs`, email and
 * password sign-in on Postgres through its `pg` Pool adapter (its documented setup), everything else
 * at its defaults (scrypt password hashes, database sessions, no cookie cache).
 *
 * Environment: `DATABASE_URL` (a database of its own: its tables are created here, by its own
 * `getMigrations`, before listening), `PORT` (0: any free port), `BETTER_AUTH_SECRET`. Prints
 * `better-auth listening on http://127.0.0.1:<port>` once it listens; SIGTERM closes the server
 * and the pool.
 *
 * Its rate limiter is off (it is off by default outside `NODE_ENV=production`; set explicitly here
 * so that an environment variable cannot change what is measured); the bench raises svc's abuse-gate
 * limits in the same way, so that both sides do the whole sign-in on every request.
 */
import { createServer } from "node:http";
import { betterAuth } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { toNodeHandler } from "better-auth/node";
import pg from "pg";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error("DATABASE_URL is required");
const port = Number(process.env.PORT ?? 0);

const pool = new pg.Pool({ connectionString: databaseUrl });
const options = {
  database: pool,
  baseURL: "http://127.0.0.1",
  secret: process.env.BETTER_AUTH_SECRET ?? "bench-secret-bench-secret-bench-secret-0123",
  emailAndPassword: { enabled: true },
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
  logger: { level: "error" },
};
if (process.env.MIGRATE !== "0") {
  const { runMigrations } = await getMigrations(options);
  await runMigrations();
}
const auth = betterAuth(options);
const server = createServer(toNodeHandler(auth));
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => {
  console.log(`better-auth listening on http://127.0.0.1:${server.address().port}`);
});
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  pool.end().finally(() => process.exit(0));
});
