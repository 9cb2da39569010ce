/**
 * CPU time of a server under a benchmark: its own process (every thread) and the Postgres
 * backends serving its database, read from Linux's `/proc`. A loaded machine skews CPU per request
 * less than it skews a rate.
 *
 * @module
 */
import postgres from "postgres";

/** CPU seconds (user and system, all threads) of a process (Linux /proc), 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds so far of a server's process and of the other backends of its database. */
export interface ServerCpu {
  /** CPU seconds of the server (`svc`) and of its database's backends (`postgres`). */
  read(): Promise<{ svc: number; postgres: number }>;
  close(): Promise<void>;
}

/** Reads the CPU of the server `pid` and of `databaseUrl`'s backends (found through a connection of its own). */
export async function serverCpu(pid: number, databaseUrl: string): Promise<ServerCpu> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const [{ pid: own }] = await sql`SELECT pg_backend_pid() AS pid`;
  return {
    async read() {
      const backends =
        await sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> ${own}`;
      return {
        svc: cpuSeconds(pid),
        postgres: backends.reduce((sum, row) => sum + cpuSeconds(Number(row.pid)), 0),
      };
    },
    close: () => sql.end(),
  };
}
