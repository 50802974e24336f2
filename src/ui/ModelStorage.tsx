import { requestPersistence, storageSentence, useStorageFigure } from './storage-figure';

/** The storage figure where models are managed, with the request to keep them when the disk runs low. */
export function ModelStorage() {
  const figure = useStorageFigure();
  if (!figure) return null;
  return (
    <div className="model-storage">
      <div className="model-storage-text">
        <p>{storageSentence(figure) ?? 'This browser does not tell how much storage this site uses.'}</p>
        <p className="hint">
          {figure.persisted ? 'Downloaded models are kept even when the disk runs low.' : 'The browser may clear downloaded models when the disk runs low.'}
          {figure.declined ? ' The browser declined for now; installing the app or visiting it often usually lets it agree.' : ''}
        </p>
      </div>
      {figure.persisted === false && (
        <button type="button" onClick={() => void requestPersistence()}>
          Keep models on this device
        </button>
      )}
    </div>
  );
}
