/**
 * Shared building blocks of the console pages: data loading with loading, error and empty
 * states, labelled fields with their errors, forms that map the API's validation issues to
 * their fields, confirmation dialogs (typed for irreversible actions) and secrets shown once.
 *
 * @module
 */
import { type Child, useCallback, useEffect, useRef, useState } from "hono/jsx/dom";
import { ApiError } from "./api.ts";
import { relativeTime } from "./time.ts";

/** The state of data loaded from the API. */
export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  reload(): void;
}

/**
 * Whether the component is still on the page. hono/jsx/dom runs an effect that was scheduled
 * just before its component was removed after the removal, and never runs that effect's
 * cleanup; state set from there puts the removed component back on the page (a second copy of
 * a page after a navigation). Work that ends after an await checks this before setting state.
 */
export function useMounted(): { readonly current: boolean } {
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  return mounted;
}

/** Loads data with `loader`, again whenever `key` changes or `reload()` is called. */
export function useLoad<T>(loader: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const mounted = useMounted();
  useEffect(() => {
    if (!mounted.current) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loader().then(
      (data) => live && mounted.current && setState({ data, loading: false }),
      (error) => live && mounted.current && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: () => setTick((t) => t + 1),
  };
}

/** "in 10 minutes", "in 45 seconds": when a blocked attempt may be tried again (minutes rounded up). */
export function retryWhen(seconds: number): string {
  const format = new Intl.RelativeTimeFormat("en", { numeric: "always" });
  return seconds < 60
    ? format.format(Math.max(1, Math.ceil(seconds)), "second")
    : format.format(Math.ceil(seconds / 60), "minute");
}

/** What an error means to the reader. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 403) {
      return `Forbidden (403): you do not have permission for this. ${error.message}`;
    }
    if (error.status === 404) return `Not found (404): ${error.message}`;
    if (error.code === "login_blocked") {
      const seconds = error.details?.retryAfterSeconds;
      return typeof seconds === "number" && seconds > 0
        ? `Too many sign-in attempts. Try again ${retryWhen(seconds)}.`
        : "Too many sign-in attempts. Wait a moment, then try again.";
    }
    return `${error.message} (${error.code})`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** An error message, announced to assistive technology. */
export function ErrorNote(props: { error: unknown }) {
  const forbidden = props.error instanceof ApiError && props.error.status === 403;
  return (
    <p class={forbidden ? "error forbidden" : "error"} role="alert">
      {describeError(props.error)}
    </p>
  );
}

/** Renders loaded data: a loading note, the error, or `children(data)`. */
export function Show<T>(props: { loaded: Loaded<T>; children: (data: T) => Child }) {
  const { loaded } = props;
  if (loaded.error !== undefined) return <ErrorNote error={loaded.error} />;
  if (loaded.data === undefined) return <p class="muted" role="status">Loading…</p>;
  return <>{props.children(loaded.data)}</>;
}

let firstPage = true;

/** The next page takes the focus even if it is the first of the load (after signing in). */
export function focusNextPage(): void {
  firstPage = false;
}

/**
 * A page: after a navigation inside the console its heading takes the focus (for keyboard and
 * screen-reader users); the first page of a load leaves the focus at the document's start, so
 * the skip link comes first.
 */
export function Page(props: { title: string; children?: Child; actions?: Child }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · svc admin`;
    if (firstPage) firstPage = false;
    else heading.current?.focus();
  }, [props.title]);
  return (
    <section class="page">
      <div class="page-head">
        <h1 tabIndex={-1} ref={heading}>{props.title}</h1>
        {props.actions}
      </div>
      {props.children}
    </section>
  );
}

/** An empty state. */
export function Empty(props: { children: Child }) {
  return <p class="empty">{props.children}</p>;
}

let fieldSeq = 0;

/** A labelled input with its error next to it. */
export function Field(props: {
  label: string;
  name: string;
  type?: string;
  required?: boolean;
  value?: string;
  placeholder?: string;
  error?: string;
  hint?: string;
  autocomplete?: string;
  inputmode?: "numeric" | "text" | "email";
  multiline?: boolean;
  rows?: number;
  options?: readonly (string | [string, string])[];
  onInput?: (value: string) => void;
}) {
  const [id] = useState(() => `f${++fieldSeq}`);
  const describedBy = [props.error ? `${id}-err` : "", props.hint ? `${id}-hint` : ""].filter(Boolean).join(
    " ",
  );
  const common = {
    id,
    name: props.name,
    required: props.required,
    "aria-invalid": props.error ? "true" : undefined,
    "aria-describedby": describedBy || undefined,
    onInput: props.onInput ? (e: Event) => props.onInput!((e.target as HTMLInputElement).value) : undefined,
  };
  let control: Child;
  if (props.options) {
    control = (
      <select {...common} value={props.value}>
        {props.options.map((o) => {
          const [value, text] = typeof o === "string" ? [o, o] : o;
          return <option key={value} value={value} selected={value === props.value}>{text}</option>;
        })}
      </select>
    );
  } else if (props.multiline) {
    control = <textarea {...common} rows={props.rows ?? 6} spellcheck={false}>{props.value ?? ""}</textarea>;
  } else {
    control = (
      <input
        {...common}
        type={props.type ?? "text"}
        value={props.value}
        placeholder={props.placeholder}
        autocomplete={props.autocomplete}
        inputmode={props.inputmode}
      />
    );
  }
  return (
    <div class="field">
      <label for={id} class={props.required ? "required" : undefined}>{props.label}</label>
      {control}
      {props.hint ? <small id={`${id}-hint`} class="hint">{props.hint}</small> : null}
      {props.error ? <small id={`${id}-err`} class="field-error">{props.error}</small> : null}
    </div>
  );
}

/** The state of a form that calls the API. */
export interface FormState {
  readonly busy: boolean;
  readonly error: unknown;
  /** Validation messages by field path (from `details.issues` / `details.field`). */
  readonly fields: Record<string, string>;
  /** The submit handler: collects the form's values and runs the action. */
  onSubmit(e: Event): void;
}

/** Form values by name (strings). */
export type FormValues = Record<string, string>;

/** A form whose `action` gets the values; API validation issues land on their fields. */
export function useForm(action: (values: FormValues, form: HTMLFormElement) => Promise<void>): FormState {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [fields, setFields] = useState<Record<string, string>>({});
  const mounted = useMounted();
  const onSubmit = useCallback((e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const values: FormValues = {};
    new FormData(form).forEach((value, key) => {
      if (typeof value === "string") values[key] = key in values ? `${values[key]},${value}` : value;
    });
    setBusy(true);
    setError(undefined);
    setFields({});
    action(values, form).then(
      () => mounted.current && setBusy(false),
      (err) => {
        // The action may have navigated away before it failed: nothing left to show it on.
        if (!mounted.current) return;
        setBusy(false);
        setError(err);
        if (err instanceof ApiError && err.details) {
          const next: Record<string, string> = {};
          const issues = err.details.issues;
          if (Array.isArray(issues)) {
            for (const issue of issues) {
              if (issue && typeof issue.path === "string") next[issue.path] ??= issue.message;
            }
          }
          if (typeof err.details.field === "string") next[err.details.field] = err.message;
          setFields(next);
        }
      },
    );
  }, [action]);
  return { busy, error, fields, onSubmit };
}

/** The error of a form, above its buttons. */
export function FormError(props: { form: FormState }) {
  return props.form.error === undefined ? null : <ErrorNote error={props.form.error} />;
}

/** A submit button that shows the form is busy. */
export function Submit(props: { form: FormState; children: Child; danger?: boolean }) {
  return (
    <button
      type="submit"
      class={props.danger ? "danger" : "primary"}
      disabled={props.form.busy}
      aria-busy={props.form.busy}
    >
      {props.form.busy ? "Working…" : props.children}
    </button>
  );
}

/**
 * A button that asks before a destructive action, in a modal dialog. With `typed`, the
 * action runs only after the reader types that text.
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  message: Child;
  typed?: string;
  reason?: boolean;
  confirmLabel?: string;
  onConfirm: (reason: string) => Promise<void>;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState("");
  const form = useForm(async (values) => {
    await props.onConfirm(values.reason ?? "");
    dialog.current?.close();
  });
  const ready = props.typed === undefined || typed === props.typed;
  return (
    <>
      <button type="button" class="danger" onClick={() => dialog.current?.showModal()}>{props.label}</button>
      <dialog ref={dialog} aria-label={props.title}>
        <form onSubmit={form.onSubmit}>
          <h2>{props.title}</h2>
          <div>{props.message}</div>
          {props.reason ? <Field label="Reason" name="reason" required error={form.fields.reason} /> : null}
          {props.typed !== undefined
            ? (
              <Field
                label={`Type ${props.typed} to confirm`}
                name="confirmation"
                required
                autocomplete="off"
                onInput={setTyped}
              />
            )
            : null}
          <FormError form={form} />
          <div class="actions">
            <button type="button" onClick={() => dialog.current?.close()}>Cancel</button>
            <button type="submit" class="danger" disabled={!ready || form.busy}>
              {props.confirmLabel ?? props.label}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** A secret shown this once, with a copy button. */
export function SecretOnce(props: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status">
      <p>
        <strong>{props.label}</strong> — shown this once: copy it now.
      </p>
      <code data-secret>{props.value}</code>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(props.value).then(() => setCopied(true), () => setCopied(false))}
      >
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}

/** A value to give someone else (a URL, an id), with a copy button labelled after it. */
export function CopyValue(props: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="copy-value">
      <span class="copy-label">{props.label}</span>
      <code data-copy={props.label}>{props.value}</code>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(props.value).then(() => setCopied(true), () => setCopied(false))}
      >
        {copied ? "Copied" : "Copy"}
        <span class="sr-only">{` ${props.label}`}</span>
      </button>
    </div>
  );
}

/** A date-time for people (ISO text in): the local date and time, and how long ago when recent. */
export function When(props: { at: string | Date | null | undefined }) {
  if (!props.at) return <span class="muted">—</span>;
  const date = new Date(props.at);
  if (Number.isNaN(date.getTime())) return <span class="muted">—</span>;
  const text = date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  const relative = relativeTime(date);
  return (
    <time datetime={date.toISOString()} title={date.toLocaleString()}>
      {relative ? `${text} (${relative})` : text}
    </time>
  );
}

/** Previous/next paging over an `{offset, limit, total}` list. */
export function Pager(
  props: { offset: number; limit: number; total: number; onPage: (offset: number) => void },
) {
  const { offset, limit, total } = props;
  if (total <= limit && offset === 0) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => props.onPage(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span>{total === 0 ? 0 : offset + 1}–{Math.min(offset + limit, total)} of {total}</span>
      <button type="button" disabled={offset + limit >= total} onClick={() => props.onPage(offset + limit)}>
        Next
      </button>
    </nav>
  );
}

/**
 * A table of `rows`: one header per column (an empty label heads a column of row actions, named
 * for screen readers only) and one `<tr>` per row, whose cells `row` gives.
 */
export function Table<T>(
  props: { columns: readonly string[]; rows: readonly T[]; row: (item: T) => Child; caption?: string },
) {
  return (
    <table>
      {props.caption ? <caption class="sr-only">{props.caption}</caption> : null}
      <thead>
        <tr>
          {props.columns.map((label) => (
            <th key={label} scope="col">{label === "" ? <span class="sr-only">Actions</span> : label}</th>
          ))}
        </tr>
      </thead>
      <tbody>{props.rows.map((item, i) => <tr key={i}>{props.row(item)}</tr>)}</tbody>
    </table>
  );
}

/** One page of an `{items, offset, limit, total}` list from the admin API. */
export interface ListPage<T> {
  readonly items: readonly T[];
  readonly offset: number;
  readonly limit: number;
  readonly total: number;
}

/** A page of a list: the empty note, or its {@link Table} with the {@link Pager} under it. */
export function PagedTable<T>(
  props: {
    list: ListPage<T>;
    empty: string;
    columns: readonly string[];
    row: (item: T) => Child;
    onPage: (offset: number) => void;
    caption?: string;
  },
) {
  const { list } = props;
  if (list.items.length === 0 && list.offset === 0) return <Empty>{props.empty}</Empty>;
  return (
    <>
      <Table columns={props.columns} rows={list.items} row={props.row} caption={props.caption} />
      <Pager offset={list.offset} limit={list.limit} total={list.total} onPage={props.onPage} />
    </>
  );
}
