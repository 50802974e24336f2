/**
 * The words of `memagent --help` (every command's usage and options) and of
 * `memagent read --help` and `memagent eval --help` (one command's): each
 * block is written once and put together per command. The list of commands is
 * put in front of the whole help by commands.ts, which knows the commands.
 */
import { DEFAULT_READ_SETTINGS, READ_LIMITS } from '../core/plan';
import { REQUESTS_AT_ONCE } from '../engines/openai/info';
import { ENGINES } from '../engines/registry';
import { TASK_IDS } from '../eval/tasks';
import { whole } from './numbers';

const INTRO = 'memagent: read a whole book with a language model that keeps notes (the MemAgent memory loop).';

const READ_USAGE = `  memagent read <file> [<file> …] --question TEXT --engine extractive [options]
  memagent read <file> [<file> …] --question TEXT --base-url URL [--model NAME] [options]
  memagent read <file> --question TEXT --engine webllm [--model ID] [options]
                       (several files are read as one set, in that order, with one memory;
                       extractive reads with the paper's heuristic memory and no model)
  memagent read <file> --question TEXT --question TEXT … [options]
  memagent read <file> --questions-file FILE [options]
                       (several questions: the book is read once, each question with its own
                       memory, their steps written together)
  memagent read <file> --method infmem --question TEXT --base-url URL [--model NAME] [infmem options]
                       (InfMem's read: a planner retrieves from the whole book and may stop early;
                       the server must answer raw /v1/completions, as vLLM does; see docs/infmem.md;
                       --chat qwen2.5 for a Qwen2.5 model such as RL-MemAgent-7B)
  memagent read <file> --method infmem --question TEXT --engine webllm [--model ID] [infmem options]
                       (the same requests continued by WebLLM on this machine's GPU, in the chat text
                       of the model's family: Qwen3 for a Qwen3 library such as InfMem-4B's, else Qwen2.5)
  memagent read <file> --method infmem --question TEXT --engine extractive
                       (the same loop by the extractive engine's fixed rules: no model, no server)`;

const EVAL_USAGE = `  memagent eval --engine extractive [--tasks LIST] [--lengths LIST] [options]
                       (the engine when none is named: no --engine, --base-url or --model)
  memagent eval --base-url URL [--model NAME] [--tasks LIST] [--lengths LIST] [options]
  memagent eval --base-url URL [--model NAME] --data eval_50.json [--data eval_200.json …] [options]
  npm run eval -- [eval options]   (the same as memagent eval)`;

/** The options both commands take, marked so in the whole help. */
const COMMON = `Server (both commands):
  --base-url URL       the server's OpenAI API, e.g. http://127.0.0.1:8000/v1
  --model NAME         served model name (default: the first the server lists)
  --api-key KEY        bearer key; MEMAGENT_API_KEY or OPENAI_API_KEY in the environment also work
  --context N          context window in tokens, for servers that do not report it (Ollama)
  --retries N          attempts repeated after 429, 5xx or a dropped connection (default 8)
  --retry-delay MS     first wait before a retry, doubled each time (default 1000)
  --engine ID          ${ENGINES.map((e) => e.id).join(' or ')} (default: openai with --base-url;
                       for eval without --base-url or --model, extractive)

WebLLM on this machine's GPU (--engine webllm; Vulkan, Metal or D3D12 through Dawn, see docs/gpu.md):
  --model ID           a prebuilt model, e.g. Qwen2.5-7B-Instruct-q4f16_1-MLC (the default; its q4f32_1
                       build where the GPU lacks shader-f16), or one fetched before with --model-url
  --model-url URL      a model converted elsewhere (its Hugging Face repository), with
  --model-lib URL      its WebLLM model library (.wasm); --context N: its context limit (default 32768)
  --cache-dir DIR      where models are downloaded and kept (default: MEMAGENT_CACHE_DIR, else the user's
                       cache folder, memagent/webllm); a downloaded model loads with no network
  --webllm VERSION     0.2.86 (the app's, default) or 0.2.79 (for v0_2_48 model libraries)
  --speculate on|off   speculative writing, checked against plain decoding on first use (default on)

Read settings (both commands; the limits are the app's):
  --chunk N            chunk size in tokens, ${whole(READ_LIMITS.chunkTokens.min)} to ${whole(READ_LIMITS.chunkTokens.max)} (default ${whole(DEFAULT_READ_SETTINGS.chunkTokens)}, less if the context needs it;
                       exact with --data)
  --memory N           memory size in tokens, ${whole(READ_LIMITS.memoryTokens.min)} to ${whole(READ_LIMITS.memoryTokens.max)} (default ${whole(DEFAULT_READ_SETTINGS.memoryTokens)})
  --temperature X      0 to 2 (default ${DEFAULT_READ_SETTINGS.temperature})
  --top-p X            above 0, at most 1 (default ${DEFAULT_READ_SETTINGS.topP})

Progress (both commands; on stderr, so stdout holds only the answer or the tables):
  --progress bar|lines one line redrawn in place (the default on a terminal) or one line per step
                       (the default when stderr is piped)
  --quiet              no progress and no messages, only errors and the result

Prompts (both commands):
  --prompts SET        memagent (the prompts of the paper's runs, read from MemAgent's recurrent.py),
                       memagent-boxed (recurrent_boxed.py), app (this app's wording), or FILE.json
                       holding edited templates {"update": ..., "final": ...}. Default: memagent for a
                       model, fetched once from the MemAgent repository at a pinned commit and kept in
                       the cache; app's wording while that file cannot be had (said so), and for extractive
  --prompts-file PATH  a local copy of recurrent.py or recurrent_boxed.py (checked by its SHA-256)
  --prompts-base URL   a mirror to fetch <URL>/taskutils/memory_eval/utils/recurrent.py from`;

const READ_OPTIONS = `read:
  --question, -q TEXT  what the memory is kept for (on --resume, the journal's question); give it
                       again for more questions, each answered in the same read
  --questions-file F   more questions, one a line (blank lines skipped), after any --question
  --out FILE           journal of revisions, one JSON line each (default <file>.memagent.jsonl);
                       with several questions one journal each, numbered before the ending:
                       <file>.q1.memagent.jsonl, <file>.q2.memagent.jsonl, … (read.jsonl: read.q1.jsonl, …)
  --resume             continue the read the journal holds, from its next chunk; with several
                       questions every journal (the same questions in order, or none to take
                       them from the journals); answered questions print their answers
  --force              start over, replacing an existing journal
  --seed N             sampling seed, 0 to ${whole(READ_LIMITS.seed.max)} (default random)
  --keep-gutenberg     keep Project Gutenberg's header and footer
  --in-flight N        with several questions on a server (--base-url): at most N of their
                       requests in flight at once, the rest waiting their turn, each with its own
                       retries (${REQUESTS_AT_ONCE.min} to ${REQUESTS_AT_ONCE.max}, default ${REQUESTS_AT_ONCE.default}, as the app's "Requests in flight at once")
  --json               print the answer and its sources as one JSON line, not in words
                       (the journal's answer line holds the same sources); with several
                       questions one line per question in order, {"type":"failed",…} for one that failed

read --method infmem (InfMem's official settings: chunks of 5,000 tokens, units of 500, 4 retrieved;
  --chunk, --memory, --prompts, --context and --speculate do not apply; --engine as webllm or extractive;
  --question, --questions-file, --out, --resume, --force, --in-flight and --json as for read above):
  --method M           memagent (the default) or infmem
  --early-stop N       stop votes in a row that end the read before the next chunk (default 3)
  --thinking on|off    two-stage thinking as InfMem's evaluation runs it (default on)
  --chat FAMILY        with a server, the chat text each request is rendered in: qwen3 (the default,
                       as InfMem's official code renders it) or qwen2.5 (Qwen2.5's, with its default
                       system message where a request has none); --engine webllm uses the model's own
  --out FILE           the journal (default <file>.infmem.jsonl; several questions: <file>.q1.infmem.jsonl, …):
                       each chunk written with the planner's votes and searches, so that --resume sends
                       what a read never stopped would have sent; a resume keeps the journal's settings
                       and refuses flags that would change them
                       (several questions: each read on its own planner, stopping on its own votes)
  --prompts-file PATH  a local copy of InfMem's taskutils/memory_eval/utils/infmem.py (checked by its SHA-256)
  --fncall-file PATH   a local copy of Qwen-Agent's qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py
  --prompts-base URL   a mirror serving <URL>/taskutils/memory_eval/utils/infmem.py
  --fncall-base URL    a mirror serving <URL>/qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py
                       (default: both fetched from GitHub at pinned commits and kept in the cache)
  --temperature X, --top-p X   default 0 and 1 (the HotpotQA evaluation's)`;

const EVAL_OPTIONS = `eval:
  --concurrency N      samples read at once (default 8): a batching server turns them into throughput
  --tasks LIST         comma-separated: ${TASK_IDS.join(', ')} (default all)
  --lengths LIST       document lengths, e.g. 8k,32k,128k (default 8k)
  --samples N          samples per task and length (default 5)
  --seed N             sweep seed (default 0): each sample's own seed comes from it
  --mode memory|full   the memory loop, or the whole document in one prompt (default memory)
  --haystack FILE      the book whose sentences fill the "essay" tasks, in any format the app
                       imports (default: Frankenstein, carried in data/haystack/)
  --json FILE          every sample and the table as JSON;  --csv FILE: the table as CSV
  --method M           memagent (the default), infmem, or both: the same samples by each method,
                       then a table of accuracy, chunks read, requests, tokens and time per method
  --early-stop N       InfMem: stop votes in a row that end a read (default 3)
  --thinking on|off    InfMem with a server: two-stage thinking (default on)
  --infmem-file PATH, --infmem-base URL, --fncall-file PATH, --fncall-base URL
                       InfMem with a server: its pinned files, as read's --prompts-file/--prompts-base

eval --data (RULER-HotpotQA files as published, read by the paper's method):
  --data FILE          a dataset file (JSON list or JSON Lines); repeat it, one file per length
  --method M           recurrent (the answer after "the answer is") or recurrent-boxed (the answer
                       in \\boxed{}); default: the one the prompt set asks for: recurrent with
                       memagent, recurrent-boxed with memagent-boxed (and with this app's wording);
                       infmem or both: InfMem's method too, scored as its ruler_hqa.py scores
  --samples N          items read from each file (default all)
  --json FILE          the method, the prompts (set and SHA-256) and every file's metrics and samples`;

/** Every command's usage and options: `memagent --help`. */
export const HELP = `${INTRO}

Usage:
${READ_USAGE}
${EVAL_USAGE}

${COMMON}

${READ_OPTIONS}

${EVAL_OPTIONS}
`;

/** In one command's help the common options are simply its own. */
const own = (text: string) => text.replace(/ \(both commands\)/g, '').replace(/both commands; /g, '');

/** One command's usage and options: `memagent read --help`, `memagent eval --help`. */
export const COMMAND_HELP: Readonly<Record<'read' | 'eval', string>> = {
  read: `memagent read: read a book, or several as one set, through the memory loop and answer a question.

Usage:
${READ_USAGE}

${own(COMMON)}

${READ_OPTIONS}

Every command: memagent --help
`,
  eval: `memagent eval: accuracy against document length, on generated tasks or RULER-HotpotQA files.

Usage:
${EVAL_USAGE}

${own(COMMON)}

${EVAL_OPTIONS}

Every command: memagent --help
`,
};
