import type { ChatMessage, GenerateOptions } from '../../../core/generation';
import type { SpeculationPlan } from './speculate';

/** One step's request as the session sends it. */
export interface SessionRequest {
  messages: readonly ChatMessage[];
  options: GenerateOptions;
  /** The system message every step sends (see webllmSystemMessage), first where given. */
  system?: string;
  /** Speculative writing's plan; without one WebLLM's own decoding writes the reply. */
  speculation?: SpeculationPlan;
}
