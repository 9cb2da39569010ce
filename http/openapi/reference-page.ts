/**
 * The browsable API reference at `GET /openapi`: a static page and its script and stylesheet,
 * embedded in the server (no CDN, no inline script or style, a strict Content-Security-Policy).
 * The script fetches `openapi.json` next to the page and renders every operation with its
 * parameters, bodies and answers.
 *
 * @module
 */

/** The page. Relative URLs, so it works under any path base. */
export const REFERENCE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>svc API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="openapi/reference.css">
<script type="module" src="openapi/reference.js"></script>
</head>
<body>
<header><h1>svc API reference</h1><p><a href="openapi.json">openapi.json</a> (OpenAPI 3.1)</p></header>
<div class="layout">
<nav aria-label="Operations by tag"><label for="filter">Filter</label><input id="filter" type="search" autocomplete="off"><ul id="toc"></ul></nav>
<main id="operations" aria-live="polite"><p>Loading the document…</p></main>
</div>
</body>
</html>
`;

/** The stylesheet (light and dark schemes). */
export const REFERENCE_CSS =
  `:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--code:#f6f8fa;--accent:#0550ae}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9da7b3;--line:#30363d;--code:#161b22;--accent:#6cb6ff}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{padding:1rem 1.5rem;border-bottom:1px solid var(--line)}header h1{margin:0;font-size:1.4rem}header p{margin:.25rem 0 0}
a{color:var(--accent)}a:focus-visible,input:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.layout{display:grid;grid-template-columns:minmax(14rem,20rem) 1fr}
nav{border-right:1px solid var(--line);padding:1rem;max-height:calc(100vh - 5rem);overflow:auto;position:sticky;top:0}
nav label{display:block;font-weight:600}nav input{width:100%;margin:.25rem 0 1rem;padding:.35rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:4px}
nav ul{list-style:none;margin:0;padding:0}nav li{margin:.15rem 0}nav .tag{margin-top:.75rem;font-weight:600}
main{padding:1rem 1.5rem;min-width:0}section.op{border:1px solid var(--line);border-radius:6px;margin:0 0 1rem;padding:.75rem 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}h3{font-size:1rem;margin:.75rem 0 .25rem}
.method{display:inline-block;min-width:4.2rem;font:600 .8rem ui-monospace,monospace;text-align:center;padding:.1rem .3rem;border-radius:4px;border:1px solid currentColor;margin-right:.5rem}
code,pre{font-family:ui-monospace,monospace;font-size:.85rem}pre{background:var(--code);padding:.5rem;overflow:auto;border-radius:4px}
.muted{color:var(--muted)}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid var(--line);text-align:left;padding:.25rem .4rem;vertical-align:top}
@media (max-width:50rem){.layout{grid-template-columns:1fr}nav{position:static;max-height:none;border-right:0;border-bottom:1px solid var(--line)}}
`;

/** The script: fetches the document and renders it with DOM calls only (no innerHTML). */
export const REFERENCE_JS = `const METHODS = ["get", "post", "put", "patch", "delete"];
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
};
let doc;
const resolve = (schema) => {
  let s = schema, guard = 0;
  while (s && s.$ref && guard++ < 20) s = doc.components.schemas[s.$ref.split("/").pop()];
  return s || {};
};
const typeOf = (schema) => {
  if (schema.$ref) return schema.$ref.split("/").pop();
  if (schema.enum) return schema.enum.map((x) => JSON.stringify(x)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
  if (schema.type === "array") return (schema.items ? typeOf(schema.items) : "any") + "[]";
  return schema.type || "any";
};
const constraints = (schema) => {
  const out = [];
  for (const k of ["format", "pattern", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "default"]) {
    if (schema[k] !== undefined) out.push(k + ": " + JSON.stringify(schema[k]));
  }
  return out.join(", ");
};
function schemaTable(schema, depth = 0) {
  const s = resolve(schema);
  const props = s.properties;
  if (!props) return el("p", {}, el("code", {}, typeOf(schema)), " ", el("span", { class: "muted" }, constraints(s)));
  const rows = Object.entries(props).map(([name, p]) => {
    const inner = resolve(p.type === "array" && p.items ? p.items : p);
    const nested = depth < 3 && inner.properties ? schemaTable(inner, depth + 1) : null;
    return el("tr", {},
      el("td", {}, el("code", {}, name), (s.required || []).includes(name) ? "" : el("span", { class: "muted" }, " optional")),
      el("td", {}, el("code", {}, typeOf(p)), " ", el("span", { class: "muted" }, constraints(resolve(p))), p.description ? el("div", {}, p.description) : null, nested));
  });
  return el("table", {}, el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Field"), el("th", { scope: "col" }, "Type"))), el("tbody", {}, ...rows));
}
function operation(path, method, op) {
  const id = op.operationId;
  const section = el("section", { class: "op", id, "data-search": (method + " " + path + " " + op.summary).toLowerCase() },
    el("h3", {}, el("span", { class: "method" }, method.toUpperCase()), el("code", {}, path)),
    el("p", {}, op.summary));
  if (op.description) section.append(el("p", { class: "muted" }, op.description));
  const auth = op.security && op.security.length === 0 ? "public" : op.security && op.security.some((s) => Object.keys(s).length === 0) ? "optional authentication" : "authenticated";
  section.append(el("p", {}, el("strong", {}, "Access: "), auth, op["x-svc-permissions"] ? " — " + op["x-svc-permissions"].join(" or ") : ""));
  if (op.parameters) {
    section.append(el("h3", {}, "Parameters"), el("table", {}, el("tbody", {}, ...op.parameters.map((p) =>
      el("tr", {}, el("td", {}, el("code", {}, p.name), " ", el("span", { class: "muted" }, p.in + (p.required ? ", required" : ""))),
        el("td", {}, el("code", {}, typeOf(p.schema || {})), " ", p.description || ""))))));
  }
  if (op.requestBody) {
    section.append(el("h3", {}, "Request body" + (op.requestBody.required ? "" : " (optional)")), schemaTable(op.requestBody.content["application/json"].schema));
  }
  section.append(el("h3", {}, "Responses"));
  for (const [status, r] of Object.entries(op.responses)) {
    const details = el("details", {}, el("summary", {}, el("code", {}, status), " ", r.description));
    const content = r.content && Object.values(r.content)[0];
    if (content && content.schema) details.append(schemaTable(content.schema));
    section.append(details);
  }
  return section;
}
async function main() {
  const main = document.getElementById("operations");
  const toc = document.getElementById("toc");
  try {
    const res = await fetch("openapi.json", { headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error("status " + res.status);
    doc = await res.json();
  } catch (err) {
    main.replaceChildren(el("p", { role: "alert" }, "The document could not be loaded (" + err.message + ")."));
    return;
  }
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = (op.tags && op.tags[0]) || "Other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push([path, method, op]);
    }
  }
  main.replaceChildren(el("p", {}, doc.info.title + " " + doc.info.version + (doc.info.description ? " — " + doc.info.description : "")));
  for (const [tag, ops] of [...byTag].sort(([a], [b]) => a.localeCompare(b))) {
    main.append(el("h2", { id: "tag-" + tag.replace(/[^A-Za-z0-9]+/g, "-") }, tag));
    toc.append(el("li", { class: "tag" }, el("a", { href: "#tag-" + tag.replace(/[^A-Za-z0-9]+/g, "-") }, tag)));
    for (const [path, method, op] of ops) {
      main.append(operation(path, method, op));
      toc.append(el("li", { "data-search": (method + " " + path + " " + op.summary).toLowerCase() }, el("a", { href: "#" + op.operationId }, method.toUpperCase() + " " + path)));
    }
  }
  document.getElementById("filter").addEventListener("input", (e) => {
    const q = e.target.value.trim().toLowerCase();
    for (const node of document.querySelectorAll("[data-search]")) node.hidden = q !== "" && !node.dataset.search.includes(q);
  });
}
main();
`;
