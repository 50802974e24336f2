import { Writable } from 'node:stream';

const ESC = String.fromCharCode(27);

/**
 * The screen a terminal shows after this output: its lines, with carriage
 * returns, cursor moves and line erases applied (the escapes log-update
 * writes); other escapes (synchronised output, cursor shows) change nothing here.
 */
export function screen(output: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  const tokens = output.match(new RegExp(`${ESC}\\[[?\\d;]*[A-Za-z]|\\n|\\r|[^${ESC}\\n\\r]+`, 'g')) ?? [];
  for (const t of tokens) {
    if (t === '\n') {
      row += 1;
      col = 0;
      lines[row] ??= '';
    } else if (t === '\r') col = 0;
    else if (t.startsWith(`${ESC}[`)) {
      if (t.startsWith(`${ESC}[?`)) continue;
      const n = Number(/\d+/.exec(t)?.[0] ?? '1');
      if (t.endsWith('A')) row = Math.max(0, row - n);
      else if (t.endsWith('B')) row += n;
      else if (t.endsWith('G')) col = 0;
      else if (t.endsWith('2K')) lines[row] = '';
      else if (t.endsWith('K')) lines[row] = lines[row]!.slice(0, col);
      lines[row] ??= '';
    } else {
      const line = lines[row]!.padEnd(col);
      lines[row] = line.slice(0, col) + t + line.slice(col + t.length);
      col += t.length;
    }
  }
  return lines.filter((l, i) => l !== '' || i < lines.length - 1);
}

/** A stream that says it is a terminal and keeps what is written to it. */
export function fakeTerminal(columns = 120): Writable & { isTTY: boolean; columns: number; rows: number; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return Object.assign(stream, { isTTY: true, columns, rows: 40, text: () => chunks.join('') });
}
