/**
 * The OpenAPI document `svc start` serves, obtained in process for the generated admin API
 * reference (docs/reference/admin-api.md): `runCli(["start"])` on the embedded store in a temporary
 * folder, with every built-in plugin enabled, a runtime that captures the request handler instead
 * of listening, then `GET /openapi.json` through that handler and a shutdown. The document is the
 * one a real server answers, not one assembled beside it.
 *
 * @module
 */
import { builtinPlugins } from "../plugins/builtin.ts";
import { denoRuntime } from "./deno-runtime.ts";
import { runCli, type RuntimeAdapter } from "./run.ts";

/** The port the captured server pretends to listen on (it appears in the document's `servers`). */
const PORT = 8080;

/** Boots `svc start` in process with every built-in plugin and returns its `/openapi.json`. */
export async function servedOpenApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-openapi-" });
  const errors: string[] = [];
  let handler: ((req: Request) => Response | Promise<Response>) | null = null;
  const ready = Promise.withResolvers<() => Promise<void>>();
  const runtime: RuntimeAdapter = {
    ...denoRuntime,
    env: () => ({
      SVC_DATA_DIR: dataDir,
      SVC_PORT: String(PORT),
      SVC_PLUGINS: builtinPlugins().map((plugin) => plugin.name).join(","),
      SVC_PASSWORD_HASH_WORKERS: "1",
      SVC_MAINTENANCE_INTERVAL_SECONDS: "0",
    }),
    serve(handle) {
      handler = (req) => handle(req, { address: "127.0.0.1" });
      return Promise.resolve({ port: PORT, close: () => Promise.resolve() });
    },
    // Installed once the server is up: the signal that the handler serves the whole app.
    onShutdown: (stop) => ready.resolve(stop),
    print: () => {},
    printError: (line) => void errors.push(line),
  };
  const exit = runCli(["start"], runtime);
  try {
    const stop = await Promise.race([
      ready.promise,
      exit.then((code): never => {
        throw new Error(`svc start exited ${code} before serving:\n${errors.join("\n")}`);
      }),
    ]);
    let document: Record<string, unknown> | Error;
    try {
      const res = await handler!(new Request(`http://localhost:${PORT}/openapi.json`));
      document = res.status === 200
        ? await res.json()
        : new Error(`GET /openapi.json answered ${res.status}`);
    } catch (err) {
      document = err instanceof Error ? err : new Error(String(err));
    }
    // Stopped whatever the answer: the store, its lock and the password workers are released.
    await stop();
    const code = await exit;
    if (code !== 0) throw new Error(`svc start stopped with ${code}:\n${errors.join("\n")}`);
    if (document instanceof Error) throw document;
    return document;
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await servedOpenApiDocument(), null, 2));
}
