import type { EngineConfig } from '../../../engines/engine';
import { isRequestsAtOnce, REQUESTS_AT_ONCE } from '../../../engines/openai/info';
import { i18n } from '../../i18n';

/** The field as a config holds it: empty (the default) stays out, anything else goes in as typed, for the checks below to refuse. */
export function requestsAtOnceOf(typed: string): number | undefined {
  return typed.trim() === '' ? undefined : Number(typed);
}

/** What is wrong with a server config's bound on requests in flight, in the page's language; null when it can be used. */
export function requestsAtOnceProblem(config: EngineConfig): string | null {
  const n = config.requestsAtOnce;
  return n === undefined || isRequestsAtOnce(n) ? null : i18n.t('openai.inFlightProblem', { min: REQUESTS_AT_ONCE.min, max: REQUESTS_AT_ONCE.max });
}
