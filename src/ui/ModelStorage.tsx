import { useTranslation } from 'react-i18next';
import { requestPersistence, storageSentence, useStorageFigure } from './storage-figure';

/** The storage figure where models are managed, with the request to keep them when the disk runs low. */
export function ModelStorage() {
  const { t } = useTranslation();
  const figure = useStorageFigure();
  if (!figure) return null;
  return (
    <div className="model-storage">
      <div className="model-storage-text">
        <p>{storageSentence(figure) ?? t('storage.unknown')}</p>
        <p className="hint">
          {figure.persisted ? t('storage.modelsKept') : t('storage.modelsMayGo')}
          {figure.declined ? ` ${t('storage.modelsDeclined')}` : ''}
        </p>
      </div>
      {figure.persisted === false && (
        <button type="button" onClick={() => void requestPersistence()}>
          {t('storage.keepModels')}
        </button>
      )}
    </div>
  );
}
