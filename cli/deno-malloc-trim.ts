/**
 * Gives the C heap's free pages back to the system on Linux with glibc, where Deno allocates its
 * native memory (Rust's allocator is the system `malloc`). glibc keeps the memory a thread freed in
 * that thread's arena for reuse, and only trims the top of the main heap: after the boot (PGlite's
 * WebAssembly compiled on V8's background threads, the module graph's sources) about 20 MiB of an
 * idle embedded server is free but resident, and a load leaves more. `malloc_trim(0)` releases
 * the free pages inside every arena; it takes a millisecond or two and frees nothing in use, so the
 * server calls it every `intervalMs`. It leaves the free top of a thread's arena alone, which
 * {@link limitRetainedFreeMemory} has glibc give back on its own (docs/operations/memory.md).
 *
 * Where it cannot work (no FFI permission, no glibc: macOS, Windows, musl) it does nothing.
 *
 * @module
 */

/** The function that trims, or null when this process cannot. */
export function loadMallocTrim(): (() => void) | null {
  if (Deno.build.os !== "linux") return null;
  try {
    const libc = Deno.dlopen("libc.so.6", { malloc_trim: { parameters: ["usize"], result: "i32" } });
    return () => void libc.symbols.malloc_trim(0n);
  } catch {
    return null; // no --allow-ffi, or a libc without malloc_trim
  }
}

/** glibc's `mallopt` parameter for the trim threshold. */
const M_TRIM_THRESHOLD = -1;
/** The threshold {@link limitRetainedFreeMemory} sets: glibc's own default before it adapts. */
const TRIM_THRESHOLD_BYTES = 128 * 1024;

/**
 * Makes glibc give back the free top of a thread's arena as soon as it exceeds 128 KiB, in the
 * `free()` that frees it. `malloc_trim` releases free chunks inside every arena, but not the free
 * top of a thread's arena; glibc gives that back when it exceeds the trim threshold, which it
 * raises after each large free (up to 64 MiB). V8 compiles PGlite's hot functions (tier-up to
 * TurboFan) on its background threads, whose arenas then held 20-30 MiB free but resident for the
 * process's life. Fixing the threshold also fixes the `mmap` threshold at its default (128 KiB):
 * a block of that size or more is mapped and unmapped on its own instead of staying in a heap.
 * The cost is more `brk`/`madvise`/`mmap` calls; it changes no result. Returns whether it was set
 * (false without the FFI permission or off glibc). Process-wide: call it before the store opens.
 */
export function limitRetainedFreeMemory(): boolean {
  // The Deno adapter calls this when it loads, and `server.ts` bundles it for Node too: no `Deno` there.
  if (typeof Deno === "undefined" || Deno.build.os !== "linux") return false;
  // Asked, not requested: a process without the FFI permission is never prompted for it.
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return false;
  try {
    const libc = Deno.dlopen("libc.so.6", { mallopt: { parameters: ["i32", "i32"], result: "i32" } });
    try {
      return libc.symbols.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) === 1;
    } finally {
      libc.close();
    }
  } catch {
    return false; // no --allow-ffi, or a libc without mallopt
  }
}

/** Trims every `intervalMs` until the returned function is called; the timer keeps no process alive. */
export function trimFreedMemoryEvery(intervalMs: number): () => void {
  const trim = loadMallocTrim();
  if (trim === null) return () => {};
  const timer = setInterval(trim, intervalMs);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
