/**
 * `deno run -A cli/deno.ts <command>`: svc on Deno.
 *
 * @module
 */
import { runCli, type RuntimeAdapter } from "./run.ts";

const adapter: RuntimeAdapter = {
  name: "deno",
  env: () => Deno.env.toObject(),
  readTextFile: (path) => Deno.readTextFile(path),
  serve(fetch, { hostname, port }) {
    const server = Deno.serve(
      { hostname, port, onListen() {} },
      (req, info) => fetch(req, { address: (info.remoteAddr as Deno.NetAddr).hostname }),
    );
    return Promise.resolve({ port: server.addr.port, close: () => server.shutdown() });
  },
  onShutdown(handler) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => void handler());
  },
  async resolveHost(hostname) {
    const lookups = await Promise.allSettled([
      Deno.resolveDns(hostname, "A"),
      Deno.resolveDns(hostname, "AAAA"),
    ]);
    return lookups.flatMap((lookup) => lookup.status === "fulfilled" ? lookup.value : []);
  },
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
};

Deno.exit(await runCli(Deno.args, adapter));
