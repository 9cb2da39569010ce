/**
 * A small hash router: routes are `#/path?query`, so every console URL is the shell plus a
 * fragment and a reload keeps the page.
 *
 * @module
 */
import { useEffect, useState } from "hono/jsx/dom";

/** The current route: path segments and query parameters. */
export interface Route {
  readonly path: string;
  readonly segments: string[];
  readonly params: URLSearchParams;
}

/** The route of the current location. */
export function currentRoute(): Route {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, search = ""] = hash.split("?", 2);
  return {
    path,
    segments: path.split("/").filter((s) => s !== "").map(decodeURIComponent),
    params: new URLSearchParams(search),
  };
}

/** The current route, re-rendering on navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener("hashchange", update);
    return () => removeEventListener("hashchange", update);
  }, []);
  return route;
}

/** The `href` of a console route. */
export function href(path: string): string {
  return `#${path}`;
}

/** Goes to a console route. */
export function navigate(path: string): void {
  location.hash = path;
}
