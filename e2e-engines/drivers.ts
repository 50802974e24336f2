import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import puppeteer, { type Browser as PuppeteerBrowser, type ElementHandle, type KeyInput, type Page as PuppeteerPage } from 'puppeteer-core';
import { Builder, Key, type WebDriver, type WebElement } from 'selenium-webdriver';

/** The engines this suite drives besides Playwright's Chromium, as its projects name them. */
export type EngineName = 'firefox' | 'webkit-safari' | 'webkit-defaults';

export const FIREFOX = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
export const MINIBROWSER = process.env.MINIBROWSER_PATH ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
/** WebKit's storage features as Safari ships them; WebKitGTK leaves them off by default. */
export const SAFARI_FEATURES = '+StorageAPI,+StorageAPIEstimate,+FileSystem';

export type PressKey = 'ArrowUp' | 'ArrowDown' | 'Home' | 'End' | 'Enter' | 'Tab';

/** One element the driver found, to act on with real input. */
export interface ElementRef {
  click(): Promise<void>;
  /** Focuses the field, selects what it holds and types `text` over it. */
  type(text: string): Promise<void>;
  /** Sets the files of a file input (several where it takes several). */
  upload(paths: string[]): Promise<void>;
}

/** A page in one engine, driven over WebDriver BiDi (Firefox) or WebDriver (WebKit). */
export interface Tab {
  readonly engine: EngineName;
  goto(url: string): Promise<void>;
  reload(): Promise<void>;
  url(): Promise<string>;
  /** Runs `fn` in the page (awaiting a promise it returns) and gives back its JSON-serialisable result. */
  evaluate<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): Promise<Awaited<R>>;
  /** Evaluates a script's source in the page (as the driver does, so the page's Content Security Policy does not apply); gives back its value. */
  run(expression: string): Promise<unknown>;
  /** Evaluates an expression that gives an element, or null; gives back the element to act on. */
  element(expression: string): Promise<ElementRef | null>;
  /** A key pressed where the focus is. */
  press(key: PressKey): Promise<void>;
  /** A PNG of the window, for a failed test's report. */
  screenshot(): Promise<Buffer>;
  /** Closes the page and its profile. */
  close(): Promise<void>;
  /** What the page logged to its console and the errors it did not catch, where the driver tells them. */
  logs(): string[];
}

/** A browser instance, each tab in a fresh profile. */
export interface EngineBrowser {
  newTab(): Promise<Tab>;
  close(): Promise<void>;
}

const WINDOW = { width: 1280, height: 900 };

// ---------------------------------------------------------------- Firefox

class FirefoxTab implements Tab {
  readonly engine = 'firefox';
  private readonly lines: string[] = [];
  constructor(readonly page: PuppeteerPage) {
    page.on('console', (m) => this.lines.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => this.lines.push(`uncaught: ${String(e)}`));
  }
  logs(): string[] {
    return this.lines;
  }

  async goto(url: string): Promise<void> {
    await this.page.goto(url);
  }
  async reload(): Promise<void> {
    await this.page.reload();
  }
  async url(): Promise<string> {
    return this.page.url();
  }
  evaluate<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): Promise<Awaited<R>> {
    return this.page.evaluate(fn as (...a: unknown[]) => R, ...args) as Promise<Awaited<R>>;
  }
  run(expression: string): Promise<unknown> {
    return this.page.evaluate(expression);
  }
  async element(expression: string): Promise<ElementRef | null> {
    const handle = (await this.page.evaluateHandle(expression)).asElement() as ElementHandle<Element> | null;
    if (!handle) return null;
    const page = this.page;
    return {
      click: () => handle.click(),
      async type(text: string) {
        await handle.focus();
        await page.keyboard.down('Control');
        await page.keyboard.press('KeyA');
        await page.keyboard.up('Control');
        if (text === '') await page.keyboard.press('Backspace');
        else await page.keyboard.type(text);
      },
      upload: (paths: string[]) => (handle as ElementHandle<HTMLInputElement>).uploadFile(...paths),
    };
  }
  async press(key: PressKey): Promise<void> {
    await this.page.keyboard.press(key as KeyInput);
  }
  async screenshot(): Promise<Buffer> {
    return Buffer.from(await this.page.screenshot());
  }
  async close(): Promise<void> {
    await this.page.browserContext().close();
  }
}

export async function launchFirefox(): Promise<EngineBrowser> {
  const browser: PuppeteerBrowser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    // The window itself is sized, and no page is emulated: a viewport override needs WebDriver BiDi's emulation
    // commands, which each Firefox release learns at its own pace (140 ESR knows no setScreenOrientationOverride).
    defaultViewport: null,
    // Headless Firefox opens every window, each context's too, at this size (--window-size sizes only the first).
    env: { ...process.env, MOZ_HEADLESS_WIDTH: String(WINDOW.width), MOZ_HEADLESS_HEIGHT: String(WINDOW.height) },
    // The interface follows the browser's language: English, as in the Chromium tests.
    extraPrefsFirefox: { 'intl.accept_languages': 'en-US', 'intl.locale.requested': 'en-US' },
  });
  const version = await browser.version();
  return {
    async newTab() {
      const context = await browser.createBrowserContext();
      const page = await context.newPage().catch((e: unknown) => Promise.reject(unspoken(e, version)));
      const width = await page.evaluate(() => window.outerWidth).catch((e: unknown) => Promise.reject(unspoken(e, version)));
      if (width !== WINDOW.width) throw new Error(`${version} opened a ${width}-px window where ${WINDOW.width} px were asked for.`);
      return new FirefoxTab(page);
    },
    close: () => browser.close(),
  };
}

/** A protocol error the browser gives for a command it does not know, said with the browser's version and the command. */
export function unspoken(e: unknown, version: string): unknown {
  const command = /Protocol error \(([\w.]+)\): unknown command/.exec(e instanceof Error ? e.message : '')?.[1];
  if (!command) return e;
  return new Error(
    `${version} does not know the WebDriver BiDi command ${command}, which puppeteer-core sent: pin a puppeteer-core that this ` +
      'browser speaks, or drive the browser without that command.',
    { cause: e },
  );
}

// ---------------------------------------------------------------- WebKit

const KEYS: Record<PressKey, string> = {
  ArrowUp: Key.ARROW_UP,
  ArrowDown: Key.ARROW_DOWN,
  Home: Key.HOME,
  End: Key.END,
  Enter: Key.ENTER,
  Tab: Key.TAB,
};

/** Selenium runs a function's source with its arguments in `arguments`; a returned promise is awaited. */
function script(fn: (...args: never[]) => unknown): string {
  return `return (${fn.toString()}).apply(null, arguments);`;
}

class WebKitTab implements Tab {
  constructor(
    readonly engine: EngineName,
    readonly driver: WebDriver,
  ) {}

  async goto(url: string): Promise<void> {
    await this.driver.get(url);
  }
  async reload(): Promise<void> {
    await this.driver.navigate().refresh();
  }
  url(): Promise<string> {
    return this.driver.getCurrentUrl();
  }
  evaluate<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): Promise<Awaited<R>> {
    return this.driver.executeScript(script(fn as (...a: never[]) => unknown), ...args) as Promise<Awaited<R>>;
  }
  run(expression: string): Promise<unknown> {
    return this.driver.executeScript(`return ${expression}`);
  }
  async element(expression: string): Promise<ElementRef | null> {
    const el = (await this.driver.executeScript(`return ${expression}`)) as WebElement | null;
    if (!el) return null;
    const driver = this.driver;
    return {
      click: () => el.click(),
      // Select all with a key held down and released by actions: WebKitWebDriver keeps a chord's Control down for the keys after it.
      type: async (text: string) => {
        await el.click();
        await driver
          .actions()
          .keyDown(Key.CONTROL)
          .sendKeys('a')
          .keyUp(Key.CONTROL)
          .sendKeys(text === '' ? Key.BACK_SPACE : text)
          .perform();
      },
      // WebDriver takes several files as one string, a path a line.
      upload: (paths: string[]) => el.sendKeys(paths.join('\n')),
    };
  }
  async press(key: PressKey): Promise<void> {
    await this.driver.actions().sendKeys(KEYS[key]).perform();
  }
  async screenshot(): Promise<Buffer> {
    return Buffer.from(await this.driver.takeScreenshot(), 'base64');
  }
  async close(): Promise<void> {
    await this.driver.quit();
  }
  logs(): string[] {
    return ['(WebKitWebDriver does not report the console)'];
  }
}

/** A free TCP port on this machine, for a WebDriver server of our own. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something listens on the port (the driver under its virtual display is up). */
async function listening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`WebKitWebDriver stopped (${child.exitCode}): ${output()}`);
    const ok = await fetch(`http://127.0.0.1:${port}/status`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * WebKitGTK's MiniBrowser, which has no headless mode: WebKitWebDriver under a
 * virtual display (xvfb-run), one MiniBrowser per tab (each a fresh, ephemeral
 * profile; the driver holds one session at a time), with Safari's storage
 * features or WebKitGTK's defaults.
 */
export async function launchWebKit(engine: 'webkit-safari' | 'webkit-defaults'): Promise<EngineBrowser> {
  if (!existsSync(MINIBROWSER)) throw new Error(`No MiniBrowser at ${MINIBROWSER}: install webkit2gtk-driver.`);
  const port = await freePort();
  let output = '';
  // Its own process group, so that closing ends xvfb-run, Xvfb and the driver together.
  const child = spawn('xvfb-run', ['-a', '-s', '-screen 0 1920x1080x24', 'WebKitWebDriver', `--port=${port}`], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  await listening(port, child, () => output);
  const args = ['--automation', ...(engine === 'webkit-safari' ? [`--features=${SAFARI_FEATURES}`] : [])];
  return {
    async newTab() {
      const driver = await new Builder()
        .usingServer(`http://127.0.0.1:${port}`)
        .withCapabilities({ browserName: 'MiniBrowser', 'webkitgtk:browserOptions': { binary: MINIBROWSER, args } })
        .build();
      await driver.manage().window().setRect(WINDOW);
      await driver.manage().setTimeouts({ script: 120_000 });
      return new WebKitTab(engine, driver);
    },
    async close() {
      if (child.exitCode === null && child.pid) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        process.kill(-child.pid, 'SIGTERM');
        await exited;
      }
    },
  };
}

export function launch(engine: EngineName): Promise<EngineBrowser> {
  return engine === 'firefox' ? launchFirefox() : launchWebKit(engine);
}
