import { abortError } from '../../../core/generation';
import { untilAborted } from '../../../core/abort';
import { downloadModel, scopeTuning } from './model-download';
import { type ModelEntry, reportModelProgress } from './models';
import type { WebLLMVersion } from '../versions';

/** A model's download in progress, and who waits on it. */
interface Download {
  done: Promise<unknown>;
  controller: AbortController;
  /** Runs waiting on it that have not stopped. */
  waiters: number;
  /** Someone asked for it without a way to stop (Download in Models): it runs to its end unless stopped there. */
  kept: boolean;
}

/**
 * The model downloads of one GPU session: one at a time per model, shared by
 * everyone who asks for it, and stopped once nobody waits on it any more.
 */
export class Downloads {
  private readonly running = new Map<string, Download>();

  constructor(
    private readonly fetchFiles: typeof downloadModel,
    private readonly webllm: WebLLMVersion,
  ) {}

  /**
   * Fetches what is missing into WebLLM's caches; one download per model at a
   * time. A download from Models (no `signal`) runs to its end unless
   * stopDownload ends it; one that only runs wait on stops, mid-shard with the
   * received bytes kept, as soon as the last of them pauses or is cancelled.
   */
  download(model: ModelEntry, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(abortError());
    let d = this.running.get(model.id);
    // One that was just stopped is still storing its last part: a new one starts once it has.
    // The stopped download's failure was its own caller's; the new one only waits for it to end.
    const stopping = d?.controller.signal.aborted ? d.done.catch(() => undefined) : undefined;
    if (!d || stopping) {
      const report = (state: 'working' | 'done' | 'failed', fraction: number, text: string) =>
        reportModelProgress({ modelId: model.id, phase: 'download', state, fraction, text });
      const controller = new AbortController();
      const start = async () => {
        await stopping;
        controller.signal.throwIfAborted();
        return this.fetchFiles(model, {
          ...scopeTuning(),
          signal: controller.signal,
          onProgress: (p) => report('working', p.fraction, p.text),
          webllm: this.webllm,
        });
      };
      const done = start().then(
        (r) => (report('done', 1, 'All files are downloaded'), r),
        (e: unknown) => {
          const stopped = controller.signal.aborted;
          report('failed', 0, stopped ? 'The download stopped; Download resumes it where it stopped.' : e instanceof Error ? e.message : String(e));
          throw stopped ? abortError() : e;
        },
      );
      const mine: Download = (d = { done, controller, waiters: 0, kept: false });
      // Its callers see the failure through `done`; this branch only forgets the finished download.
      done.catch(() => undefined).finally(() => this.running.get(model.id) === mine && this.running.delete(model.id));
      this.running.set(model.id, d);
    }
    if (!signal) {
      d.kept = true;
      return d.done;
    }
    const mine = d;
    mine.waiters++;
    const leave = () => {
      mine.waiters--;
      if (!mine.kept && mine.waiters === 0) mine.controller.abort(abortError());
    };
    signal.addEventListener('abort', leave, { once: true });
    return untilAborted(mine.done, signal).finally(() => signal.removeEventListener('abort', leave));
  }

  /** Ends the model's download in progress (its received bytes are kept); false when there was none. */
  stopDownload(modelId: string): boolean {
    const d = this.running.get(modelId);
    if (!d || d.controller.signal.aborted) return false;
    d.controller.abort(abortError());
    return true;
  }
}
