import { describe, expect, it } from 'vitest';
import { unspoken } from '../e2e-engines/drivers';

describe('the cross-engine driver', () => {
  it('says which browser did not know which WebDriver BiDi command, keeping the protocol error as its cause', () => {
    const protocol = new Error(
      'Protocol error (emulation.setScreenOrientationOverride): unknown command emulation.setScreenOrientationOverride RemoteError@chrome://remote',
    );
    const said = unspoken(protocol, 'firefox/140.12.0') as Error;
    expect(said.message).toMatch(
      /^firefox\/140\.12\.0 does not know the WebDriver BiDi command emulation\.setScreenOrientationOverride, which puppeteer-core sent/,
    );
    expect(said.cause).toBe(protocol);
  });

  it('leaves every other error as it was', () => {
    const other = new Error('Navigation timeout of 30000 ms exceeded');
    expect(unspoken(other, 'firefox/140.12.0')).toBe(other);
  });
});
