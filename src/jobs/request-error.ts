/** A request the worker refuses, in words the person can act on (the message says what to do). */
export class RequestError extends Error {
  override name = 'RequestError';
}
