/**
 * An example host file: svc's CLI on Deno with a third-party plugin installed.
 *
 * ```sh
 * SVC_GREETING_MESSAGE=Hi deno run -A examples/host.ts start
 * curl 'http://localhost:8080/greeting/hello?name=Ada'
 * ```
 *
 * A host imports svc's host API (`server.ts`, published as `@svc/svc/server`) with the runtime
 * adapter of its runtime (`denoRuntime`, `nodeRuntime`, `bunAdapter()`), and passes its plugins
 * to `runCli`; built-in plugins (`SVC_PLUGINS=oidc-provider`) may be enabled beside them.
 *
 * @module
 */
import { denoRuntime, runCli } from "../server.ts";
import { greetingPlugin } from "./greeting-plugin.ts";

Deno.exit(await runCli(Deno.args, denoRuntime, { plugins: [greetingPlugin((line) => console.log(line))] }));
