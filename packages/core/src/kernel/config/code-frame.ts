/** Where a problem is in a file the user wrote (`svc.yaml`, `main.ts`): 1-based line and column. */
export interface SourceLocation {
  /** Path as the user should read it (relative to the project directory when inside it). */
  file: string;
  line: number;
  column: number;
}

/** Lines shown before and after the line of the problem. */
const CONTEXT_LINES = 2;

/** Longest line shown in full; longer ones are cut around the column, so a minified line stays readable. */
const MAX_LINE_WIDTH = 160;

/**
 * The lines around `line` of `source` with their numbers, the line of the problem marked with `>` and a
 * caret under `column` (both 1-based), in the shape compilers and linters print (docs/cli.md "Errors").
 * @example
 * codeFrame('a: 1\nb: [x\n', 2, 4)
 * //   1 | a: 1
 * // > 2 | b: [x
 * //     |    ^
 */
export function codeFrame(source: string, line: number, column: number): string {
  const lines = source.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop(); // the file's final newline
  const target = Math.min(Math.max(line, 1), lines.length);
  const first = Math.max(1, target - CONTEXT_LINES);
  const last = Math.min(lines.length, target + CONTEXT_LINES);
  const width = String(last).length;
  const out: string[] = [];
  for (let number = first; number <= last; number++) {
    let text = lines[number - 1]!.replace(/\t/g, ' ');
    let caretAt = Math.max(column, 1) - 1;
    if (text.length > MAX_LINE_WIDTH) {
      const start = number === target ? Math.max(0, caretAt - MAX_LINE_WIDTH / 2) : 0;
      text = (start > 0 ? '…' : '') + text.slice(start, start + MAX_LINE_WIDTH) + '…';
      caretAt = caretAt - start + (start > 0 ? 1 : 0);
    }
    const gutter = String(number).padStart(width);
    out.push(`${number === target ? '>' : ' '} ${gutter} | ${text}`.trimEnd());
    if (number === target) out.push(`  ${' '.repeat(width)} | ${' '.repeat(caretAt)}^`);
  }
  return out.join('\n');
}
