import { ServerError } from '../errors';

/** What a streamed (or whole) chat reply has said so far. */
export interface StreamState {
  text: string;
  finish?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  firstTokenAt?: number;
}

/** One chunk of a chat-completions reply, in the shapes vLLM, llama.cpp and Ollama send. */
export interface ChunkJson {
  choices?: { delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string; code?: number } | string;
  object?: string;
  message?: string;
  code?: number;
}

/** Adds one chunk to the reply; an error reported inside the stream is thrown as the server's error. */
export function applyChunk(state: StreamState, json: ChunkJson, now: number, onToken?: (delta: string) => void): void {
  if (json.error || json.object === 'error') {
    // An error reported inside the stream (vLLM does this): retried like the same status in a header.
    const err = typeof json.error === 'string' ? { message: json.error } : (json.error ?? { message: json.message, code: json.code });
    const status = err.code ?? json.code;
    throw new ServerError(`The server failed while answering${status ? ` (${status})` : ''}: ${err.message ?? 'no message'}`, status);
  }
  for (const choice of json.choices ?? []) {
    const delta = choice.delta?.content ?? choice.message?.content;
    if (delta) {
      state.firstTokenAt ??= now;
      state.text += delta;
      onToken?.(delta);
    }
    if (choice.finish_reason) state.finish = choice.finish_reason;
  }
  if (json.usage) state.usage = json.usage;
}

/** Reads a server-sent event stream: `data:` lines, events ended by a blank line, `[DONE]` at the end. True once the stream said it was done. */
export async function readEvents(body: ReadableStream<Uint8Array>, onData: (data: string) => boolean | void): Promise<boolean> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let finished = false;
  const dispatch = (): boolean => {
    if (data.length === 0) return false;
    const payload = data.join('\n');
    data = [];
    if (payload.trim() === '[DONE]') return true;
    return onData(payload) === true;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
      let at: number;
      while ((at = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + (buffer.startsWith('\r\n', at) ? 2 : 1));
        if (line === '') {
          if (dispatch()) return true;
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        } // comments (":") and other fields carry nothing we need
      }
      if (done) {
        finished = true;
        return dispatch();
      }
    }
  } finally {
    // Stopped early ([DONE], a bad event): let the rest of the body go; a body that cannot be cancelled is already gone.
    if (!finished) void reader.cancel().catch(() => undefined);
  }
}
