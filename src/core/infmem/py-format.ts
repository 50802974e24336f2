/**
 * `template.format(**slots)` as Python runs it on the official templates:
 * one pass, each `{name}` replaced by its value and `{{`/`}}` by a brace,
 * inserted values never read again (a question holding "{memory}" stays as
 * it is).
 */
import { PY_SPACE } from '../pytext';

/** A template `str.format` refuses: a slot it is not given, or a lone brace. */
export class PyFormatError extends Error {
  override name = 'PyFormatError';
}

const FIELD = /\{\{|\}\}|\{([^{}]*)\}|[{}]/g;

export function pyFormat(template: string, slots: Readonly<Record<string, string>>): string {
  return template.replace(FIELD, (whole, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    if (name === undefined) throw new PyFormatError(`Single '${whole}' encountered in format string`);
    if (!Object.hasOwn(slots, name)) throw new PyFormatError(`The template's slot {${name}} is not one of ${Object.keys(slots).join(', ')}.`);
    return slots[name]!;
  });
}

const TRAILING = new RegExp(`[${PY_SPACE}]+$`);

/** `s.rstrip()`. */
export function pyRstrip(s: string): string {
  return s.replace(TRAILING, '');
}
