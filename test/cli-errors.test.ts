import { describe, expect, it } from 'vitest';
import { DatasetArgsError } from '../src/cli/eval-data';

describe('CLI errors', () => {
  it('a dataset flag that cannot be used names itself', () => {
    const error = new DatasetArgsError('There is no dataset file x.json.');
    expect(error.name).toBe('DatasetArgsError');
    expect(String(error)).toBe('DatasetArgsError: There is no dataset file x.json.');
  });
});
