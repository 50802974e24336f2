import { readHtml } from './src/ingest/html-document';
import { chapterAnchors, markdownAnchors } from './src/ingest/structure';
function t(name: string, f: () => unknown) { const s = performance.now(); f(); console.log(name, (performance.now()-s).toFixed(1), 'ms'); }
const enc = (s: string) => new TextEncoder().encode(s);
for (const n of [10000, 20000, 40000, 80000]) {
  t(`div nest ${n}`, () => readHtml(enc('<div>'.repeat(n) + 'hello' + '</div>'.repeat(n)), 'x.html'));
  t(`div nest unclosed ${n}`, () => readHtml(enc('<div>'.repeat(n) + 'hello'), 'x.html'));
  t(`span nest ${n}`, () => readHtml(enc('<span>x '.repeat(n)), 'x.html'));
  t(`chapters adjacent ${n}`, () => chapterAnchors(Array.from({length: n}, (_, i) => `Chapter 1: a${i}`).join('\n')));
  t(`md fences ${n}`, () => markdownAnchors(Array.from({length: n}, (_, i) => `# h${i}\n\`\`\`\ncode\n\`\`\``).join('\n')));
}
