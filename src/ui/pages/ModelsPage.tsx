import { useTranslation } from 'react-i18next';
import { ENGINE_UI } from '../engines';
import { ModelStorage } from '../ModelStorage';
import { Page } from './Page';

/** Models that run on this device, and the storage they take. */
export function ModelsPage({ active }: { active: boolean }) {
  const { t } = useTranslation();
  return (
    <Page place="models" active={active} title={t('models.title')} intro={t('models.intro')} className="models-page">
      <ModelStorage />
      <div className="models-layout">{Object.entries(ENGINE_UI).map(([id, { Models }]) => Models && <Models key={id} active={active} />)}</div>
    </Page>
  );
}
