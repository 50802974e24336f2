/**
 * The system message Qwen-Agent's `QwenFnCallPrompt.preprocess_fncall_messages`
 * puts before a conversation that offers tools (English, parallel calls,
 * function choice "auto"), built from the words read out of its pinned file.
 */
import type { FnCallTemplates } from './official-files';
import { pyFormat, pyRstrip } from './py-format';
import { type PyDict, pyJsonDumps, pyStr } from './py-values';

/** A field of the tool that the description prints, as Python's `str.format` prints any value. */
function field(tool: PyDict, key: string, fallback?: string): string {
  const v = tool.get(key);
  if (v === undefined) {
    if (fallback === undefined) throw new Error(`The tool has no "${key}".`);
    return fallback;
  }
  return pyStr(v);
}

/** `get_function_description(tool, lang='en')`. */
export function toolDescription(words: FnCallTemplates, tool: PyDict): string {
  const name = field(tool, 'name');
  const parameters = tool.get('parameters');
  if (parameters === undefined) throw new Error('The tool has no "parameters".');
  return pyRstrip(
    pyFormat(words.toolDescription, {
      name_for_human: field(tool, 'name_for_human', name),
      name_for_model: field(tool, 'name_for_model', name),
      description_for_model: field(tool, 'description'),
      parameters: pyJsonDumps(parameters),
      args_format: field(tool, 'args_format', words.argsFormat),
    }),
  );
}

/** The system message's text for these tools. */
export function fnCallSystem(words: FnCallTemplates, tools: readonly PyDict[]): string {
  return pyFormat(words.system, {
    tool_descs: tools.map((t) => toolDescription(words, t)).join('\n\n'),
    tool_names: tools.map((t) => field(t, 'name_for_model', field(t, 'name', ''))).join(','),
  });
}
