/**
 * Pickers: a field that finds a user, organization, service account, group or role by email,
 * name or key through the admin API's list searches (suggestions in a native `<datalist>`, so
 * the browser's own combobox is keyboard- and screen-reader-friendly), and names for ids in
 * lists. No UUID is ever typed or shown where a name exists (issue 27); an id pasted into a
 * picker still works.
 *
 * @module
 */
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { api, ApiError, query } from "./api.ts";

/** What a picker finds. */
export type PickKind = "User" | "Organization" | "ServiceAccount" | "Group" | "Role";

/** One thing found: its id, the text that names it uniquely, and a longer description. */
export interface PickOption {
  readonly id: string;
  /** The unique handle typed in the field: an email, an organization name or a key. */
  readonly handle: string;
  /** The display name (or "" when none). */
  readonly name: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const NOUNS: Record<PickKind, string> = {
  User: "user",
  Organization: "organization",
  ServiceAccount: "service account",
  Group: "group",
  Role: "role",
};

// deno-lint-ignore no-explicit-any
type Item = any;

const SOURCES: Record<
  PickKind,
  {
    list: (text: string, limit: number) => string;
    item: (id: string) => string;
    option: (x: Item) => PickOption;
  }
> = {
  User: {
    list: (q, limit) => `/svc-admin/users${query({ q, limit })}`,
    item: (id) => `/svc-admin/users/${id}`,
    option: (x) => ({ id: x.id, handle: x.email, name: x.displayName ?? "" }),
  },
  Organization: {
    list: (search, limit) => `/svc-admin/organizations${query({ search, limit })}`,
    item: (id) => `/svc-admin/organizations/${id}`,
    option: (x) => ({ id: x.id, handle: x.name, name: x.displayName ?? "" }),
  },
  ServiceAccount: {
    list: (search, limit) => `/svc-admin/service-accounts${query({ search, limit })}`,
    item: (id) => `/svc-admin/service-accounts/${id}`,
    option: (x) => ({ id: x.id, handle: x.key, name: x.displayName ?? "" }),
  },
  Group: {
    list: (search, limit) => `/svc-admin/groups${query({ search, limit })}`,
    item: (id) => `/svc-admin/groups/${id}`,
    option: (x) => ({ id: x.id, handle: x.key, name: x.displayName ?? "" }),
  },
  Role: {
    list: (search, limit) => `/svc-admin/roles${query({ search, limit })}`,
    item: (id) => `/svc-admin/roles/${id}`,
    option: (x) => ({ id: x.id, handle: x.key, name: x.displayName ?? "" }),
  },
};

/** Things of `kind` whose handle or name contains `text` (at most `limit`). */
export async function searchPick(kind: PickKind, text: string, limit = 10): Promise<PickOption[]> {
  const list = await api<{ items: Item[] }>("GET", SOURCES[kind].list(text.trim(), limit));
  return list.items.map(SOURCES[kind].option);
}

/**
 * The id of what `text` names: an id as is, else the one whose handle (email, name, key) is
 * `text`, else the only one whose display name is `text`; a field error otherwise.
 */
export async function resolvePick(kind: PickKind, text: string, field: string): Promise<string> {
  const value = text.trim();
  if (UUID.test(value)) return value.toLowerCase();
  const found = value === "" ? [] : await searchPick(kind, value, 50);
  const lower = value.toLowerCase();
  const byHandle = found.find((o) => o.handle.toLowerCase() === lower);
  if (byHandle) return byHandle.id;
  const byName = found.filter((o) => o.name.toLowerCase() === lower);
  if (byName.length === 1) return byName[0].id;
  const message = byName.length > 1
    ? `Several ${NOUNS[kind]}s are called ${value}: pick one from the suggestions.`
    : `No ${NOUNS[kind]} matching ${value} is visible to you.`;
  throw new ApiError(404, "not_found", message, { field });
}

let pickerSeq = 0;

/**
 * A labelled search field with suggestions of `kind`; its form value is the typed text, turned
 * into an id with {@link resolvePick} when the form is sent.
 */
export function Picker(props: {
  kind: PickKind;
  label: string;
  name: string;
  required?: boolean;
  error?: string;
  hint?: string;
  placeholder?: string;
  /** The text it starts with (a handle). */
  value?: string;
}) {
  const [id] = useState(() => `p${++pickerSeq}`);
  const [options, setOptions] = useState<PickOption[]>([]);
  const timer = useRef<number | null>(null);
  const latest = useRef("");
  useEffect(() => () => {
    if (timer.current !== null) clearTimeout(timer.current);
  }, []);
  const onInput = (e: Event) => {
    const text = (e.target as HTMLInputElement).value;
    latest.current = text;
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      searchPick(props.kind, text).then(
        (found) => {
          if (latest.current === text) setOptions(found);
        },
        () => setOptions([]),
      );
    }, 200) as unknown as number;
  };
  const describedBy = [props.error ? `${id}-err` : "", props.hint ? `${id}-hint` : ""].filter(Boolean).join(
    " ",
  );
  return (
    <div class="field">
      <label for={id} class={props.required ? "required" : undefined}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type="search"
        list={`${id}-list`}
        required={props.required}
        autocomplete="off"
        placeholder={props.placeholder}
        value={props.value}
        aria-invalid={props.error ? "true" : undefined}
        aria-describedby={describedBy || undefined}
        onInput={onInput}
        onFocus={onInput}
        data-picker={props.kind}
      />
      <datalist id={`${id}-list`}>
        {options.map((o) => (
          <option key={o.id} value={o.handle}>
            {o.name && o.name !== o.handle ? o.name : NOUNS[props.kind]}
          </option>
        ))}
      </datalist>
      {props.hint ? <small id={`${id}-hint`} class="hint">{props.hint}</small> : null}
      {props.error ? <small id={`${id}-err`} class="field-error">{props.error}</small> : null}
    </div>
  );
}

const names = new Map<string, Promise<string>>();

/** How a thing of `kind` reads in a list: "Display name (handle)", or its handle. */
export function describePick(o: PickOption): string {
  return o.name && o.name !== o.handle ? `${o.name} (${o.handle})` : o.handle;
}

/** The name of the thing with this id (looked up once per page load; the short id when unknown). */
export function nameOf(kind: PickKind, id: string): Promise<string> {
  const key = `${kind}:${id}`;
  let found = names.get(key);
  if (!found) {
    found = api<Item>("GET", SOURCES[kind].item(id)).then(
      (x) => describePick(SOURCES[kind].option(x)),
      () => `${NOUNS[kind]} ${id.slice(0, 8)}…`,
    );
    names.set(key, found);
  }
  return found;
}

/** A thing's name in a list, in place of its id (the id on hover). */
export function Named(props: { kind: PickKind; id: string }) {
  const [text, setText] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    nameOf(props.kind, props.id).then((t) => {
      if (live) setText(t);
    });
    return () => {
      live = false;
    };
  }, [props.kind, props.id]);
  return <span title={props.id} data-named={props.kind}>{text ?? "…"}</span>;
}
