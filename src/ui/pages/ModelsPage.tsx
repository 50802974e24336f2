import { useTranslation } from 'react-i18next';
import { LlamaModels } from '../engines/wllama/LlamaModels';
import { ModelManager } from '../engines/webllm/ModelManager';
import { ModelStorage } from '../ModelStorage';
import { Page } from './Page';

/** Models that run on this device, and the storage they take. */
export function ModelsPage({ active }: { active: boolean }) {
  const { t } = useTranslation();
  return (
    <Page
      place="models"
      active={active}
      title={t('models.title')}
      intro={t('models.intro')}
      className="models-page"
    >
      <ModelStorage />
      <div className="models-layout">
        <ModelManager />
        <LlamaModels active={active} />
      </div>
    </Page>
  );
}
