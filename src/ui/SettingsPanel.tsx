import { useId } from 'react';
import { DEFAULT_TEMPLATES } from '../core/prompts';
import type { ReadSettings } from './settings';

interface Props {
  settings: ReadSettings;
  onChange(change: Partial<ReadSettings>): void;
}

/** Sizes, sampling and the two prompt templates of the next read. */
export function SettingsPanel({ settings, onChange }: Props) {
  const id = {
    chunk: useId(),
    memory: useId(),
    temperature: useId(),
    topP: useId(),
    seed: useId(),
    update: useId(),
    final: useId(),
    skim: useId(),
    skimPercent: useId(),
    skimFollow: useId(),
  };
  return (
    <section aria-label="Settings" className="settings">
      <div className="row">
        <div className="field">
          <label htmlFor={id.chunk}>Chunk size (tokens)</label>
          <input
            id={id.chunk}
            type="number"
            min={100}
            max={100000}
            step={100}
            value={Number.isNaN(settings.chunkTokens) ? '' : settings.chunkTokens}
            onChange={(e) => onChange({ chunkTokens: e.target.valueAsNumber })}
          />
        </div>
        <div className="field">
          <label htmlFor={id.memory}>Memory size (tokens)</label>
          <input
            id={id.memory}
            type="number"
            min={64}
            max={8192}
            step={64}
            value={Number.isNaN(settings.memoryTokens) ? '' : settings.memoryTokens}
            onChange={(e) => onChange({ memoryTokens: e.target.valueAsNumber })}
          />
        </div>
      </div>
      <div className="field check">
        <input id={id.skim} type="checkbox" checked={settings.skim} onChange={(e) => onChange({ skim: e.target.checked })} />
        <label htmlFor={id.skim}>Skim mode</label>
      </div>
      {settings.skim && (
        <div className="row">
          <div className="field">
            <label htmlFor={id.skimPercent}>Share of chunks to read (%)</label>
            <input
              id={id.skimPercent}
              type="number"
              min={1}
              max={100}
              step={1}
              value={Number.isNaN(settings.skimPercent) ? '' : settings.skimPercent}
              onChange={(e) => onChange({ skimPercent: e.target.valueAsNumber })}
            />
          </div>
          <div className="field check">
            <input
              id={id.skimFollow}
              type="checkbox"
              checked={settings.skimFollow}
              onChange={(e) => onChange({ skimFollow: e.target.checked })}
            />
            <label htmlFor={id.skimFollow}>Follow what the memory finds</label>
          </div>
        </div>
      )}
      {settings.skim && (
        <p className="hint">
          Skim ranks the chunks by relevance to the question (BM25) and reads the best ones and their neighbours, in order. Fast, but
          it can miss what the question does not name.
        </p>
      )}
      <details className="more">
        <summary>Sampling and prompts</summary>
        <div className="row">
          <div className="field">
            <label htmlFor={id.temperature}>Temperature</label>
            <input
              id={id.temperature}
              type="number"
              min={0}
              max={2}
              step={0.05}
              value={Number.isNaN(settings.temperature) ? '' : settings.temperature}
              onChange={(e) => onChange({ temperature: e.target.valueAsNumber })}
            />
          </div>
          <div className="field">
            <label htmlFor={id.topP}>Top p</label>
            <input
              id={id.topP}
              type="number"
              min={0.05}
              max={1}
              step={0.05}
              value={Number.isNaN(settings.topP) ? '' : settings.topP}
              onChange={(e) => onChange({ topP: e.target.valueAsNumber })}
            />
          </div>
          <div className="field">
            <label htmlFor={id.seed}>Seed</label>
            <input
              id={id.seed}
              type="number"
              min={0}
              step={1}
              placeholder="random"
              value={settings.seed ?? ''}
              onChange={(e) => onChange({ seed: e.target.value === '' ? null : e.target.valueAsNumber })}
            />
          </div>
        </div>
        <div className="field">
          <label htmlFor={id.update}>Memory update template</label>
          <textarea
            id={id.update}
            rows={8}
            spellCheck={false}
            value={settings.templates.update}
            onChange={(e) => onChange({ templates: { ...settings.templates, update: e.target.value } })}
          />
        </div>
        <div className="field">
          <label htmlFor={id.final}>Final answer template</label>
          <textarea
            id={id.final}
            rows={6}
            spellCheck={false}
            value={settings.templates.final}
            onChange={(e) => onChange({ templates: { ...settings.templates, final: e.target.value } })}
          />
        </div>
        <p className="hint">
          Slots: {'{problem}'}, {'{memory}'} and {'{section}'}. Trained MemAgent models expect the tags, their order and the cue lines as
          they are.
        </p>
        <button type="button" onClick={() => onChange({ templates: { ...DEFAULT_TEMPLATES } })}>
          Reset to default
        </button>
      </details>
    </section>
  );
}
