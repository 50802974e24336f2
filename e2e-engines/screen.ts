import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from '@playwright/test';
import type { ElementRef, PressKey, Tab } from './drivers';

/**
 * Finding things as a person does, by role and accessible name, in browsers
 * that Playwright does not drive: Testing Library's queries run in the page
 * (the same accessible names the Chromium tests ask Playwright for), and the
 * driver then acts on the element with real clicks and keys.
 */

const require = createRequire(import.meta.url);
const LIBRARY = readFileSync(require.resolve('@testing-library/dom/dist/@testing-library/dom.umd.min.js'), 'utf8');

/** How long an action waits for its element, and an expectation for its value. */
export const TIMEOUT = 30_000;

export type Text = string | RegExp;
type WireText = { text: string; exact: boolean } | { source: string; flags: string };
type Step =
  | { by: 'role'; role: string; name?: WireText; level?: number }
  | { by: 'label'; text: WireText }
  | { by: 'text'; text: WireText }
  | { by: 'nth'; index: number };

type Read = 'count' | 'text' | 'value' | 'checked' | 'focused' | { attribute: string };

function wire(text: Text, exact = false): WireText {
  return typeof text === 'string' ? { text, exact } : { source: text.source, flags: text.flags };
}

/**
 * In the page: every element the chain finds, or null where Testing Library
 * is not loaded yet. A string name matches as Playwright's does: a
 * case-insensitive part of the name, or the whole name when exact.
 */
function findAll(chain: Step[]): Element[] | null {
  type Matcher = string | RegExp | ((content: string) => boolean);
  type Query = (scope: Element, ...args: unknown[]) => Element[];
  const dom = (globalThis as unknown as { TestingLibraryDom?: Record<string, unknown> }).TestingLibraryDom;
  if (!dom) return null;
  const byRole = dom.queryAllByRole as Query;
  const byLabel = dom.queryAllByLabelText as Query;
  const byText = dom.queryAllByText as Query;
  const hidden = dom.isInaccessible as (e: Element) => boolean;
  const matcher = (t: WireText): Matcher => {
    if ('source' in t) return new RegExp(t.source, t.flags);
    if (t.exact) return t.text;
    const part = t.text.toLowerCase();
    return (content: string) => content.toLowerCase().includes(part);
  };
  let found: Element[] = [document.body];
  for (const step of chain) {
    if (step.by === 'nth') {
      const one = found[step.index < 0 ? found.length + step.index : step.index];
      found = one ? [one] : [];
      continue;
    }
    const next: Element[] = [];
    for (const scope of found) {
      if (step.by === 'role') {
        const options: Record<string, unknown> = {};
        if (step.name) options.name = matcher(step.name);
        if (step.level !== undefined) options.level = step.level;
        next.push(...byRole(scope, step.role, options));
      } else if (step.by === 'label') {
        // A file input behind the button that opens it is out of the accessibility tree, yet a file is given to it by its label (Playwright's getByLabel finds it too).
        const fileInput = (e: Element) => e instanceof HTMLInputElement && e.type === 'file';
        next.push(...byLabel(scope, matcher(step.text)).filter((e) => !hidden(e) || fileInput(e)));
      } else {
        next.push(...byText(scope, matcher(step.text)).filter((e) => !hidden(e)));
      }
    }
    found = [...new Set(next)];
  }
  return found;
}

/** In the page: one reading of the single element found (or how many there were). */
function readOne(find: typeof findAll, chain: Step[], read: Read): { missing: true } | { count: number } | { value: unknown } {
  const found = find(chain);
  if (!found) return { missing: true };
  if (read === 'count') return { value: found.length };
  if (found.length !== 1) return { count: found.length };
  const el = found[0] as HTMLInputElement;
  if (read === 'text') return { value: (el.textContent ?? '').replace(/\s+/g, ' ').trim() };
  if (read === 'value') return { value: el.value };
  if (read === 'checked') return { value: el.checked };
  if (read === 'focused') return { value: document.activeElement === el };
  return { value: el.getAttribute(read.attribute) };
}

/**
 * In the page: whether the one element the chain finds can be acted on: enabled,
 * and for a pointer, scrolled into view, in the same place over two frames,
 * and the topmost element at its centre.
 */
async function actionable(
  find: typeof findAll,
  chain: Step[],
  pointer: boolean,
): Promise<{ missing: true } | { count: number } | { why: string } | { ok: true }> {
  const found = find(chain);
  if (!found) return { missing: true };
  if (found.length !== 1) return { count: found.length };
  const el = found[0] as HTMLButtonElement;
  if (el.disabled === true || el.getAttribute('aria-disabled') === 'true') return { why: 'it is disabled' };
  if (!pointer) return { ok: true };
  el.scrollIntoView({ block: 'center', inline: 'center' });
  const frame = () => Promise.race([new Promise((resolve) => requestAnimationFrame(resolve)), new Promise((resolve) => setTimeout(resolve, 500))]);
  await frame();
  // A link that wraps is clicked on its first line (the first of its client rects), as WebDriver and Puppeteer do.
  const box = () => el.getClientRects()[0] ?? el.getBoundingClientRect();
  const a = box();
  await frame();
  const b = box();
  if (a.x !== b.x || a.y !== b.y || a.width !== b.width || a.height !== b.height) return { why: 'it is still moving' };
  if (b.width === 0 || b.height === 0) return { why: 'it has no size' };
  const top = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
  if (!top || (top !== el && !el.contains(top))) return { why: `${top?.tagName ?? 'nothing'} covers it` };
  return { ok: true };
}

/** In the page: the one element the chain finds, or null. */
function only(find: typeof findAll, chain: Step[]): Element | null {
  const found = find(chain);
  return found?.length === 1 ? found[0]! : null;
}

/** In the page: selects the option labelled `label` of the one select found; false where there is none. */
function choose(find: typeof findAll, chain: Step[], label: string): boolean {
  const select = find(chain)?.[0] as HTMLSelectElement | undefined;
  const option = [...(select?.options ?? [])].find((o) => o.label === label || o.text === label);
  if (!select || !option) return false;
  option.selected = true;
  select.dispatchEvent(new Event('input', { bubbles: true }));
  select.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
}

function describe(chain: Step[]): string {
  return chain
    .map((s) => {
      if (s.by === 'nth') return `nth(${s.index})`;
      const t = s.by === 'role' ? s.name : s.text;
      const shown = t === undefined ? '' : 'source' in t ? `/${t.source}/${t.flags}` : JSON.stringify(t.text);
      return s.by === 'role' ? `getByRole('${s.role}'${shown ? `, { name: ${shown} }` : ''})` : `getBy${s.by === 'label' ? 'Label' : 'Text'}(${shown})`;
    })
    .join('.');
}

/** `fn` applied to `args` in the page, as a script's source: no eval in the page, which its policy forbids. */
function call(fn: (...args: never[]) => unknown, ...args: unknown[]): string {
  return `(${fn.toString()})(${args.map((a) => (typeof a === 'function' ? `(${a.toString()})` : JSON.stringify(a))).join(', ')})`;
}

/** Loads Testing Library into the page, once per document. */
async function inject(tab: Tab): Promise<void> {
  if (!(await tab.run('!!globalThis.TestingLibraryDom'))) await tab.run(`(() => { ${LIBRARY}; return true; })()`);
}

/** Tries `attempt` every 100 ms until it gives a value, for at most `timeout` ms; then throws what `failure` says. */
async function retry<T>(attempt: () => Promise<T | undefined>, failure: () => string, timeout = TIMEOUT): Promise<T> {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await attempt().catch((e: unknown) => {
      // A page that is navigating, or an element React replaced between finding it and acting on it: look again.
      if (/stale|detached|navigat|context|unload|not connected|no such/i.test(String(e))) return undefined;
      throw e;
    });
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(failure());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export class Locator {
  constructor(
    readonly tab: Tab,
    readonly chain: Step[] = [],
  ) {}

  getByRole(role: string, options: { name?: Text; exact?: boolean; level?: number } = {}): Locator {
    const step: Step = { by: 'role', role };
    if (options.name !== undefined) step.name = wire(options.name, options.exact);
    if (options.level !== undefined) step.level = options.level;
    return new Locator(this.tab, [...this.chain, step]);
  }

  getByLabel(text: Text, options: { exact?: boolean } = {}): Locator {
    return new Locator(this.tab, [...this.chain, { by: 'label', text: wire(text, options.exact) }]);
  }

  getByText(text: Text, options: { exact?: boolean } = {}): Locator {
    return new Locator(this.tab, [...this.chain, { by: 'text', text: wire(text, options.exact) }]);
  }

  nth(index: number): Locator {
    return new Locator(this.tab, [...this.chain, { by: 'nth', index }]);
  }

  first(): Locator {
    return this.nth(0);
  }

  toString(): string {
    return describe(this.chain);
  }

  /** One reading now: undefined where there is not exactly one element (or the page is between documents). */
  private async read(what: Read): Promise<{ value: unknown } | { count: number }> {
    const source = call(readOne, findAll, this.chain, what);
    let result = (await this.tab.run(source).catch(() => ({ count: 0 }))) as ReturnType<typeof readOne>;
    if ('missing' in result) {
      await inject(this.tab);
      result = (await this.tab.run(source)) as ReturnType<typeof readOne>;
    }
    return result as { value: unknown } | { count: number };
  }

  private async value<T>(what: Read, timeout?: number): Promise<T> {
    let last = 0;
    return retry(
      async () => {
        const r = await this.read(what);
        if ('value' in r) return r.value as T;
        last = r.count;
        return undefined;
      },
      () => `${this} found ${last} elements, not one.`,
      timeout,
    );
  }

  async count(): Promise<number> {
    const r = await this.read('count');
    return 'value' in r ? (r.value as number) : 0;
  }

  /** The text of the one element, whitespace collapsed; waits for it. */
  text(timeout?: number): Promise<string> {
    return this.value<string>('text', timeout);
  }

  attribute(name: string): Promise<string | null> {
    return this.value<string | null>({ attribute: name });
  }

  inputValue(): Promise<string> {
    return this.value<string>('value');
  }

  isChecked(): Promise<boolean> {
    return this.value<boolean>('checked');
  }

  isFocused(): Promise<boolean> {
    return this.value<boolean>('focused');
  }

  /** Waits until exactly one element is there. */
  async waitFor(timeout?: number): Promise<void> {
    await this.value('text', timeout);
  }

  /**
   * The one element, once it is there, enabled and (for a click) still and not
   * covered, as Playwright waits before it acts, for the driver to act on.
   */
  private async element(pointer: boolean): Promise<ElementRef> {
    await inject(this.tab);
    let why = 'nothing found';
    return retry(
      async () => {
        const r = (await this.tab.run(call(actionable, findAll, this.chain, pointer))) as Awaited<ReturnType<typeof actionable>>;
        if ('missing' in r) await inject(this.tab);
        if (!('ok' in r)) {
          why = 'count' in r ? `${r.count} elements found, not one` : 'why' in r ? r.why : 'the page is loading';
          return undefined;
        }
        const ref = await this.tab.element(call(only, findAll, this.chain));
        return ref ?? undefined;
      },
      () => `${this}: ${why}.`,
    );
  }

  /** Acts on the element, finding it again if the page replaced it meanwhile. */
  private act(action: (el: ElementRef) => Promise<void>, pointer = true): Promise<void> {
    return retry(
      async () => {
        await action(await this.element(pointer));
        return true;
      },
      () => `${this}: could not act on it.`,
    ).then(() => undefined);
  }

  click(): Promise<void> {
    return this.act((el) => el.click());
  }

  fill(text: string): Promise<void> {
    return this.act((el) => el.type(text));
  }

  upload(paths: string | string[]): Promise<void> {
    // A file input is often drawn as something else (a drop zone): it takes files without a pointer.
    return this.act((el) => el.upload(typeof paths === 'string' ? [paths] : paths), false);
  }

  /** Chooses the option with this label in a select, as Playwright's selectOption does: selected, then input and change. */
  async selectOption(label: string): Promise<void> {
    await this.waitFor();
    // Options may come after the select (the engines the worker lists): wait for the one asked for, as Playwright does.
    await retry(
      async () => ((await this.tab.run(call(choose, findAll, this.chain, label))) ? true : undefined),
      () => `${this} has no option "${label}".`,
    );
  }

  async setChecked(checked: boolean): Promise<void> {
    if ((await this.isChecked()) !== checked) await this.click();
    await expect.poll(() => this.isChecked()).toBe(checked);
  }

  /** Clicks the element, then presses a key where the focus went. */
  async press(key: PressKey): Promise<void> {
    await this.tab.press(key);
  }
}

/** The page's document, to start a query from. */
export function screen(tab: Tab): Locator {
  return new Locator(tab);
}

/** Waits until the element's text matches: a string is a part of it, as Playwright's toContainText. */
export async function expectText(locator: Locator, text: Text, timeout = TIMEOUT): Promise<void> {
  await expect
    .poll(() => locator.text(timeout).catch((e: Error) => e.message), { timeout, message: `${locator} should contain ${String(text)}` })
    .toMatch(typeof text === 'string' ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : text);
}

/** Waits until the element's text no longer holds `text`. */
export async function expectNoText(locator: Locator, text: string, timeout = TIMEOUT): Promise<void> {
  await expect.poll(() => locator.text(timeout), { timeout, message: `${locator} should not contain ${text}` }).not.toContain(text);
}

export async function expectAttribute(locator: Locator, name: string, value: string | RegExp, timeout = TIMEOUT): Promise<void> {
  const poll = expect.poll(() => locator.attribute(name).catch(() => null), { timeout, message: `${locator} [${name}]` });
  await (typeof value === 'string' ? poll.toBe(value) : poll.toMatch(value));
}

export async function expectCount(locator: Locator, n: number, timeout = TIMEOUT): Promise<void> {
  await expect.poll(() => locator.count(), { timeout, message: `how many ${locator}` }).toBe(n);
}
