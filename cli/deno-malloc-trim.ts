/**
 * Gives the C heap's free pages back to the system on Linux with glibc, where Deno allocates its
 * native memory (Rust's allocator is the system `malloc`). glibc keeps the memory a thread freed in
 * that thread's arena for reuse, and only trims the top of the main heap: after the boot (PGlite's
 * WebAssembly compiled on V8's background threads, the module graph's sources) about 20 MiB of an
 * idle embedded server is free but resident, and a load leaves more. `malloc_trim(0)` releases
 * every free page of every arena; it takes a millisecond or two and frees nothing in use, so the
 * server calls it every `intervalMs` (docs/operations/memory.md).
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

/** Trims every `intervalMs` until the returned function is called; the timer keeps no process alive. */
export function trimFreedMemoryEvery(intervalMs: number): () => void {
  const trim = loadMallocTrim();
  if (trim === null) return () => {};
  const timer = setInterval(trim, intervalMs);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
