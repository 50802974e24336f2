import { NO_ANSWER_REPLY } from '../core/prompts';
import { i18n } from './i18n';

/**
 * An answer as the page shows it. The extractive engine's line for "nothing
 * found" is stored in English, as every reply is; it is shown in the page's
 * language. Any other answer is shown as written.
 */
export function answerText(answer: string): string {
  return answer === NO_ANSWER_REPLY ? i18n.t('run.extractiveNothing') : answer;
}
