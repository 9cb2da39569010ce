/**
 * `bun cli/bun.ts <command>`: svc on Bun.
 *
 * @module
 */
import { lookup } from "node:dns/promises";
import { readFile } from "node:fs/promises";
import process from "node:process";
import { runCli, type RuntimeAdapter } from "./run.ts";

/** The part of Bun's global this adapter uses (Bun's own types are not installed). */
interface BunServer {
  readonly port: number;
  requestIP(req: Request): { address: string } | null;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
const bun = (globalThis as unknown as {
  Bun: {
    serve(options: {
      hostname: string;
      port: number;
      fetch: (req: Request, server: BunServer) => Response | Promise<Response>;
    }): BunServer;
  };
}).Bun;

const adapter: RuntimeAdapter = {
  name: "bun",
  env: () => ({ ...process.env }),
  readTextFile: (path) => readFile(path, "utf8"),
  async resolveHost(hostname) {
    try {
      return (await lookup(hostname, { all: true })).map((entry) => entry.address);
    } catch {
      return [];
    }
  },
  serve(fetch, { hostname, port }) {
    const server = bun.serve({
      hostname,
      port,
      fetch: (req, bunServer) => fetch(req, { address: bunServer.requestIP(req)?.address }),
    });
    return Promise.resolve({ port: server.port, close: () => server.stop() });
  },
  onShutdown(handler) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void handler());
  },
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
};

process.exit(await runCli(process.argv.slice(2), adapter));
