/**
 * A labelled text input of the hosted pages: the `<label for>` + `<input id>` pair every form
 * repeats, with the value handed back on each keystroke.
 *
 * @module
 */

/** What a {@link Field} takes: its id (also its name), label, value and the input's attributes. */
export interface FieldProps {
  readonly id: string;
  readonly label: string;
  readonly value: string;
  readonly onValue: (value: string) => void;
  readonly type?: "text" | "email" | "password";
  readonly autocomplete?: string;
  readonly inputMode?: "text" | "numeric" | "email";
  readonly required?: boolean;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly describedBy?: string;
}

/** A label and its input. */
export function Field(props: FieldProps) {
  return (
    <>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        name={props.id}
        type={props.type ?? "text"}
        autocomplete={props.autocomplete}
        inputMode={props.inputMode}
        required={props.required}
        minLength={props.minLength}
        maxLength={props.maxLength}
        aria-describedby={props.describedBy}
        value={props.value}
        onInput={(e: Event) => props.onValue((e.target as HTMLInputElement).value)}
      />
    </>
  );
}
