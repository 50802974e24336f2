/**
 * InfMem's three calls answered by the extractive engine's fixed rules, so
 * that the whole InfMem loop (plan, stop votes, BM25 retrieval, write,
 * answer) runs without a model: the planner stand-in of infmem-planner.ts,
 * the MemAgent step's rule with the retrieved passages read first, and the
 * engine's answer from the memory. No prompt is rendered and no request is
 * sent, so a reply lists none.
 */
import type { InfmemSteps } from '../../core/infmem/loop';
import type { InfmemDocument } from '../../core/infmem/retrieval';
import { REPLY_TOKENS, type Reply } from '../../core/infmem/thinking';
import { INITIAL_MEMORY } from '../../core/prompts';
import { nextTask } from '../../core/tasks';
import type { Tokenizer } from '../../core/tokenizer';
import { answerFrom } from './answer-sentences';
import { plannerReply, unitTermCounts } from './infmem-planner';
import { memorySentences, withoutInitial, writeInfmemMemory } from './memory-step';

const replied = (text: string): Reply => ({ text, requests: [], completions: [] });

export function extractiveInfmemSteps(document: InfmemDocument, tokenizer: Pick<Tokenizer, 'count'>): InfmemSteps {
  const unitCounts = unitTermCounts(document.units.map((u) => u.text));
  return {
    initialMemory: INITIAL_MEMORY,
    plan: async (v) => {
      // A turn of the event loop a chunk, as the engine's own steps take: the rules are synchronous, and a stop must be heard.
      await nextTask();
      return replied(plannerReply({ question: v.question, memory: v.memory, history: v.history.map((r) => r.query), unitCounts }));
    },
    write: async (v) => {
      const passages = v.units.map((i) => document.units[i]!.text);
      return replied(writeInfmemMemory({ question: v.question, memory: v.memory, passages, chunk: v.chunk }, { tokenizer, maxTokens: REPLY_TOKENS }));
    },
    answer: extractiveInfmemAnswer,
  };
}

/** The stand-in final step: the engine's answer from the memory's sentences (a read's last call, and a follow-up's). */
export async function extractiveInfmemAnswer(v: { question: string; memory: string }): Promise<Reply> {
  return replied(answerFrom(v.question, memorySentences(withoutInitial(v.memory)), false));
}
