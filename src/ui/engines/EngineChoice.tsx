import { useCallback, useState } from 'react';
import type { EngineConfig, EngineInfo } from '../../engines/engine';
import { EngineSelect } from '../EngineSelect';
import { engineText } from '../i18n';
import { engineUi } from './index';

/** The chosen engine and every engine's configuration as its settings form left it. */
export interface EngineChoice {
  engine: EngineInfo | undefined;
  /** The chosen engine's configuration: what a read or a sweep sends with its id. */
  config: EngineConfig;
  /** Each engine's configuration, by engine id (empty for one never chosen). */
  configs: Readonly<Record<string, EngineConfig>>;
  choose(engineId: string): void;
  configure(engineId: string, config: EngineConfig): void;
}

/** Until the person picks one, the engine is `preferred` where it is offered, else the list's first. */
export function useEngineChoice(engines: readonly EngineInfo[], preferred?: string): EngineChoice {
  const [engineId, choose] = useState('');
  const [configs, setConfigs] = useState<Record<string, EngineConfig>>({});
  const engine = engines.find((e) => e.id === (engineId || preferred)) ?? engines[0];
  const configure = useCallback((id: string, config: EngineConfig) => setConfigs((all) => ({ ...all, [id]: config })), []);
  return { engine, config: (engine && configs[engine.id]) || {}, configs, choose, configure };
}

interface Props {
  engines: readonly EngineInfo[];
  choice: EngineChoice;
}

/** The Engine combobox, what the chosen engine is, and its own settings form: the same in the Read and Evaluate forms. */
export function EngineFields({ engines, choice }: Props) {
  const { engine, config, choose, configure } = choice;
  const Settings = engine && engineUi(engine.id).Settings;
  return (
    <>
      <EngineSelect engines={engines} value={engine?.id ?? ''} onChange={choose} />
      {engine && <p className="hint">{engineText(engine.id, 'description', engine.description)}</p>}
      {engine && Settings && <Settings config={config} onChange={(c) => configure(engine.id, c)} />}
    </>
  );
}
