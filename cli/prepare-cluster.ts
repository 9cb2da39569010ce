/**
 * `deno run -A cli/prepare-cluster.ts [--if-missing] [OUT]`: writes the embedded store's prepared cluster (an
 * initialized empty cluster with svc's schema, gzip tarball) to OUT, by default where svc looks
 * for it ({@link PREPARED_CLUSTER_URL}). Run by `npm ci` (postinstall). A failure only warns: svc
 * then runs initdb on a first start, as it would without the file. `--if-missing` keeps a file
 * already there (`npm run build:binary`).
 *
 * @module
 */
import { prepareEmbeddedCluster } from "../storage/open.ts";
import { PREPARED_CLUSTER_URL } from "./prepared-cluster.ts";

const ifMissing = Deno.args.includes("--if-missing");
const out = Deno.args.find((arg) => arg !== "--if-missing") ?? PREPARED_CLUSTER_URL.pathname;
const present = await Deno.stat(out).then(() => true, () => false);
if (ifMissing && present) Deno.exit(0);
try {
  const started = performance.now();
  const cluster = await prepareEmbeddedCluster();
  await Deno.mkdir(out.slice(0, out.lastIndexOf("/")) || ".", { recursive: true });
  const partial = `${out}.partial`;
  await Deno.writeFile(partial, new Uint8Array(await cluster.arrayBuffer()));
  await Deno.rename(partial, out);
  console.log(
    `svc: prepared the embedded store's cluster (${Math.round(cluster.size / 1024)} KiB) at ${out} in ${
      Math.round(performance.now() - started)
    } ms`,
  );
} catch (err) {
  console.error(`svc: could not prepare the embedded cluster (first starts will run initdb): ${err}`);
}
