/**
 * A small RFC 4180 CSV reader (quoted fields, doubled quotes, CRLF or LF), for table exports
 * such as Postgres `\copy … TO … CSV HEADER` or SQL Server's export wizard.
 *
 * @module
 */

/** The records of a CSV text, each a list of fields. */
export function parseCsv(source: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const text = source.startsWith("\uFEFF") ? source.slice(1) : source;
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else field += ch;
      i++;
      continue;
    }
    if (ch === '"' && field === "") quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      row.push(field);
      field = "";
      if (!(row.length === 1 && row[0] === "")) rows.push(row);
      row = [];
      if (ch === "\r" && text[i + 1] === "\n") i++;
    } else field += ch;
    i++;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** The records of a CSV text with a header row, as objects keyed by the header's names (empty fields: null). */
export function parseCsvTable(source: string): Record<string, string | null>[] {
  const [header, ...rows] = parseCsv(source);
  if (header === undefined) return [];
  return rows.map((fields) => {
    const record: Record<string, string | null> = {};
    header.forEach((name, index) => {
      const value = fields[index];
      record[name.trim()] = value === undefined || value === "" ? null : value;
    });
    return record;
  });
}
