/**
 * What a compiled WebLLM model library says of its model: the metadata JSON
 * it carries (every parameter's name, shape and dtype, the context window),
 * read straight from its bytes.
 */

export interface LibraryParam {
  name: string;
  shape: number[];
  dtype: string;
}

export interface LibraryMetadata {
  model_type: string;
  quantization: string;
  context_window_size: number;
  prefill_chunk_size: number;
  sliding_window_size: number;
  attention_sink_size: number;
  params: LibraryParam[];
  [key: string]: unknown;
}

/** The metadata JSON inside a model library: from `{"model_type"` to its matching brace. */
export function libraryMetadata(library: Uint8Array): LibraryMetadata {
  // One character per byte; the JSON is ASCII, so its characters come back unchanged.
  const text = new TextDecoder('latin1').decode(library);
  const start = text.indexOf('{"model_type"');
  if (start < 0) throw new Error('No metadata in this model library (no {"model_type" in its bytes): is it a WebLLM model library?');
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1)) as LibraryMetadata;
  }
  throw new Error('The model library’s metadata never closes.');
}
