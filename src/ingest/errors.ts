/** A file we refuse, with a message that says what happened and what to do. */
export class IngestError extends Error {
  override name = 'IngestError';
}
