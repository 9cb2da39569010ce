/**
 * The condition editor: a condition document v1 as JSON, validated as it is typed by the
 * authorization engine's own parser (the same code the server runs), with a builder for
 * leaves and the engine's message next to the field.
 *
 * @module
 */
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { CONDITION_OPERATORS, parseConditionDocument } from "../../../core/authz/condition.ts";

/** The engine's verdict on a condition text: null when valid or empty. */
export function conditionProblem(text: string): string | null {
  if (text.trim() === "") return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return `Not valid JSON: ${(error as Error).message}`;
  }
  try {
    parseConditionDocument(json);
    return null;
  } catch (error) {
    const path = (error as { path?: string }).path;
    return `${(error as Error).message}${path ? ` (at ${path})` : ""}`;
  }
}

let seq = 0;

/** A condition field named `name` (JSON text), with live validation and a leaf builder. */
export function ConditionEditor(props: { name: string; serverError?: string }) {
  const [id] = useState(() => `cond${++seq}`);
  const [text, setText] = useState("");
  const [leaf, setLeaf] = useState({ attr: "resource.", op: "eq", value: "" });
  const fieldset = useRef<HTMLFieldSetElement>(null);
  // A form reset (after a successful add) empties the condition too: the text lives in state,
  // which a DOM reset alone leaves behind, so the next grant would silently carry it.
  useEffect(() => {
    const form = fieldset.current?.closest("form");
    if (!form) return;
    const clear = () => {
      setText("");
      setLeaf({ attr: "resource.", op: "eq", value: "" });
    };
    form.addEventListener("reset", clear);
    return () => form.removeEventListener("reset", clear);
  }, []);
  const problem = conditionProblem(text);
  const addLeaf = () => {
    let value: unknown = leaf.value;
    try {
      value = JSON.parse(leaf.value);
    } catch {
      // a plain string
    }
    const node: Record<string, unknown> = { op: leaf.op, attr: leaf.attr };
    if (leaf.op !== "exists") node.value = value;
    let doc: any;
    try {
      doc = text.trim() === "" ? null : JSON.parse(text);
    } catch {
      doc = null;
    }
    if (doc && doc.condition) {
      doc.condition = doc.condition.allOf
        ? { allOf: [...doc.condition.allOf, node] }
        : { allOf: [doc.condition, node] };
    } else {
      doc = { version: 1, condition: node };
    }
    setText(JSON.stringify(doc, null, 2));
  };
  const message = problem ?? props.serverError;
  return (
    <fieldset class="condition" ref={fieldset}>
      <legend>Condition (optional)</legend>
      <div class="field">
        <label for={id}>Condition document v1 (JSON)</label>
        <textarea
          id={id}
          name={props.name}
          rows={6}
          spellcheck={false}
          aria-invalid={message ? "true" : undefined}
          aria-describedby={`${id}-msg`}
          onInput={(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
          value={text}
        >
          {text}
        </textarea>
        <small id={`${id}-msg`} class={message ? "field-error" : "hint"} aria-live="polite">
          {message ?? (text.trim() === "" ? "No condition: the grant always applies." : "Valid condition.")}
        </small>
      </div>
      <div class="leaf-builder" role="group" aria-label="Add a comparison">
        <div class="field">
          <label for={`${id}-attr`}>Attribute</label>
          <input
            id={`${id}-attr`}
            value={leaf.attr}
            onInput={(e: Event) => setLeaf({ ...leaf, attr: (e.target as HTMLInputElement).value })}
          />
        </div>
        <div class="field">
          <label for={`${id}-op`}>Operator</label>
          <select
            id={`${id}-op`}
            onChange={(e: Event) => setLeaf({ ...leaf, op: (e.target as HTMLSelectElement).value })}
          >
            {CONDITION_OPERATORS.map((op) => (
              <option key={op} value={op} selected={op === leaf.op}>{op}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={`${id}-value`}>Value (JSON or text)</label>
          <input
            id={`${id}-value`}
            value={leaf.value}
            onInput={(e: Event) => setLeaf({ ...leaf, value: (e.target as HTMLInputElement).value })}
          />
        </div>
        <button type="button" onClick={addLeaf}>Add comparison</button>
      </div>
    </fieldset>
  );
}
