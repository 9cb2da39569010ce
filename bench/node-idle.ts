/**
 * `deno run -A bench/node-idle.ts [--rounds 3] [--env NAME=VALUE]…`: the idle memory of svc
 * embedded (PGlite) on Node, from fresh starts with default settings. Each round starts
 * `node dist/node/cli/node.js start` (build it first: `npm run -s build:node`) on a fresh data
 * folder (loaded from the prepared cluster when `npm ci` made one), waits for `/readyz`, and reads
 * the process's RSS 0, 30, 65 and 120 s after ready (the password worker that made the boot's
 * dummy hash stops after `SVC_PASSWORD_WORKER_IDLE_SECONDS`, 60 by default), with the parts of
 * `/proc/<pid>/smaps` at each reading: glibc's main heap (`[heap]`), glibc's per-thread arenas
 * (anonymous regions of at most 64 MiB at 64 MiB-aligned addresses), PGlite's WebAssembly memory
 * (the 128 MiB read-write region), the `node` executable's pages, and the rest (V8's heaps,
 * stacks, other mappings). `--env` adds a variable to the server's environment, for instance
 * `--env MALLOC_ARENA_MAX=2`; the rounds with and without it run side by side when `--compare` is
 * given (each round starts both, at the same time). Prints medians of the rounds.
 */
const args = Deno.args;
const rounds = args.includes("--rounds") ? Number(args[args.indexOf("--rounds") + 1]) : 3;
const extra: Record<string, string> = {};
args.forEach((arg, i) => {
  if (arg !== "--env") return;
  const [name, ...value] = args[i + 1].split("=");
  extra[name] = value.join("=");
});
const compare = args.includes("--compare");
const ROOT = new URL("../", import.meta.url).pathname;
const READINGS_S = [0, 30, 65, 120];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Parts {
  rss: number;
  heap: number;
  arenas: number;
  wasm: number;
  node: number;
  rest: number;
}

/** The parts of a process's resident memory, in MiB, from its smaps. */
function parts(pid: number): Parts {
  const text = Deno.readTextFileSync(`/proc/${pid}/smaps`);
  const p: Parts = { rss: 0, heap: 0, arenas: 0, wasm: 0, node: 0, rest: 0 };
  let kind: keyof Parts = "rest";
  for (const line of text.split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const start = BigInt(`0x${head[1]}`);
      const size = Number(BigInt(`0x${head[2]}`) - start);
      const name = head[4];
      const MiB64 = 64n * 1024n * 1024n;
      if (name === "[heap]") kind = "heap";
      else if (name.endsWith("/node")) kind = "node";
      else if (name === "" && head[3].startsWith("rw") && size === 128 * 1024 * 1024) kind = "wasm";
      else if (name === "" && start % MiB64 === 0n && size <= 64 * 1024 * 1024) kind = "arenas";
      else kind = "rest";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      p[kind] += Number(rss[1]) / 1024;
      p.rss += Number(rss[1]) / 1024;
    }
  }
  return p;
}

/** One fresh start: the parts at each of `READINGS_S`. */
async function round(env: Record<string, string>): Promise<Parts[]> {
  const dir = await Deno.makeTempDir({ prefix: "svc-node-idle-" });
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = new Deno.Command("node", {
    args: ["dist/node/cli/node.js", "start"],
    cwd: ROOT,
    env: { SVC_DATA_DIR: `${dir}/data`, SVC_PORT: String(port), ...env },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
      await res?.body?.cancel();
      if (res?.status === 200) break;
      await sleep(100);
    }
    const ready = performance.now();
    const out: Parts[] = [];
    for (const s of READINGS_S) {
      await sleep(Math.max(0, ready + s * 1000 - performance.now()));
      out.push(parts(child.pid));
    }
    return out;
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const variants: [string, Record<string, string>][] = compare
  ? [["default", {}], [Object.entries(extra).map(([k, v]) => `${k}=${v}`).join(" "), extra]]
  : [[Object.keys(extra).length ? JSON.stringify(extra) : "default", extra]];
const results = new Map<string, Parts[][]>(variants.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  const got = await Promise.all(variants.map(([, env]) => round(env)));
  variants.forEach(([name], i) => results.get(name)!.push(got[i]));
}
console.log(`svc embedded on Node ${(await nodeVersion()).trim()}, medians of ${rounds} fresh starts, MiB`);
console.log(
  "| settings | after ready | RSS | [heap] | arenas | WebAssembly memory | node executable | rest |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, runs] of results) {
  READINGS_S.forEach((s, i) => {
    const m = (k: keyof Parts) => median(runs.map((run) => run[i][k])).toFixed(0);
    console.log(
      `| ${name} | ${s} s | ${m("rss")} | ${m("heap")} | ${m("arenas")} | ${m("wasm")} | ${m("node")} | ${
        m("rest")
      } |`,
    );
  });
}

async function nodeVersion(): Promise<string> {
  const out = await new Deno.Command("node", { args: ["--version"], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout);
}
