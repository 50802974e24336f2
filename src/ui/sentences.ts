/**
 * Sentences said one after another: a space between them where the language
 * puts one (English), none after a full-width stop (Chinese: 。！？ and the
 * like end a sentence without a space after them).
 */
export function sentences(...parts: readonly string[]): string {
  return parts
    .filter((p) => p !== '')
    .reduce((text, part) => (text === '' ? part : /[\u3000-\u303f\uff01-\uff1f\uff09]$/.test(text) ? text + part : `${text} ${part}`), '');
}
