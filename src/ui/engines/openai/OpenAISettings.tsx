import { useEffect, useEffectEvent, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { EngineConfig } from '../../../engines/engine';
import type { ServerCheck } from '../../../engines/openai/engine';
import { loadApiKey } from '../../data';
import { agent, call } from '../../client';
import { formatNumber } from '../../format';
import { ErrorAlert, keepChoices, loadChoices, NumberField } from '../fields';
import { REQUESTS_AT_ONCE } from '../../../engines/openai/info';
import { requestsAtOnceOf, requestsAtOnceProblem } from './requests-at-once';
import type { EngineSettingsProps } from '../types';

/** vLLM's default address; llama.cpp serves on :8080, Ollama on :11434. */
const DEFAULT_BASE_URL = 'http://127.0.0.1:8000/v1';
const KEY = 'memagent-openai-server';

interface Fields {
  baseUrl: string;
  model: string;
  /** As typed: empty means "as the server reports". */
  contextWindow: string;
  /** As typed: empty means the default. */
  requestsAtOnce: string;
}

function saved(): Fields {
  const f = loadChoices<Partial<Fields>>(KEY, {});
  return {
    baseUrl: f.baseUrl ?? DEFAULT_BASE_URL,
    model: f.model ?? '',
    contextWindow: f.contextWindow ?? '',
    requestsAtOnce: f.requestsAtOnce ?? String(REQUESTS_AT_ONCE.default),
  };
}

/** The fields a configuration names (a run's, opened on the Read form); null for one without an address. */
function fieldsOf(config: EngineConfig): Fields | null {
  if (typeof config.baseUrl !== 'string') return null;
  return {
    baseUrl: config.baseUrl,
    model: String(config.model ?? ''),
    contextWindow: config.contextWindow === undefined ? '' : String(config.contextWindow),
    // A run from before the setting read with the default.
    requestsAtOnce: String(config.requestsAtOnce ?? REQUESTS_AT_ONCE.default),
  };
}

/** What a run stores: the address, model, window and requests at once, never the key. */
function toConfig(f: Fields): EngineConfig {
  const config: Record<string, string | number> = { baseUrl: f.baseUrl.trim() };
  if (f.model.trim()) config.model = f.model.trim();
  const window = Number(f.contextWindow);
  if (f.contextWindow.trim() && Number.isInteger(window) && window > 0) config.contextWindow = window;
  // Empty is the default, written out so that a run opened on the form shows the same; a wrong number is kept, and refused with why.
  config.requestsAtOnce = requestsAtOnceOf(f.requestsAtOnce) ?? REQUESTS_AT_ONCE.default;
  return config;
}

/**
 * The connection to an OpenAI-compatible server: its address, model, key and
 * context window, and a Connect button that asks the server what it serves.
 * The key stays in this browser (its own IndexedDB database) and is read by the
 * worker when it sends a request; runs and exports never hold it.
 */
export function OpenAISettings({ config, onChange }: EngineSettingsProps) {
  const { t } = useTranslation();
  const ids = { url: useId(), model: useId(), key: useId(), models: useId(), keyHint: useId() };
  const [fields, setFields] = useState<Fields>(() => fieldsOf(config) ?? saved());
  const [apiKey, setApiKey] = useState('');
  const [checking, setChecking] = useState(false);
  const [server, setServer] = useState<ServerCheck | null>(null);
  const [error, setError] = useState<string | null>(null);
  const keyTouched = useRef(false);

  // The form starts from what was used last; the read form learns it at once.
  const announce = useEffectEvent(() => onChange(toConfig(fields)));
  useEffect(() => announce(), []);

  // A configuration from outside the fields (a run opened on the Read form) shows in them; what they send back is the same.
  const other = fieldsOf(config);
  if (other && JSON.stringify(toConfig(other)) !== JSON.stringify(toConfig(fields))) {
    setFields(other);
    setServer(null);
  }

  useEffect(() => {
    keyTouched.current = false;
    let current = true;
    void loadApiKey(fields.baseUrl).then((k) => {
      if (current && !keyTouched.current) setApiKey(k ?? '');
    });
    return () => {
      current = false;
    };
  }, [fields.baseUrl]);

  const update = (change: Partial<Fields>) => {
    const next = { ...fields, ...change };
    setFields(next);
    setServer(null);
    keepChoices(KEY, next);
    onChange(toConfig(next));
  };

  const saveKey = () => {
    if (keyTouched.current) void call(agent.saveApiKey(fields.baseUrl, apiKey)).catch((e: Error) => setError(e.message));
  };

  const connect = async () => {
    setChecking(true);
    setError(null);
    setServer(null);
    try {
      const found = await call(agent.connectServer(toConfig(fields), apiKey));
      setServer(found);
      // The server's own address and first model, where the person gave none.
      if (found.baseUrl !== fields.baseUrl.trim() || found.model !== fields.model.trim()) {
        const next = { ...fields, baseUrl: found.baseUrl, model: found.model };
        setFields(next);
        keepChoices(KEY, next);
        onChange(toConfig(next));
      }
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setChecking(false);
    }
  };

  return (
    <div className="settings">
      <div className="field">
        <label htmlFor={ids.url}>{t('openai.url')}</label>
        <input
          id={ids.url}
          type="url"
          spellCheck={false}
          value={fields.baseUrl}
          placeholder={DEFAULT_BASE_URL}
          onChange={(e) => update({ baseUrl: e.target.value })}
        />
      </div>
      <div className="field">
        <label htmlFor={ids.model}>{t('webllm.model')}</label>
        <input
          id={ids.model}
          list={ids.models}
          spellCheck={false}
          value={fields.model}
          placeholder={t('openai.firstModel')}
          onChange={(e) => update({ model: e.target.value })}
        />
        <datalist id={ids.models}>
          {server?.models.map((m) => (
            <option key={m.id} value={m.id} />
          ))}
        </datalist>
      </div>
      <div className="field">
        <label htmlFor={ids.key}>{t('openai.key')}</label>
        <input
          id={ids.key}
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={apiKey}
          placeholder={t('openai.none')}
          aria-describedby={ids.keyHint}
          onChange={(e) => {
            keyTouched.current = true;
            setApiKey(e.target.value);
          }}
          onBlur={saveKey}
        />
        <p className="hint" id={ids.keyHint}>
          {t('openai.keyHint')}
        </p>
      </div>
      <NumberField
        label={t('openai.window')}
        min={1024}
        step={1}
        value={fields.contextWindow}
        placeholder={server ? String(server.serverContextWindow) : t('openai.asReported')}
        onChange={(contextWindow) => update({ contextWindow })}
      />
      <RequestsAtOnceField value={fields.requestsAtOnce} onChange={(requestsAtOnce) => update({ requestsAtOnce })} />
      <div className="controls">
        <button type="button" onClick={() => void connect()} disabled={checking}>
          {checking ? t('openai.connecting') : t('openai.connect')}
        </button>
      </div>
      <p role="status" className="hint">
        {server &&
          `${t('openai.connected', {
            model: server.model,
            window: formatNumber(server.serverContextWindow),
            counts: server.counts.source === 'server' ? t('openai.countsServer') : t('openai.countsHere'),
          })} ` +
            (server.models.length > 1
              ? t('openai.also', {
                  models: server.models
                    .filter((m) => m.id !== server.model)
                    .map((m) => m.id)
                    .join(', '),
                })
              : '')}
      </p>
      <ErrorAlert message={error} />
    </div>
  );
}

/**
 * How many requests the questions of one read have at the server at once:
 * a whole number in range, or empty for the default; a wrong one is said
 * beside the field as it is typed, and Read refuses it with the same words.
 */
function RequestsAtOnceField({ value, onChange }: { value: string; onChange(text: string): void }) {
  const { t } = useTranslation();
  const n = requestsAtOnceOf(value);
  return (
    <NumberField
      label={t('openai.inFlight')}
      value={value}
      min={REQUESTS_AT_ONCE.min}
      max={REQUESTS_AT_ONCE.max}
      step={1}
      placeholder={String(REQUESTS_AT_ONCE.default)}
      hint={t('openai.inFlightHint')}
      error={n === undefined ? null : requestsAtOnceProblem({ requestsAtOnce: n })}
      onChange={onChange}
    />
  );
}
