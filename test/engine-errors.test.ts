import { describe, expect, it } from 'vitest';
import {
  ContextWindowExceededError,
  DeviceLostError,
  EngineError,
  errorNamed,
  fromWire,
  RetriesExhaustedError,
  ServerError,
  ServerRefusedError,
  wireError,
} from '../src/engines/errors';

/** What structured clone does to a value crossing to the page. */
const cloned = <T>(value: T): T => structuredClone(value);

describe('engine errors', () => {
  it('cross the worker boundary as plain data and come back as their own class', () => {
    for (const error of [
      new DeviceLostError('The GPU stopped responding.'),
      new ContextWindowExceededError('Too long.'),
      new ServerRefusedError('The server refused the API key.', 401),
      new RetriesExhaustedError('Gave up after 3 attempts.', { cause: new ServerError('HTTP 503', 503) }),
    ]) {
      const back = fromWire(cloned(wireError(error)));
      expect(back).toBeInstanceOf(error.constructor);
      expect(back).toBeInstanceOf(EngineError);
      expect(back.name).toBe(error.name);
      expect(back.message).toBe(error.message);
    }
  });

  it('anything else crosses as an Error that keeps its name and message', () => {
    const back = fromWire(cloned(wireError(Object.assign(new Error('The disk is full.'), { name: 'StorageFullError' }))));
    expect(back).not.toBeInstanceOf(EngineError);
    expect(back).toMatchObject({ name: 'StorageFullError', message: 'The disk is full.' });
    expect(fromWire(cloned(wireError('a string thrown')))).toMatchObject({ name: 'Error', message: 'a string thrown' });
  });

  it('a runtime error known only by name becomes the failure it stands for, keeping its cause', () => {
    const cause = new Error('lost');
    const lost = errorNamed('DeviceLostError', 'The GPU stopped responding.', { cause });
    expect(lost).toBeInstanceOf(DeviceLostError);
    expect(lost.cause).toBe(cause);
    const other = errorNamed('SomethingElseError', 'odd');
    expect(other).not.toBeInstanceOf(EngineError);
    expect(other.name).toBe('SomethingElseError');
  });
});
