/** What the docs test reads out of a Markdown page: fenced blocks, links and heading anchors. */

export interface CodeBlock {
  /** The first word of the info string (`sh`), and the rest (`long-running`). */
  lang: string;
  marks: string;
  /** The line of the opening fence, from 1. */
  line: number;
  /** Its commands: continued lines joined as written, comments and blank lines left out. */
  commands: string[];
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every fenced block of a page, with its info string split into language and marks. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]!);
      if (close && close[2]!.startsWith(fence[0]!) && close[2]!.length >= fence.length && close[3]!.trim() === '') break;
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!.trimStart());
    }
    const [lang = '', ...marks] = info.trim().split(/\s+/);
    blocks.push({ lang, marks: marks.join(' '), line: i + 1, commands: commandsOf(body) });
    i = j;
  }
  return blocks;
}

/** Lines ending in a backslash continue on the next, as the shell reads them. */
function commandsOf(body: string[]): string[] {
  const commands: string[] = [];
  let current: string[] = [];
  for (const line of body) {
    if (current.length === 0 && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    current.push(line);
    if (!line.endsWith('\\')) {
      commands.push(current.join('\n'));
      current = [];
    }
  }
  if (current.length > 0) commands.push(current.join('\n'));
  return commands;
}

/**
 * The page with its fenced blocks blanked, line numbers kept, and inline code
 * blanked too (links inside code are not links) or, for headings, kept as text.
 */
function prose(markdown: string, inlineCode: 'blank' | 'text' = 'blank'): string {
  const lines = markdown.split('\n');
  let fence: string | null = null;
  return lines
    .map((line) => {
      const m = FENCE.exec(line);
      if (fence === null && m) {
        fence = m[2]!;
        return '';
      }
      if (fence !== null) {
        if (m && m[2]!.startsWith(fence[0]!) && m[3]!.trim() === '') fence = null;
        return '';
      }
      return line.replace(/(`+)((?:(?!\1).)+?)\1/g, (_, _ticks: string, code: string) => (inlineCode === 'text' ? code : ''));
    })
    .join('\n');
}

/** Every inline link and image of a page, with its line. */
export function links(markdown: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  prose(markdown)
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ target: m[1]!, line: i + 1 });
    });
  return found;
}

/**
 * The anchors GitHub gives a page's headings: the heading's text as rendered,
 * lower-cased, with punctuation other than `-` and `_` removed and spaces
 * turned into hyphens; a repeated heading gets -1, -2, ….
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of prose(markdown, 'text').split('\n')) {
    const m = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!m) continue;
    const text = m[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[*]/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The `--flags` a command gives memagent (directly or through `npm run eval --`); none for other commands. */
export function memagentFlags(command: string): string[] {
  const m = /(?:(?:^|[\s/])memagent(?:\.js)?(?=\s|$)|\bnpm run eval\b)([\s\S]*)/.exec(command);
  return m ? [...new Set(m[1]!.match(/(?<![\w-])--[a-z][a-z0-9-]*/g) ?? [])] : [];
}
