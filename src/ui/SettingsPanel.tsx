import { useId } from 'react';
import { DEFAULT_TEMPLATES } from '../core/prompts';
import { effectivePromptSet, PromptSetField, templatesOf, usePromptFiles } from './PromptSetField';
import type { ReadSettings } from './settings';

interface Props {
  settings: ReadSettings;
  onChange(change: Partial<ReadSettings>): void;
}

type NumericSetting = 'chunkTokens' | 'memoryTokens' | 'temperature' | 'topP' | 'skimPercent';

/** One labelled number input for a setting; an emptied field holds NaN, which the form refuses with a message. */
function NumberField(props: Props & { name: NumericSetting; label: string; min: number; max: number; step: number }) {
  const id = useId();
  const value = props.settings[props.name];
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        type="number"
        min={props.min}
        max={props.max}
        step={props.step}
        value={Number.isNaN(value) ? '' : value}
        onChange={(e) => props.onChange({ [props.name]: e.target.valueAsNumber })}
      />
    </div>
  );
}

function CheckField({ label, checked, onChange }: { label: string; checked: boolean; onChange(checked: boolean): void }) {
  const id = useId();
  return (
    <div className="field check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

function TemplateField(props: { label: string; rows: number; value: string; placeholder?: string; onChange(v: string): void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows}
        spellCheck={false}
        value={props.value}
        placeholder={props.placeholder}
        readOnly={props.placeholder !== undefined}
        onChange={(e) => props.onChange(e.target.value)}
      />
    </div>
  );
}

/** Sizes, skim mode, sampling, the prompt set and its two templates of the next read. */
export function SettingsPanel({ settings, onChange, engineId }: Props & { engineId: string }) {
  const seedId = useId();
  const field = { settings, onChange };
  const [files, refreshFiles] = usePromptFiles();
  const set = effectivePromptSet(settings, engineId, files);
  const shown = templatesOf(set, settings, files);
  const waiting = shown ? undefined : 'The template appears here once its prompt file is in this browser.';
  // Editing any set's templates makes them the person's own.
  const edit = (which: 'update' | 'final') => (value: string) =>
    onChange({ promptSet: 'custom', templates: { ...(shown ?? DEFAULT_TEMPLATES), [which]: value } });
  return (
    <section aria-label="Settings" className="settings">
      <div className="row">
        <NumberField {...field} name="chunkTokens" label="Chunk size (tokens)" min={100} max={100000} step={100} />
        <NumberField {...field} name="memoryTokens" label="Memory size (tokens)" min={64} max={8192} step={64} />
      </div>
      <CheckField label="Skim mode" checked={settings.skim} onChange={(skim) => onChange({ skim })} />
      {settings.skim && (
        <>
          <div className="row">
            <NumberField {...field} name="skimPercent" label="Share of chunks to read (%)" min={1} max={100} step={1} />
            <CheckField label="Follow what the memory finds" checked={settings.skimFollow} onChange={(skimFollow) => onChange({ skimFollow })} />
            {settings.skimFollow && (
              <CheckField
                label="Look back at earlier chunks the memory points to"
                checked={settings.skimLookBack}
                onChange={(skimLookBack) => onChange({ skimLookBack })}
              />
            )}
          </div>
          <p className="hint">
            Skim ranks the chunks by relevance to the question (BM25) and reads the best ones and their neighbours, in order. Fast,
            but it can miss what the question does not name. Following looks up each new name the memory writes down and reads a few
            later chunks that hold it. Looking back reads, after the last chunk, the earlier chunks those names point to, walking back
            toward the start: a second pass that the paper's method, which reads once from start to end, does not make.
          </p>
        </>
      )}
      <details className="more">
        <summary>Sampling and prompts</summary>
        <div className="row">
          <NumberField {...field} name="temperature" label="Temperature" min={0} max={2} step={0.05} />
          <NumberField {...field} name="topP" label="Top p" min={0.05} max={1} step={0.05} />
          <div className="field">
            <label htmlFor={seedId}>Seed</label>
            <input
              id={seedId}
              type="number"
              min={0}
              step={1}
              placeholder="random"
              value={settings.seed ?? ''}
              onChange={(e) => onChange({ seed: e.target.value === '' ? null : e.target.valueAsNumber })}
            />
          </div>
        </div>
        <PromptSetField settings={settings} engineId={engineId} files={files} refresh={refreshFiles} onChange={onChange} />
        <TemplateField label="Memory update template" rows={8} value={shown?.update ?? ''} placeholder={waiting} onChange={edit('update')} />
        <TemplateField label="Final answer template" rows={6} value={shown?.final ?? ''} placeholder={waiting} onChange={edit('final')} />
        <p className="hint">
          Slots: {'{problem}'} (or {'{prompt}'}), {'{memory}'} and {'{section}'} (or {'{chunk}'}); as in Python's str.format, {'{{'} and{' '}
          {'}}'} are literal braces, so a template pasted from MemAgent's files works as it is. Trained MemAgent models expect the tags, their
          order, the blank lines and the cue lines as they are (the problem's opening line ends in a space).
        </p>
        <button type="button" onClick={() => onChange({ promptSet: null, templates: { ...DEFAULT_TEMPLATES } })}>
          Reset to default
        </button>
      </details>
    </section>
  );
}
