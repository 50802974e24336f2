import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type ModelStorageKind, modelStorageKind } from '../../../engines/wllama/model-stores';

/** Where this browser cannot keep models in its private file system, where they are kept instead (the page and its worker have the same APIs). */
export function ModelStorageKindHint() {
  const { t } = useTranslation();
  const [kind, setKind] = useState<ModelStorageKind | null>(null);
  useEffect(() => {
    let live = true;
    void modelStorageKind().then((k) => live && setKind(k));
    return () => {
      live = false;
    };
  }, []);
  if (kind === null || kind === 'opfs') return null;
  return <p className="hint">{t(kind === 'cache' ? 'wllama.keptInCache' : 'wllama.cannotKeep')}</p>;
}
