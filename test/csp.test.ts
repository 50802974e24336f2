import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, extraConnectSources, securityHeaders } from '../csp.config';

function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...sources]) => [name!, sources]),
  );
}

describe('the Content Security Policy', () => {
  it('allows this origin, the model hosts and this device, and nothing third-party', () => {
    const d = directives(contentSecurityPolicy());
    expect(d.get('default-src')).toEqual(["'self'"]);
    expect(d.get('script-src')).toEqual(["'self'", "'wasm-unsafe-eval'"]);
    expect(d.get('style-src')).toEqual(["'self'"]);
    expect(d.get('font-src')).toEqual(["'self'"]);
    expect(d.get('object-src')).toEqual(["'none'"]);
    expect(d.get('connect-src')).toEqual([
      "'self'",
      'blob:',
      'https://huggingface.co',
      'https://*.huggingface.co',
      'https://*.hf.co',
      'https://raw.githubusercontent.com',
      'http://127.0.0.1:*',
      'http://localhost:*',
    ]);
    // Nothing may run that the app did not ship: no inline script, no eval, no wildcard.
    expect(contentSecurityPolicy()).not.toMatch(/unsafe-inline|'unsafe-eval'|\s\*(\s|;|$)|https:(\s|;|$)/);
  });

  it('keeps frame-ancestors for the header, which a <meta> tag may not carry', () => {
    expect(directives(contentSecurityPolicy()).has('frame-ancestors')).toBe(false);
    expect(directives(securityHeaders([])['Content-Security-Policy']!).get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('takes more hosts from the setting, and refuses anything that is not an origin', () => {
    expect(extraConnectSources('https://models.example.org, http://192.168.1.20:8000 https://*.example.net/')).toEqual([
      'https://models.example.org',
      'http://192.168.1.20:8000',
      'https://*.example.net',
    ]);
    expect(directives(contentSecurityPolicy({ connect: ['http://192.168.1.20:8000'] })).get('connect-src')).toContain('http://192.168.1.20:8000');
    expect(extraConnectSources('')).toEqual([]);
    for (const bad of ['*', 'https:', "'unsafe-inline'", 'https://a.example; script-src *', 'example.org', 'ftp://a.example', 'https://a.example/path']) {
      expect(() => extraConnectSources(bad), bad).toThrow(/MEMAGENT_CONNECT_SRC/);
    }
  });
});
